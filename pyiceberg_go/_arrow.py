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
            f"expected a PyCapsule named {name.decode()!r}, got one named "
            f"{(actual or b'').decode(errors='replace')!r}"
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
