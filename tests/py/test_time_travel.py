"""Time travel (snapshot_id, as_of_timestamp, ref) and Spark's rollback procedures, checked
against PyIceberg 0.12 reading the same snapshots. Times come from the table's own snapshot log."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa
import pytest
from history import T, build

import pyiceberg_go as ig

from sparkutil import spark, spark_catalog  # noqa: F401  (fixtures)


def key(t: pa.Table) -> list[tuple[Any, ...]]:
    return sorted(zip(*(t[c].to_pylist() for c in t.column_names)))


def theirs(pyiceberg_catalog: Any, snapshot_id: int) -> list[tuple[Any, ...]]:
    return key(pyiceberg_catalog.load_table("db.t").scan(snapshot_id=snapshot_id).to_arrow())


def snapshot_log(pyiceberg_catalog: Any) -> list[tuple[int, int]]:
    """main's snapshot log as (timestamp_ms, snapshot_id), as PyIceberg reads it."""
    return [(e.timestamp_ms, e.snapshot_id) for e in pyiceberg_catalog.load_table("db.t").metadata.snapshot_log]


def test_every_snapshot_by_id_timestamp_and_ref(pyiceberg_catalog: Any) -> None:
    h = build()
    t = ig.table(T)
    tbl = pyiceberg_catalog.load_table("db.t")
    all_ids = [s.snapshot_id for s in tbl.metadata.snapshots]
    assert set(h.main) | {h.branch_head} == set(all_ids)
    for sid in all_ids:
        assert key(t.to_arrow(snapshot_id=sid)) == theirs(pyiceberg_catalog, sid), sid
    # Distinct snapshots read differently, so a read of the wrong one fails.
    assert len({tuple(theirs(pyiceberg_catalog, s)) for s in all_ids}) == len(all_ids)

    log = snapshot_log(pyiceberg_catalog)
    assert [s for _, s in log] == h.main
    for i, (ts, _) in enumerate(log):
        # The last entry at or before ts (two commits may share a millisecond).
        sid = [s for t_, s in log if t_ <= ts][-1]
        expected = theirs(pyiceberg_catalog, sid)
        assert key(t.to_arrow(as_of_timestamp=ts)) == expected
        aware = dt.datetime.fromtimestamp(ts / 1000, dt.timezone.utc)
        assert key(t.scan(as_of_timestamp=aware).to_arrow()) == expected
        # PyIceberg's own as-of lookup agrees.
        assert tbl.snapshot_as_of_timestamp(ts).snapshot_id == sid
        if i + 1 < len(log) and log[i + 1][0] > ts + 1:
            # A time between two snapshots reads the earlier one.
            assert key(t.to_arrow(as_of_timestamp=ts + 1)) == expected
    # After the last entry: the head.
    assert key(t.to_arrow(as_of_timestamp=log[-1][0] + 10_000)) == key(t.to_arrow())

    assert key(t.to_arrow(ref="b")) == theirs(pyiceberg_catalog, h.branch_head)
    assert key(t.to_arrow(ref="v1")) == theirs(pyiceberg_catalog, h.tag_snapshot)
    assert key(t.to_arrow(ref="main")) == key(t.to_arrow())
    assert key(t.scan(columns=["id"], where="id >= 200", ref="b").to_arrow()) == [(200,), (201,), (202,)]


def test_time_travel_errors(pyiceberg_catalog: Any) -> None:
    h = build()
    t = ig.table(T)
    first_ts = snapshot_log(pyiceberg_catalog)[0][0]
    when = dt.datetime.fromtimestamp((first_ts - 1) / 1000, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]
    with pytest.raises(ig.InvalidArgumentError, match=f"Cannot find a snapshot older than {when}"):
        t.to_arrow(as_of_timestamp=first_ts - 1)
    for kwargs in (
        {"snapshot_id": h.main[0], "ref": "b"},
        {"snapshot_id": h.main[0], "as_of_timestamp": first_ts},
        {"as_of_timestamp": first_ts, "ref": "b"},
    ):
        with pytest.raises(ig.InvalidArgumentError, match="at most one of snapshot_id, as_of_timestamp_ms and ref"):
            t.scan(**kwargs)
    with pytest.raises(ig.InvalidArgumentError, match="a read takes one of a branch_/tag_ identifier"):
        ig.table(f"{T}.branch_b").to_arrow(snapshot_id=h.main[0])
    with pytest.raises(ig.ValidationError, match="Cannot find ref nope"):
        t.to_arrow(ref="nope")
    with pytest.raises(ig.InvalidArgumentError, match="naive one is ambiguous"):
        t.to_arrow(as_of_timestamp=dt.datetime(2024, 1, 1))
    with pytest.raises(ig.InvalidArgumentError, match="has no snapshot 1"):
        t.to_arrow(snapshot_id=1)


def current(pyiceberg_catalog: Any) -> int:
    return pyiceberg_catalog.load_table("db.t").metadata.current_snapshot_id


