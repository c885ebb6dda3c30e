"""The exception hierarchy matches the C status codes of include/pyiceberg_go.h."""

from __future__ import annotations

import ctypes
import re

import pytest

import pyiceberg_go as ig
from pyiceberg_go import _native
from pyiceberg_go.errors import error_for_status

from conftest import REPO, CatalogDir, run_python

# Status name in the header -> the class the brief assigns to it.
EXPECTED = {
    "INVALID_ARGUMENT": ig.InvalidArgumentError,
    "NO_SUCH_TABLE": ig.NoSuchTableError,
    "TABLE_ALREADY_EXISTS": ig.TableAlreadyExistsError,
    "NO_SUCH_NAMESPACE": ig.NoSuchNamespaceError,
    "VALIDATION": ig.ValidationError,
    "COMMIT_CONFLICT": ig.CommitConflictError,
    "CANCELLED": ig.OperationCancelledError,
    "IO": ig.IcebergIOError,
    "NOT_SUPPORTED": ig.NotSupportedError,
    "COMMIT_STATE_UNKNOWN": ig.CommitStateUnknownError,
    "INTERNAL": ig.InternalError,
    "POISONED": ig.LibraryPoisonedError,
    "UNKNOWN": ig.IcebergGoError,
}


def header_statuses() -> dict[str, int]:
    text = (REPO / "include" / "pyiceberg_go.h").read_text()
    return {m[1]: int(m[2]) for m in re.finditer(r"#define PIG_STATUS_(\w+) (\d+)", text)}


def test_every_header_status_maps_to_its_exception() -> None:
    statuses = header_statuses()
    assert statuses.pop("OK") == 0
    assert set(statuses) == set(EXPECTED), "a status was added to the header without a Python class"
    for name, code in statuses.items():
        e = error_for_status(code, f"message {name}")
        assert type(e) is EXPECTED[name], name
        assert e.status == code
        assert str(e) == f"message {name}"


def test_unknown_future_status_is_the_base_class() -> None:
    e = error_for_status(999, "")
    assert type(e) is ig.IcebergGoError and e.status == 999 and "999" in str(e)


def test_hierarchy_and_builtin_mixins() -> None:
    for cls in EXPECTED.values():
        assert issubclass(cls, ig.IcebergGoError)
    assert issubclass(ig.ForkSafetyError, ig.IcebergGoError)
    assert issubclass(ig.InvalidArgumentError, ValueError)
    assert issubclass(ig.ValidationError, ValueError)
    assert issubclass(ig.IcebergIOError, OSError)
    assert not issubclass(ig.NoSuchTableError, ValueError)


def _filled_error(status: int, message: bytes, released: list[int]) -> tuple[_native.PigError, object]:
    buf = ctypes.create_string_buffer(message)

    @_native.PigErrorReleaseFn
    def release(p: object) -> None:
        released.append(1)
        p.contents.message = None  # type: ignore[attr-defined]

    err = _native.PigError()
    err.status = status
    err.message = ctypes.addressof(buf)
    err.release = release
    return err, (buf, release)


def test_raise_for_maps_message_and_always_releases() -> None:
    released: list[int] = []
    err, _keep = _filled_error(6, b"column \"id\": cannot write string into long", released)
    with pytest.raises(ig.ValidationError, match='column "id"'):
        _native.raise_for(6, err)
    assert released == [1]


def test_raise_for_success_releases_nothing_and_raises_nothing() -> None:
    _native.raise_for(0, _native.PigError())  # release is NULL: must not be called


def test_raise_for_uses_the_struct_status_and_decodes_utf8() -> None:
    released: list[int] = []
    err, _keep = _filled_error(3, "no such table: db.événements".encode(), released)
    with pytest.raises(ig.NoSuchTableError, match="événements"):
        _native.raise_for(1, err)
    assert released == [1]


def test_release_library_rejects_the_test_hooks(catalog_dir: CatalogDir) -> None:
    """The library users get has no test hooks: ``__panic`` and ``test.*`` session keys are unknown."""
    release = REPO / "pyiceberg_go" / "_lib" / "libpyiceberg_go.so"
    r = run_python(
        f"""
        import pyiceberg_go as ig
        from pyiceberg_go import _session
        props = {catalog_dir.properties!r}
        ig.configure(catalogs={{"local": props}})
        try:
            _session.execute({{"op": "__panic", "table": "local.db.t"}})
        except ig.InvalidArgumentError as e:
            print("__panic:", type(e).__name__, "unknown operation" in str(e))
        for conf in ({{"test.commit-delay-ms": "2500"}}, {{"test.hooks": "true"}}):
            ig.configure(catalogs={{"local": props}}, conf=conf)
            try:
                ig.table("local.db.t").snapshots()
            except ig.InvalidArgumentError as e:
                print("conf:", type(e).__name__, "unknown session configuration key" in str(e), next(iter(conf)) in str(e))
        print("done")
        """,
        env={_native.LIBRARY_ENV: str(release)},
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "__panic: InvalidArgumentError True",
        "conf: InvalidArgumentError True True",
        "conf: InvalidArgumentError True True",
        "done",
    ], r.stdout + r.stderr
