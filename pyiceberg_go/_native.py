"""ctypes bindings to libpyiceberg_go (include/pyiceberg_go.h).

The library is loaded on first use, never at import, so that a program can
import pyiceberg_go and then fork. A process forked after the load must not
call in (the Go runtime does not survive fork: the call would hang), so every
entry point checks the pid first and raises ForkSafetyError instead.
"""

from __future__ import annotations

import ctypes
import os
import threading
from pathlib import Path
from typing import Final

from .errors import ForkSafetyError, IcebergGoError, error_for_status

#: The PIG_ABI_VERSION this package is written against.
ABI_VERSION: Final = 1

LIBRARY_ENV: Final = "PYICEBERG_GO_LIBRARY"

c_uintptr = ctypes.c_uint64 if ctypes.sizeof(ctypes.c_void_p) == 8 else ctypes.c_uint32


class ArrowSchema(ctypes.Structure):
    """struct ArrowSchema; callbacks are kept as raw pointers since we only move it."""

    _fields_ = [
        ("format", ctypes.c_void_p),
        ("name", ctypes.c_void_p),
        ("metadata", ctypes.c_void_p),
        ("flags", ctypes.c_int64),
        ("n_children", ctypes.c_int64),
        ("children", ctypes.c_void_p),
        ("dictionary", ctypes.c_void_p),
        ("release", ctypes.c_void_p),
        ("private_data", ctypes.c_void_p),
    ]


class ArrowArray(ctypes.Structure):
    """struct ArrowArray; callbacks are kept as raw pointers since we only move it."""

    _fields_ = [
        ("length", ctypes.c_int64),
        ("null_count", ctypes.c_int64),
        ("offset", ctypes.c_int64),
        ("n_buffers", ctypes.c_int64),
        ("n_children", ctypes.c_int64),
        ("buffers", ctypes.c_void_p),
        ("children", ctypes.c_void_p),
        ("dictionary", ctypes.c_void_p),
        ("release", ctypes.c_void_p),
        ("private_data", ctypes.c_void_p),
    ]


class ArrowArrayStream(ctypes.Structure):
    """struct ArrowArrayStream."""


GetSchemaFn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ArrowArrayStream), ctypes.c_void_p)
GetNextFn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ArrowArrayStream), ctypes.c_void_p)
# c_void_p, not c_char_p: a callback returning c_char_p would hand out a dangling pointer.
GetLastErrorFn = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.POINTER(ArrowArrayStream))
StreamReleaseFn = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowArrayStream))

ArrowArrayStream._fields_ = [
    ("get_schema", GetSchemaFn),
    ("get_next", GetNextFn),
    ("get_last_error", GetLastErrorFn),
    ("release", StreamReleaseFn),
    ("private_data", ctypes.c_void_p),
]


class PigError(ctypes.Structure):
    """struct PigError."""


PigErrorReleaseFn = ctypes.CFUNCTYPE(None, ctypes.POINTER(PigError))
PigError._fields_ = [
    ("status", ctypes.c_int32),
    ("message", ctypes.c_void_p),
    ("release", PigErrorReleaseFn),
    ("private_data", ctypes.c_void_p),
]

_lock = threading.Lock()
_lib: ctypes.CDLL | None = None
_loaded_pid: int | None = None


def _forked_child() -> None:
    # Runs in the child right after fork; the pid check below covers os.fork
    # done by C code that bypasses the hook.
    global _forked
    _forked = _lib is not None


_forked = False
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked_child)


def library_path() -> Path:
    """The file that will be loaded: $PYICEBERG_GO_LIBRARY, else the bundled one."""
    env = os.environ.get(LIBRARY_ENV)
    if env:
        return Path(env)
    return Path(__file__).resolve().parent / "_lib" / "libpyiceberg_go.so"


def is_loaded() -> bool:
    """Whether the shared library has been loaded into this process."""
    return _lib is not None


def in_forked_child() -> bool:
    """Whether the library was loaded by a parent of this process (calling in would hang)."""
    return _lib is not None and (_forked or _loaded_pid != os.getpid())


def check_fork() -> None:
    """Raise ForkSafetyError if the library was loaded by a parent of this process."""
    if in_forked_child():
        raise ForkSafetyError(
            "pyiceberg_go was loaded before this process was forked (pid "
            f"{_loaded_pid}); the Go runtime cannot run in a forked child. Use the "
            "'spawn' or 'forkserver' multiprocessing start method, or use "
            "pyiceberg_go only after forking."
        )


def lib() -> ctypes.CDLL:
    """The loaded library, loading it on first use."""
    global _lib, _loaded_pid
    check_fork()
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is None:
            _lib = _load(library_path())
            _loaded_pid = os.getpid()
    return _lib


def _load(path: Path) -> ctypes.CDLL:
    try:
        # CDLL, never PyDLL: CDLL releases the GIL for the duration of each call.
        dll = ctypes.CDLL(str(path))
    except OSError as e:
        raise IcebergGoError(
            f"cannot load the pyiceberg_go library from {path}: {e} "
            f"(set {LIBRARY_ENV} to the path of libpyiceberg_go.so)"
        ) from e

    u = c_uintptr
    perr = ctypes.POINTER(PigError)
    i64p = ctypes.POINTER(ctypes.c_int64)
    sigs: dict[str, tuple[object, list[object]]] = {
        "pig_abi_version": (ctypes.c_int32, []),
        "pig_version": (ctypes.c_char_p, []),
        "pig_free": (None, [ctypes.c_void_p]),
        "pig_runtime_configure": (ctypes.c_int32, [ctypes.c_char_p, perr]),
        "pig_session_new": (ctypes.c_int32, [ctypes.c_char_p, ctypes.POINTER(u), perr]),
        "pig_session_release": (ctypes.c_int32, [u]),
        "pig_operation_new": (ctypes.c_int32, [ctypes.POINTER(u)]),
        "pig_operation_cancel": (ctypes.c_int32, [u]),
        "pig_operation_progress": (ctypes.c_int32, [u, i64p, i64p, i64p]),
        "pig_operation_release": (ctypes.c_int32, [u]),
        "pig_execute": (
            ctypes.c_int32,
            [u, ctypes.c_char_p, ctypes.c_void_p, u, ctypes.POINTER(ctypes.c_void_p), perr],
        ),
        "pig_scan": (ctypes.c_int32, [u, ctypes.c_char_p, ctypes.c_void_p, perr]),
        "pig_read": (ctypes.c_int32, [u, ctypes.c_char_p, u, ctypes.c_void_p, perr]),
    }
    for name, (restype, argtypes) in sigs.items():
        fn = getattr(dll, name)
        fn.restype = restype
        fn.argtypes = argtypes

    abi = dll.pig_abi_version()
    if abi != ABI_VERSION:
        raise IcebergGoError(f"{path} implements ABI version {abi}, this pyiceberg_go needs {ABI_VERSION}")
    return dll


def raise_for(status: int, err: PigError) -> None:
    """Turn a status and a filled PigError into an exception; always releases err."""
    message = ""
    try:
        if err.message:
            message = ctypes.string_at(err.message).decode("utf-8", "replace")
        if err.status:
            status = err.status
    finally:
        if err.release:
            err.release(ctypes.byref(err))
    if status != 0:
        raise error_for_status(status, message)


def take_string(ptr: int | None) -> str:
    """Decode a library-allocated string and free it with pig_free."""
    if not ptr:
        return ""
    try:
        return ctypes.string_at(ptr).decode("utf-8")
    finally:
        lib().pig_free(ptr)
