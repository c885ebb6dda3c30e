"""A child of test_readstream.py: streams local.db.src into local.db.dst, one file per batch.

    python readstream_worker.py <catalog root>

It runs a named query (the target table is its checkpoint) with
``trigger(availableNow=True)`` and exits 0 when the query ends; the test
SIGKILLs it at random moments and starts it again.
"""

from __future__ import annotations

import sys


def main() -> None:
    root = sys.argv[1]
    import pyiceberg_go as ig

    ig.configure(
        catalogs={"local": {"type": "sql", "uri": f"sqlite:///{root}/catalog.db", "warehouse": f"file://{root}/wh"}}
    )
    src = ig.readStream("local.db.src").option("streaming-max-files-per-micro-batch", 1)
    q = ig.writeStream(src, "local.db.dst").queryName("copy").trigger(availableNow=True).start()
    q.awaitTermination()


if __name__ == "__main__":
    main()
