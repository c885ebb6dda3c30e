"""Turning user data into an ``ArrowArrayStream*`` for the library, without pyarrow.

Accepted inputs, in this order:

1. a PyCapsule named ``arrow_array_stream``;
2. an object with ``__arrow_c_stream__`` (pyarrow, polars, pandas >= 2.2, DuckDB, arro3, ...);
3. an object with ``__arrow_c_array__`` (a record batch): wrapped in a one-batch
   stream implemented here with ctypes callbacks, which Go may call from its own threads.

The library moves the stream on import (leaving ours released); anything it
did not take is released here, so nothing leaks whatever happens.
"""

from __future__ import annotations

import ctypes
import errno
import itertools
import threading
from types import TracebackType
from typing import Any

from ._native import (
    ArrowArray,
    ArrowArrayStream,
    ArrowSchema,
    GetLastErrorFn,
    GetNextFn,
    GetSchemaFn,
    StreamReleaseFn,
    in_forked_child,
)

STREAM_CAPSULE: bytes = b"arrow_array_stream"
_SCHEMA_CAPSULE = b"arrow_schema"
_ARRAY_CAPSULE = b"arrow_array"

_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
_GetPointer.restype = ctypes.c_void_p
_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_GetName = ctypes.pythonapi.PyCapsule_GetName
_GetName.restype = ctypes.c_char_p
_GetName.argtypes = [ctypes.py_object]


def capsule_pointer(capsule: object, name: bytes) -> int:
    """The address inside a PyCapsule, checking its name."""
    if type(capsule).__name__ != "PyCapsule":
        raise TypeError(f"expected a PyCapsule named {name.decode()!r}, got {type(capsule).__name__}")
    actual = _GetName(capsule)
    if actual != name:
        raise TypeError(
            f"expected a PyCapsule named {name.decode()!r}, got one named {(actual or b'').decode(errors='replace')!r}"
        )
    ptr = _GetPointer(capsule, name)
    if not ptr:
        raise TypeError(f"the {name.decode()!r} capsule holds a NULL pointer")
    return int(ptr)


def _move_schema(src: int, dst: int) -> None:
    ctypes.memmove(dst, src, ctypes.sizeof(ArrowSchema))
    ArrowSchema.from_address(src).release = None


def _move_array(src: int, dst: int) -> None:
    ctypes.memmove(dst, src, ctypes.sizeof(ArrowArray))
    ArrowArray.from_address(src).release = None


class _OneBatch:
    """State of one Python-implemented stream: the producer and its single batch."""

    def __init__(self, source: Any, schema_capsule: object, array_capsule: object) -> None:
        self.source = source
        self.schema_capsule: object | None = schema_capsule
        self.array_capsule: object | None = array_capsule
        self.error = ctypes.create_string_buffer(b"")

    def fresh_schema_capsule(self) -> object:
        if self.schema_capsule is not None:
            capsule, self.schema_capsule = self.schema_capsule, None
            return capsule
        if hasattr(self.source, "__arrow_c_schema__"):
            return self.source.__arrow_c_schema__()
        capsule, _ = self.source.__arrow_c_array__()
        return capsule


# Live Python-implemented streams by key; an entry goes when its stream is released.
_live: dict[int, _OneBatch] = {}
_live_lock = threading.Lock()
_keys = itertools.count(1)


def live_stream_count() -> int:
    """How many Python-implemented streams have not been released yet (for leak tests)."""
    with _live_lock:
        return len(_live)


def _state(stream: Any) -> _OneBatch | None:
    with _live_lock:
        return _live.get(stream.contents.private_data or 0)


def _fail(state: _OneBatch | None, exc: BaseException) -> int:
    if state is not None:
        state.error = ctypes.create_string_buffer(f"{type(exc).__name__}: {exc}".encode())
    return errno.EIO


def _get_schema(stream: Any, out: int) -> int:
    state = _state(stream)
    if state is None:
        return errno.EINVAL
    try:
        capsule = state.fresh_schema_capsule()  # held until moved: its destructor frees it
        _move_schema(capsule_pointer(capsule, _SCHEMA_CAPSULE), out)
        return 0
    except BaseException as e:  # an exception must never unwind into C
        return _fail(state, e)


