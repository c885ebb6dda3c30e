"""The exceptions of pyiceberg_go, one class per status code of the C ABI.

Every error the library reports is an :class:`IcebergGoError`; the subclass
says what kind of failure it was and the message is the library's own text,
which names the offending table, column or option::

    import pyiceberg_go as ig

    try:
        ig.writeTo(df, "local.db.events").append()
    except ig.NoSuchTableError as e:
        print("create it first:", e)
"""

from __future__ import annotations

from typing import Final


class IcebergGoError(Exception):
    """Base class of every error raised by pyiceberg_go.

    ``status`` is the C status code (``PIG_STATUS_*``) the library returned.

    Example::

        try:
            ig.table("local.db.missing").snapshots()
        except ig.IcebergGoError as e:
            print(e.status, e)
    """

    status: int = 1

    def __init__(self, message: str = "", status: int | None = None) -> None:
        super().__init__(message)
        if status is not None:
            self.status = status


class InvalidArgumentError(IcebergGoError, ValueError):
    """A request was malformed: an unknown option, a bad identifier, a bad value.

    Example::

        with pytest.raises(ig.InvalidArgumentError):
            ig.writeTo(df, "local.db.t").option("compression-codec", "nope").create()
    """

    status = 2


class NoSuchTableError(IcebergGoError):
    """The table does not exist (append/replace to a missing table).

    Example::

        with pytest.raises(ig.NoSuchTableError):
            ig.writeTo(df, "local.db.missing").append()
    """

    status = 3


class TableAlreadyExistsError(IcebergGoError):
    """``create()`` found the table already there.

    Example::

        with pytest.raises(ig.TableAlreadyExistsError):
            ig.writeTo(df, "local.db.events").create()
    """

    status = 4


class NoSuchViewError(NoSuchTableError):
    """A statement of ``ig.sql`` reads a view that is neither registered nor passed in ``views=``.

    Raised before anything is written (Spark's ``TABLE_OR_VIEW_NOT_FOUND``).

    Example::

        with pytest.raises(ig.NoSuchViewError):
            ig.sql("INSERT INTO local.db.t SELECT * FROM nope")
    """


class NoSuchNamespaceError(IcebergGoError):
    """The namespace of the table does not exist.

    Example::

        except ig.NoSuchNamespaceError: ...
    """

    status = 5


class ValidationError(IcebergGoError, ValueError):
    """The data does not fit the table: extra column, incompatible type, nulls into a required column.

    Example::

        with pytest.raises(ig.ValidationError, match="id"):
            ig.writeTo(bad_df, "local.db.events").append()
    """

    status = 6


class CommitConflictError(IcebergGoError):
    """The commit lost against a concurrent writer after all retries.

    Example::

        except ig.CommitConflictError: retry_later()
    """

    status = 7


class OperationCancelledError(IcebergGoError):
    """The operation was cancelled; nothing was committed.

    Example::

        except ig.OperationCancelledError: print("stopped, table unchanged")
    """

    status = 8


class IcebergIOError(IcebergGoError, OSError):
    """Reading or writing files or the catalog failed.

    Example::

        except ig.IcebergIOError as e: print("storage problem:", e)
    """

    status = 9


class NotSupportedError(IcebergGoError):
    """The request asks for something this version does not do.

    Example::

        except ig.NotSupportedError as e: print(e)
    """

    status = 10


class CommitStateUnknownError(IcebergGoError):
    """The commit may or may not have happened (the catalog did not answer).

    Example::

        except ig.CommitStateUnknownError: check_snapshots_before_retrying()
    """

    status = 11


class InternalError(IcebergGoError):
    """The library hit a bug (a recovered panic). Later calls raise LibraryPoisonedError.

    Example::

        except ig.InternalError as e: report_bug(e)
    """

    status = 12


class LibraryPoisonedError(IcebergGoError):
    """The library refuses calls after an earlier internal error; restart the process.

    Example::

        except ig.LibraryPoisonedError: sys.exit("restart the interpreter")
    """

    status = 13


class ForkSafetyError(IcebergGoError):
    """The library was loaded before this process was forked and cannot be used here.

    Use the "spawn" or "forkserver" start method, or load pyiceberg_go only in
    the children.

    Example::

        multiprocessing.set_start_method("spawn")
    """

    status = -1


class SessionClosedError(IcebergGoError, RuntimeError):
    """A closed :class:`pyiceberg_go.Session` (or a builder or table handle of one) was used.

    Raised by this package, not the library (``status`` is -1).

    Example::

        with ig.Session() as s:
            t = s.table("local.db.t")
        with pytest.raises(ig.SessionClosedError):
            t.snapshots()
    """

    status = -1


class StreamConsumedError(IcebergGoError, RuntimeError):
    """A :class:`pyiceberg_go.ScanStream` was read (or closed) already: a stream is read once.

    Raised by this package, not the library (``status`` is -1). Call
    ``table.scan(...)`` again for another stream.

    Example::

        s = ig.table("local.db.t").scan()
        pa.table(s)
        with pytest.raises(ig.StreamConsumedError):
            pa.table(s)
    """

    status = -1


_BY_STATUS: Final[dict[int, type[IcebergGoError]]] = {
    cls.status: cls
    for cls in (
        InvalidArgumentError,
        NoSuchTableError,
        TableAlreadyExistsError,
        NoSuchNamespaceError,
        ValidationError,
        CommitConflictError,
        OperationCancelledError,
        IcebergIOError,
        NotSupportedError,
        CommitStateUnknownError,
        InternalError,
        LibraryPoisonedError,
    )
}


def error_for_status(status: int, message: str) -> IcebergGoError:
    """Return the exception for a C status code and the library's message.

    Unknown codes (``PIG_STATUS_UNKNOWN`` and codes newer than this package)
    give the base class, so a newer library never breaks an older wrapper.

    Example::

        raise error_for_status(3, "no such table: db.t")  # NoSuchTableError
    """
    cls = _BY_STATUS.get(status, IcebergGoError)
    if not message:
        message = f"pyiceberg_go call failed with status {status}"
    return cls(message, status)
