"""moto's server with AWS Glue's optimistic ``UpdateTable``: ``python moto_glue.py -H 127.0.0.1 -p PORT``.

moto 5.2 accepts an ``UpdateTable`` whatever ``VersionId`` it carries, so two writers that
loaded the same version would both "win" and one commit would be lost without a word. Real
Glue refuses a ``VersionId`` that is no longer the table's with
``ConcurrentModificationException``, which is what Iceberg's Glue catalogs (Java's,
PyIceberg's, iceberg-go's) rely on. This launcher adds that check, atomically (moto's server
is threaded), and otherwise runs moto's own server unchanged.
"""

from __future__ import annotations

import threading
from typing import Any

from moto.core.exceptions import JsonRESTError
from moto.glue.responses import GlueResponse
from moto.server import main


class ConcurrentModificationException(JsonRESTError):
    """Glue's answer to an UpdateTable whose VersionId is not the table's current one."""

    code = 400

    def __init__(self, message: str) -> None:
        super().__init__("ConcurrentModificationException", message)


_lock = threading.Lock()
_update_table = GlueResponse.update_table


def _checked_update_table(self: GlueResponse) -> Any:
    params = self.parameters
    version = params.get("VersionId")
    with _lock:
        if version is not None:
            table = self.glue_backend.get_table(params["DatabaseName"], params["TableInput"]["Name"])
            current = table.as_dict()["VersionId"]
            if str(version) != str(current):
                raise ConcurrentModificationException(f"Update table failed due to concurrent modifications: version {version} is not the current version {current}")
        return _update_table(self)


GlueResponse.update_table = _checked_update_table  # type: ignore[method-assign]

if __name__ == "__main__":
    main()