def test_rollback_to_snapshot(pyiceberg_catalog: Any) -> None:
    h = build()
    t = ig.table(T)
    head = h.main[-1]
    r = t.rollback_to_snapshot(h.main[2])
    assert r == {"table": T, "previous_snapshot_id": head, "current_snapshot_id": h.main[2]}
    assert current(pyiceberg_catalog) == h.main[2]
    assert key(t.to_arrow()) == theirs(pyiceberg_catalog, h.main[2])
    # The snapshot log gained the rollback, so as-of reads now see it.
    log = snapshot_log(pyiceberg_catalog)
    assert log[-1][1] == h.main[2]
    assert key(t.to_arrow(as_of_timestamp=log[-1][0])) == theirs(pyiceberg_catalog, h.main[2])

    # A snapshot no longer an ancestor of main (the rolled-back head), the branch's, unknown ones.
    before = pyiceberg_catalog.load_table("db.t").metadata_location
    for bad in (head, h.branch_head):
        with pytest.raises(ig.ValidationError, match=f"not an ancestor of the current state: {bad}"):
            t.rollback_to_snapshot(bad)
    with pytest.raises(ig.ValidationError, match="Cannot roll back to unknown snapshot id: 7"):
        t.rollback_to_snapshot(7)
    assert pyiceberg_catalog.load_table("db.t").metadata_location == before  # nothing committed

    # set_current_snapshot needs no ancestry: back to the old head, then to the branch's.
    assert t.set_current_snapshot(head)["current_snapshot_id"] == head
    assert key(t.to_arrow()) == theirs(pyiceberg_catalog, head)
    assert t.set_current_snapshot(ref="b") == {
        "table": T,
        "previous_snapshot_id": head,
        "current_snapshot_id": h.branch_head,
    }
    assert current(pyiceberg_catalog) == h.branch_head
    with pytest.raises(ig.InvalidArgumentError, match="Either snapshot_id or ref must be provided, not both"):
        t.set_current_snapshot(head, ref="b")
    with pytest.raises(ig.InvalidArgumentError, match="Either snapshot_id or ref"):
        t.set_current_snapshot()
    with pytest.raises(ig.InvalidArgumentError, match="Cannot find matching snapshot ID for ref nope"):
        t.set_current_snapshot(ref="nope")
    # Rolling back to the current snapshot commits nothing.
    before = pyiceberg_catalog.load_table("db.t").metadata_location
    assert t.set_current_snapshot(h.branch_head)["previous_snapshot_id"] == h.branch_head
    assert pyiceberg_catalog.load_table("db.t").metadata_location == before


def test_rollback_to_timestamp(pyiceberg_catalog: Any) -> None:
    h = build()
    t = ig.table(T)
    snaps = {s.snapshot_id: s.timestamp_ms for s in pyiceberg_catalog.load_table("db.t").metadata.snapshots}
    # Strictly older than the time: at snapshot 3's own timestamp, the latest older ancestor.
    ts3 = snaps[h.main[3]]
    older = [s for s in h.main if snaps[s] < ts3]
    assert older, "snapshots committed within one millisecond"
    r = t.rollback_to_timestamp(ts3)
    assert r == {"table": T, "previous_snapshot_id": h.main[-1], "current_snapshot_id": older[-1]}
    assert key(t.to_arrow()) == theirs(pyiceberg_catalog, older[-1])
    before = pyiceberg_catalog.load_table("db.t").metadata_location
    first = snaps[h.main[0]]
    with pytest.raises(ig.ValidationError, match=f"no valid snapshot older than: {first}"):
        t.rollback_to_timestamp(dt.datetime.fromtimestamp(first / 1000, dt.timezone.utc))
    assert pyiceberg_catalog.load_table("db.t").metadata_location == before


@pytest.mark.parametrize("version", [2, 3])
def test_time_travel_matches_spark(spark: Any, spark_catalog: str, pyiceberg_catalog: Any, version: int) -> None:
    """Spark's VERSION AS OF (snapshot, branch, tag) and TIMESTAMP AS OF read what we read (v3: deletion vectors)."""
    h = build(version)
    t = ig.table(T)
    name = f"{spark_catalog}.db.t"

    def spark_rows(clause: str) -> list[tuple[Any, ...]]:
        return sorted(tuple(r) for r in spark.sql(f"SELECT id, cat FROM {name} {clause}").collect())

    for sid in [*h.main, h.branch_head]:
        assert key(t.to_arrow(snapshot_id=sid, columns=["id", "cat"])) == spark_rows(f"VERSION AS OF {sid}")
    log = snapshot_log(pyiceberg_catalog)
    for ts, _ in log:
        for at in (ts, ts + 1):
            assert key(t.to_arrow(as_of_timestamp=at, columns=["id", "cat"])) == spark_rows(
                f"TIMESTAMP AS OF timestamp_millis({at})"
            )
    assert key(t.to_arrow(ref="b", columns=["id", "cat"])) == spark_rows("VERSION AS OF 'b'")
    assert key(t.to_arrow(ref="v1", columns=["id", "cat"])) == spark_rows("VERSION AS OF 'v1'")
