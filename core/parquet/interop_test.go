package parquet

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// venvPython finds the project's virtualenv (pyarrow and DuckDB pinned
// there) above the package directory.
func venvPython(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		p := filepath.Join(dir, ".venv", "bin", "python")
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no .venv/bin/python above the package: the project's virtualenv is needed for this test")
		}
		dir = parent
	}
}

// bloomProbeScript reads each file with pyarrow (rows, which column chunks
// have a bloom filter) and probes the filters with DuckDB's
// parquet_bloom_probe: values read from the file must never be excluded,
// values absent from it mostly are.
const bloomProbeScript = `
import glob, json, sys
import duckdb, pyarrow.parquet as pq

out = {}
for path in sorted(glob.glob(sys.argv[1] + "/*.parquet")):
    pf = pq.ParquetFile(path)
    md = pf.metadata
    bloom = {}
    for rg in range(md.num_row_groups):
        for c in range(md.num_columns):
            cc = md.row_group(rg).column(c)
            bloom.setdefault(cc.path_in_schema, []).append(cc.bloom_filter_offset is not None)
    table = pf.read()
    con = duckdb.connect()
    def lit(v):
        return str(v) if isinstance(v, int) else "'" + v.replace("'", "''") + "'"
    def excluded(col, values):
        n = 0
        for v in values:
            q = "select bool_and(bloom_filter_excludes) from parquet_bloom_probe(%s, %s, %s)" % (lit(path), lit(col), lit(v))
            n += bool(con.execute(q).fetchone()[0])
        return n
    present, absent = {}, {}
    for col in ("id", "s", "cat"):
        vals = [v for v in table.column(col).to_pylist() if v is not None]
        seen = set(vals)
        sample = sorted(seen, key=str)[:60]
        if col == "id":
            missing = [v for v in range(1, 400) if v not in seen][:60]
        else:
            missing = ["absent-%d" % i for i in range(60)]
        present[col] = excluded(col, sample)
        absent[col] = excluded(col, missing)
    out[path] = {"rows": table.num_rows, "bloom": bloom, "present_excluded": present, "absent_excluded": absent}
print(json.dumps(out))
`

func TestBloomFiltersReadByPyArrowAndDuckDB(t *testing.T) {
	python := venvPython(t)
	forEachEncoder(t, func(t *testing.T, ec encoderCase) {
		sc, recs := bloomBatches(t, !ec.flat, 2, 10000)
		props := map[string]string{
			PropBloomEnabledPrefix + "id":  "true",
			PropBloomEnabledPrefix + "s":   "true",
			PropBloomEnabledPrefix + "cat": "true",
		}
		if !ec.flat {
			props[PropBloomEnabledPrefix+"st.x"] = "true"
		}
		opts, err := OptionsFromProperties(props)
		if err != nil {
			t.Fatal(err)
		}
		fs := newMemFS()
		files := writeAll(t, fs, sc, ec.opts(opts), recs)
		dir := t.TempDir()
		for i, f := range files {
			if err := os.WriteFile(filepath.Join(dir, filepath.Base(f.Path)), fs.bytes(t, f.Path), 0o644); err != nil {
				t.Fatal(err)
			}
			if i > 0 {
				t.Fatalf("want one file, got %d", len(files))
			}
		}
		cmd := exec.Command(python, "-c", bloomProbeScript, dir)
		cmd.Dir = dir
		raw, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("probe script: %v\n%s", err, stderr)
		}
		var got map[string]struct {
			Rows    int64
			Bloom   map[string][]bool
			Present map[string]int `json:"present_excluded"`
			Absent  map[string]int `json:"absent_excluded"`
		}
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("%v: %s", err, raw)
		}
		if len(got) != 1 {
			t.Fatalf("probed %d files", len(got))
		}
		want := map[string]bool{"id": true, "s": true, "cat": true, "dec": false, "d": false, "plain": false}
		if !ec.flat {
			want["st.x"] = true
			want["tags.list.element"] = false
		}
		for _, r := range got {
			if r.Rows != 20000 {
				t.Errorf("pyarrow read %d rows", r.Rows)
			}
			for path, on := range want {
				flags, ok := r.Bloom[path]
				if !ok {
					t.Errorf("pyarrow sees no column %s", path)
				}
				for rg, has := range flags {
					if has != on {
						t.Errorf("%s row group %d: bloom filter %v, want %v", path, rg, has, on)
					}
				}
			}
			for _, col := range []string{"id", "s", "cat"} {
				if r.Present[col] != 0 {
					t.Errorf("%s: DuckDB excludes %d values the file holds", col, r.Present[col])
				}
				if r.Absent[col] < 55 {
					t.Errorf("%s: DuckDB excludes only %d of 60 absent values", col, r.Absent[col])
				}
			}
		}
	})
}
