"""Project Nessie through its Iceberg REST endpoint (issue 40, item 4).

Nessie 0.99 (``nessie_server``: in-memory, its warehouse on the versitygw bucket) serves the
Iceberg REST catalog API under ``/iceberg/``; our ``type: rest`` catalog opens it with the
warehouse's name, and Nessie's config answer gives the prefix (the default branch and the
warehouse, ``main|<warehouse>``). Nessie writes the table metadata itself; we write the data
and manifests to S3 with the keys the catalog is given.

On a table PyIceberg 0.12 created and on one we created: our reads, append,
overwritePartitions, delete, merge and schema change, each read back by PyIceberg's RestCatalog
on the same endpoint, and PyIceberg's append read back by us. Nessie 0.99 requires
``last-column-id`` in an ``add-schema`` update (deprecated in the REST spec); our REST
transport adds it (core/catalog/restcompat.go). Nessie keeps only the current snapshot in the
metadata it writes (its history is Nessie's commit log), so PyIceberg sees one snapshot.
"""

from __future__ import annotations

import secrets
from typing import Any

import pyarrow as pa
import pytest

import pyiceberg_go as ig

from servers import NessieServer, nessie_server, s3_server  # noqa: F401  (fixtures)


def rows(ids: list[int], tag: str = "a") -> pa.Table:
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "v": pa.array([f"{tag}{i}" for i in ids], pa.string()),
            "p": pa.array([i % 3 for i in ids], pa.int32()),
        }
    )


@pytest.fixture
def nessie(nessie_server: NessieServer) -> tuple[dict[str, str], str]:
    """Catalog "nessie" on the server, and a namespace of this test's own."""
    props = nessie_server.props()
    ig.configure(catalogs={"nessie": props})
    return props, "ns_" + secrets.token_hex(4)


def pyiceberg(props: dict[str, str]) -> Any:
    from pyiceberg.catalog.rest import RestCatalog

    return RestCatalog("nessie", **{k: v for k, v in props.items() if k != "type"})


def ids_of(t: Any) -> list[int]:
    return sorted(t.scan().to_arrow().column("id").to_pylist())


def pyiceberg_table(props: dict[str, str], ns: str, ids: list[int]) -> Any:
    """A table created by PyIceberg (partitioned by p through a spec update) with one append."""
    cat = pyiceberg(props)
    cat.create_namespace(ns)
    t = cat.create_table(f"{ns}.t", schema=rows([0]).schema)
    with t.update_spec() as u:
        u.add_identity("p")
    t = cat.load_table(f"{ns}.t")
    t.append(rows(ids))
    return cat


def test_writes_on_a_pyiceberg_table_read_back_both_ways(nessie_server: NessieServer, nessie: tuple[dict[str, str], str]) -> None:
    props, ns = nessie
    name = f"nessie.{ns}.t"
    cat = pyiceberg_table(props, ns, [0, 1, 2, 3, 4, 5])
    assert sorted(ig.table(name).to_arrow().column("id").to_pylist()) == [0, 1, 2, 3, 4, 5]

    ig.writeTo(rows([6, 7]), name).append()
    ig.writeTo(rows([9], "o"), name).overwritePartitions()  # partition p=0 is now id 9 only
    ig.table(name).delete("id = 1")
    src = rows([2, 10], "m")
    ig.mergeInto(src, name, "target.id = source.id").whenMatched().updateAll().whenNotMatched().insertAll().merge()
    want = [2, 4, 5, 7, 9, 10]
    got = ig.table(name).to_arrow()
    assert sorted(got.column("id").to_pylist()) == want
    assert dict(zip(got.column("id").to_pylist(), got.column("v").to_pylist()))[2] == "m2"

    t = cat.load_table(f"{ns}.t")
    assert ids_of(t) == want
    assert t.location().startswith(f"{nessie_server.location}/{ns}/t")
    # Nessie's metadata carries the current snapshot only; the merge's is a copy-on-write overwrite.
    assert [s.summary.operation.value for s in t.snapshots()] == ["overwrite"]
    assert (ns, "t") in cat.list_tables(ns)
    keys = nessie_server.s3.files(nessie_server.location.split("/", 3)[3])
    assert any("/p=" in k and k.endswith(".parquet") for k in keys)
    assert any(k.endswith(".metadata.json") for k in keys)

    # PyIceberg's append comes back to us, through the same branch, and ours to PyIceberg.
    t.append(rows([500]))
    assert sorted(ig.table(name).to_arrow().column("id").to_pylist()) == sorted([*want, 500])
    ig.writeTo(rows([501]), name).append()
    assert ids_of(cat.load_table(f"{ns}.t")) == sorted([*want, 500, 501])


def test_our_create_and_schema_change_read_back_by_pyiceberg(nessie_server: NessieServer, nessie: tuple[dict[str, str], str]) -> None:
    """A table we create (partitioned, sorted) keeps its spec and order on Nessie: an
    overwritePartitions replaces one partition only; a column we add is there for PyIceberg
    (each add-schema carries last-column-id, which Nessie 0.99 requires); PyIceberg reads every
    write and its append comes back to us."""
    props, ns = nessie
    pyiceberg(props).create_namespace(ns)
    name = f"nessie.{ns}.t"
    ig.writeTo(rows([0, 1, 2, 3, 4, 5]), name).partitionedBy("p").create()
    ig.sql(f"ALTER TABLE {name} WRITE ORDERED BY id DESC")
    ig.writeTo(rows([6, 7]), name).append()
    ig.writeTo(rows([9], "o"), name).overwritePartitions()  # partition p=0 is now id 9 only
    ig.table(name).delete("id = 1")
    ig.table(name).update_schema().add_column("extra", "string").commit()
    ig.writeTo(rows([10]).append_column("extra", pa.array(["x"])), name).append()
    want = [2, 4, 5, 7, 9, 10]
    assert sorted(ig.table(name).to_arrow().column("id").to_pylist()) == want

    t = pyiceberg(props).load_table(f"{ns}.t")
    assert ids_of(t) == want
    assert [(f.name, str(f.transform)) for f in t.spec().fields] == [("p", "identity")]
    assert [(f.source_id, f.direction.value) for f in t.sort_order().fields] == [(1, "desc")]
    assert t.schema().find_field("extra").field_id == 4
    assert dict(zip(*[t.scan().to_arrow().column(c).to_pylist() for c in ("id", "extra")]))[10] == "x"
    t.append(t.scan(row_filter="id = 10").to_arrow())
    assert sorted(ig.table(name).to_arrow().column("id").to_pylist()) == sorted([*want, 10])
    # Dropping the highest column: the new schema's highest id (3) is below the table's last
    # column id (4), which the table keeps.
    ig.table(name).update_schema().delete_column("extra").commit()
    t = pyiceberg(props).load_table(f"{ns}.t")
    assert [f.name for f in t.schema().fields] == ["id", "v", "p"] and t.metadata.last_column_id == 4
