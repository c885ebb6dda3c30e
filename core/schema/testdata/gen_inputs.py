"""Writes inputs_*.arrow: batches as pandas, polars and DuckDB hand them to
Arrow, for conform_producers_test.go. Run with the repository's .venv:
    .venv/bin/python core/schema/testdata/gen_inputs.py
"""
import pathlib

import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa

here = pathlib.Path(__file__).parent


def write(name, table):
    with pa.ipc.new_file(here / name, table.schema) as w:
        w.write_table(table)


ns = np.array([-1, -999, -1001, 0, 1_001, -86_400_000_000_001, 1_700_000_000_123_456_789], dtype="int64")
pdf = pd.DataFrame(
    {
        "ts": pd.to_datetime(ns, unit="ns"),
        "ts_tz": pd.to_datetime(ns, unit="ns", utc=True),
        "cat": pd.Categorical(["a", "b", None, "a", "c", "b", "a"]),
        "nothing": [None] * 7,
        "small": np.array([1, 2, 3, 4, 5, 6, 250], dtype="uint8"),
        "half": np.array([0.5, 1, 2, 3, 4, 5, 6], dtype="float16"),
    }
)
write("inputs_pandas.arrow", pa.Table.from_pandas(pdf, preserve_index=False))

pldf = pl.DataFrame(
    {
        "s": ["short", None, "a string longer than twelve bytes"],
        "tags": [["x", "y"], None, []],
        "rec": [{"a": 1, "b": "u"}, None, {"a": 3, "b": None}],
    }
)
write("inputs_polars.arrow", pldf.to_arrow(compat_level=pl.CompatLevel.newest()))

con = duckdb.connect()
con.sql("set arrow_lossless_conversion = true")
write(
    "inputs_duckdb.arrow",
    con.sql(
        "select 'x' || i::varchar as s, (i * 1.5)::decimal(10, 2) as d, "
        "date '1969-12-31' + i::integer as dt, map(['k'], [i]) as m, uuid() as u "
        "from range(3) t(i)"
    ).to_arrow_table(),
)
