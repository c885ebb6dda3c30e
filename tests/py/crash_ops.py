"""The operations of the crash test (test_crash.py), shared by the writer child and the checking parent.

Operation i is a pure function of (seed, i): the child runs it against the
table, the parent applies it to a plain-Python model of the rows. Its input
(rows, filters) never depends on the table's state, so a later child can
continue the sequence whatever the earlier ones committed.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

TABLE = "db.crash"
PARTS = ["a", "b", "c", "d"]
PROPERTIES = {
    "format-version": "2",
    "write.delete.mode": "merge-on-read",
    "write.update.mode": "merge-on-read",
    "write.merge.mode": "copy-on-write",
}
KINDS = ["append"] * 3 + ["delete"] * 2 + ["merge"] * 2 + ["overwrite_partitions"] * 2 + ["update", "replace"]
# Maintenance procedures: they change files, never rows.
KINDS += ["rewrite_data_files", "rewrite_manifests", "rewrite_position_delete_files"]
PROCEDURES = {"rewrite_data_files", "rewrite_manifests", "rewrite_position_delete_files"}


def _rows(rng: random.Random, i: int, n: int, parts: list[str] | None = None) -> list[dict]:
    return [{"id": i * 100 + j, "part": rng.choice(parts or PARTS), "v": rng.randrange(1000), "s": f"r{i}-{j}"} for j in range(n)]


def operation(seed: int, i: int) -> dict[str, Any]:
    """Operation i of the sequence; 0 is the create."""
    rng = random.Random(f"{seed}:{i}")
    if i == 0:
        return {"kind": "create", "rows": _rows(rng, 0, 20)}
    kind = rng.choice(KINDS)
    part = rng.choice(PARTS)
    if kind == "append":
        return {"kind": kind, "rows": _rows(rng, i, rng.randrange(1, 30))}
    if kind == "delete":
        m = rng.randrange(2, 5)
        return {"kind": kind, "part": part, "mod": m, "filter": f"part = '{part}' AND v % {m} = 0"}
    if kind == "update":
        return {"kind": kind, "part": part, "value": f"u{i}", "filter": f"part = '{part}' AND id % 2 = 0"}
    if kind == "overwrite_partitions":
        parts = rng.sample(PARTS, rng.randrange(1, 3))
        return {"kind": kind, "rows": _rows(rng, i, rng.randrange(1, 15), parts)}
    if kind == "replace":
        return {"kind": kind, "rows": _rows(rng, i, rng.randrange(5, 25))}
    if kind in PROCEDURES:
        return {"kind": kind}
    # merge: existing-looking ids of earlier operations, and new ones
    old = sorted({rng.randrange(i) * 100 + rng.randrange(30) for _ in range(rng.randrange(0, 12))})
    src = [{"id": k, "part": rng.choice(PARTS), "v": rng.randrange(1000), "s": f"m{i}"} for k in old]
    src += _rows(rng, i, rng.randrange(0, 8))
    return {"kind": kind, "rows": src}


def apply(rows: list[dict], op: dict[str, Any]) -> list[dict]:
    """The table's rows after op, by Spark's semantics."""
    kind = op["kind"]
    if kind in ("create", "replace"):
        return [dict(r) for r in op["rows"]]
    if kind in PROCEDURES:
        return rows
    if kind == "append":
        return rows + [dict(r) for r in op["rows"]]
    if kind == "delete":
        return [r for r in rows if not (r["part"] == op["part"] and r["v"] % op["mod"] == 0)]
    if kind == "update":
        return [{**r, "s": op["value"]} if r["part"] == op["part"] and r["id"] % 2 == 0 else r for r in rows]
    if kind == "overwrite_partitions":
        parts = {r["part"] for r in op["rows"]}
        return [r for r in rows if r["part"] not in parts] + [dict(r) for r in op["rows"]]
    if kind == "merge":
        # WHEN MATCHED AND source.v % 2 = 0 THEN DELETE, WHEN MATCHED THEN UPDATE SET *,
        # WHEN NOT MATCHED THEN INSERT * (source ids are unique, table ids too)
        src = {r["id"]: r for r in op["rows"]}
        out, hit = [], set()
        for r in rows:
            s = src.get(r["id"])
            if s is None:
                out.append(r)
                continue
            hit.add(r["id"])
            if s["v"] % 2 != 0:
                out.append(dict(s))
        return out + [dict(s) for k, s in src.items() if k not in hit]
    raise ValueError(kind)


def multiset(rows: list[dict]) -> Counter:
    return Counter((r["id"], r["part"], r["v"], r["s"]) for r in rows)


def arrow(rows: list[dict]) -> Any:
    import pyarrow as pa

    return pa.table(
        {
            "id": pa.array([r["id"] for r in rows], pa.int64()),
            "part": pa.array([r["part"] for r in rows], pa.string()),
            "v": pa.array([r["v"] for r in rows], pa.int64()),
            "s": pa.array([r["s"] for r in rows], pa.string()),
        }
    )


def run(op: dict[str, Any]) -> Any:
    """Run op with pyiceberg_go; returns its WriteResult."""
    import pyiceberg_go as ig

    name = f"local.{TABLE}"
    kind = op["kind"]
    if kind in ("create", "replace"):
        w = ig.writeTo(arrow(op["rows"]), name).partitionedBy("part")
        for k, v in PROPERTIES.items():
            w = w.tableProperty(k, v)
        return w.create() if kind == "create" else w.replace()
    if kind == "append":
        return ig.writeTo(arrow(op["rows"]), name).append()
    if kind == "overwrite_partitions":
        return ig.writeTo(arrow(op["rows"]), name).overwritePartitions()
    if kind == "delete":
        return ig.table(name).delete(op["filter"])
    if kind == "update":
        return ig.table(name).update({"s": ig.lit(op["value"])}, where=op["filter"])
    if kind in PROCEDURES:
        return _procedure(ig, name, kind)
    if kind == "merge":
        return (
            ig.mergeInto(arrow(op["rows"]), name, "target.id = source.id")
            .whenMatched("source.v % 2 = 0").delete()
            .whenMatched().updateAll()
            .whenNotMatched().insertAll()
            .merge()
        )
    raise ValueError(kind)


def _procedure(ig: Any, name: str, kind: str) -> Any:
    """Run maintenance procedure kind (every file a candidate); return what the journal needs of a
    write result: the snapshot it committed (None: nothing to do) and that snapshot's summary."""
    from types import SimpleNamespace

    t = ig.table(name)
    if kind == "rewrite_data_files":
        ids = t.rewrite_data_files(options={"rewrite-all": "true"}).snapshot_ids
    elif kind == "rewrite_position_delete_files":
        ids = t.rewrite_position_delete_files(options={"rewrite-all": "true"}).snapshot_ids
    else:
        sid = t.rewrite_manifests().snapshot_id
        ids = [] if sid is None else [sid]
    if not ids:
        return SimpleNamespace(snapshot_id=None, summary={})
    summary = next(s["summary"] for s in t.snapshots() if s["snapshot_id"] == ids[-1])
    return SimpleNamespace(snapshot_id=ids[-1], summary=summary)