def _get_next(stream: Any, out: int) -> int:
    state = _state(stream)
    if state is None:
        return errno.EINVAL
    try:
        if state.array_capsule is None:
            ctypes.memset(out, 0, ctypes.sizeof(ArrowArray))  # end of stream
            return 0
        capsule, state.array_capsule = state.array_capsule, None
        _move_array(capsule_pointer(capsule, _ARRAY_CAPSULE), out)
        return 0
    except BaseException as e:
        return _fail(state, e)


def _get_last_error(stream: Any) -> int | None:
    state = _state(stream)
    if state is None or not state.error.value:
        return None
    return ctypes.addressof(state.error)


def _release(stream: Any) -> None:
    key = stream.contents.private_data or 0
    with _live_lock:
        state = _live.pop(key, None)
    # Dropping the capsules releases whatever was not handed out.
    del state
    stream.contents.release = StreamReleaseFn()
    stream.contents.private_data = None


# The C callbacks; module-level so they live as long as any stream that points at them.
_c_get_schema = GetSchemaFn(_get_schema)
_c_get_next = GetNextFn(_get_next)
_c_get_last_error = GetLastErrorFn(_get_last_error)
_c_release = StreamReleaseFn(_release)


def _one_batch_stream(source: Any, out: ArrowArrayStream) -> None:
    schema_capsule, array_capsule = source.__arrow_c_array__()
    key = next(_keys)
    with _live_lock:
        _live[key] = _OneBatch(source, schema_capsule, array_capsule)
    out.get_schema = _c_get_schema
    out.get_next = _c_get_next
    out.get_last_error = _c_get_last_error
    out.release = _c_release
    out.private_data = key


class InputStream:
    """A context manager giving the address of an ArrowArrayStream for ``data``.

    Keeps what backs the stream alive until exit, then releases the stream
    if the consumer did not take it.

    Example::

        with InputStream(table) as ptr:
            lib.pig_execute(session, request, ptr, 0, byref(out), byref(err))
    """

    def __init__(self, data: object) -> None:
        self._keep: object = None
        self._own: ArrowArrayStream | None = None
        self.address = 0
        if type(data).__name__ == "PyCapsule":
            self.address = capsule_pointer(data, STREAM_CAPSULE)
            self._keep = data
        elif hasattr(data, "__arrow_c_stream__"):
            capsule = data.__arrow_c_stream__()
            self.address = capsule_pointer(capsule, STREAM_CAPSULE)
            self._keep = capsule
        elif hasattr(data, "__arrow_c_array__"):
            self._own = ArrowArrayStream()
            _one_batch_stream(data, self._own)
            self.address = ctypes.addressof(self._own)
        else:
            raise TypeError(
                f"cannot write an object of type {type(data).__module__}.{type(data).__qualname__}: "
                "expected Arrow data (an object with __arrow_c_stream__ or __arrow_c_array__, "
                "such as a pyarrow Table, polars or pandas DataFrame, DuckDB relation, "
                "or an 'arrow_array_stream' PyCapsule)"
            )

    def __enter__(self) -> int:
        return self.address

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Release the stream unless it was moved out (a capsule's destructor handles its own)."""
        if self._own is not None and self._own.release:
            self._own.release(ctypes.byref(self._own))
        self._own = None
        self._keep = None


# --- Exporting streams the library produced (scans) as PyCapsules, without pyarrow ---
#
# The structs live in PyMem_Raw memory owned by the capsule, whose destructor releases
# what no consumer moved out and frees the struct. The destructors, the capsule names and
# every function they call are kept alive for the life of the process, so a capsule that
# outlives this module (one still held at interpreter exit) never calls freed code.

_CapsuleDestructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(
    ("PyCapsule_New", ctypes.pythonapi)
)
_capsule_pointer_raw = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi)
)
_raw_calloc = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t)(
    ("PyMem_RawCalloc", ctypes.pythonapi)
)
_raw_free = ctypes.PYFUNCTYPE(None, ctypes.c_void_p)(("PyMem_RawFree", ctypes.pythonapi))
_SchemaReleaseFn = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowSchema))

_immortal: list[object] = []


def _keep_forever(obj: Any) -> Any:
    """Take a reference that is never dropped, so ``obj`` survives interpreter teardown."""
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(obj))
    _immortal.append(obj)
    return obj


_STREAM_NAME = _keep_forever(ctypes.create_string_buffer(STREAM_CAPSULE))
_SCHEMA_NAME = _keep_forever(ctypes.create_string_buffer(_SCHEMA_CAPSULE))


def _make_destructor(name: Any, struct_type: Any, release_type: Any) -> Any:
    """A capsule destructor for structs of ``struct_type``; everything it calls is bound now."""
    pointer, free, byref, forked = _capsule_pointer_raw, _raw_free, ctypes.byref, in_forked_child
    name_address = ctypes.addressof(name)

    def destroy(capsule: int | None) -> None:
        try:
            ptr = pointer(capsule, name_address)
            if not ptr:
                return
            struct = struct_type.from_address(ptr)
            # Release what no consumer moved out, unless the library belongs to a parent
            # process (a forked child would hang in it; leaking is the lesser harm).
            if struct.release and not forked():
                release = struct.release if release_type is None else release_type(struct.release)
                release(byref(struct))
            free(ptr)
        except BaseException:  # nothing may unwind out of a capsule destructor
            pass

    return _keep_forever(_CapsuleDestructor(destroy))


_destroy_stream = _make_destructor(_STREAM_NAME, ArrowArrayStream, None)
_destroy_schema = _make_destructor(_SCHEMA_NAME, ArrowSchema, _keep_forever(_SchemaReleaseFn))


def new_stream_struct() -> int:
    """A zeroed ``struct ArrowArrayStream`` in raw memory, for a producer to fill.

    Hand it to :func:`stream_capsule` once filled, or give it back with :func:`free_struct`.

    Example::

        addr = new_stream_struct()
        lib.pig_scan(session, doc, addr, byref(err))
        capsule = stream_capsule(addr)
    """
    ptr = _raw_calloc(1, ctypes.sizeof(ArrowArrayStream))
    if not ptr:
        raise MemoryError("cannot allocate an ArrowArrayStream")
    return int(ptr)


def free_struct(address: int) -> None:
    """Free a struct from :func:`new_stream_struct` that holds no live stream.

    Example::

        free_struct(new_stream_struct())
    """
    _raw_free(address)


def stream_capsule(address: int) -> Any:
    """Wrap a filled stream struct from :func:`new_stream_struct` in an ``arrow_array_stream``
    PyCapsule, which owns it from then on: dropping the capsule releases the stream unless a
    consumer moved it out, and frees the struct.

    Example::

        capsule = stream_capsule(addr)  # what ScanStream.__arrow_c_stream__ hands over
    """
    try:
        return _capsule_new(address, ctypes.addressof(_STREAM_NAME), ctypes.cast(_destroy_stream, ctypes.c_void_p))
    except BaseException:
        stream = ArrowArrayStream.from_address(address)
        if stream.release:
            stream.release(ctypes.byref(stream))
        _raw_free(address)
        raise


def stream_schema_capsule(stream_capsule_obj: object) -> Any:
    """An ``arrow_schema`` PyCapsule with the schema of the stream in an ``arrow_array_stream``
    capsule (its ``get_schema``), leaving the stream unread.

    Example::

        schema_capsule = stream_schema_capsule(capsule)  # ScanStream.__arrow_c_schema__
    """
    address = capsule_pointer(stream_capsule_obj, STREAM_CAPSULE)
    stream = ArrowArrayStream.from_address(address)
    if not stream.release:
        raise ValueError("the Arrow stream was already released")
    ptr = _raw_calloc(1, ctypes.sizeof(ArrowSchema))
    if not ptr:
        raise MemoryError("cannot allocate an ArrowSchema")
    try:
        rc = stream.get_schema(ctypes.byref(stream), ptr)
        if rc != 0:
            msg = stream.get_last_error(ctypes.byref(stream))
            detail = ctypes.string_at(msg).decode("utf-8", "replace") if msg else f"error {rc}"
            raise OSError(rc, f"reading the stream's schema failed: {detail}")
        capsule = _capsule_new(ptr, ctypes.addressof(_SCHEMA_NAME), ctypes.cast(_destroy_schema, ctypes.c_void_p))
    except BaseException:
        schema = ArrowSchema.from_address(ptr)
        if schema.release:
            _SchemaReleaseFn(schema.release)(ctypes.byref(schema))
        _raw_free(ptr)
        raise
    return capsule
