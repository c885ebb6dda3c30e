package gotests

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/pyiceberg-go/pyiceberg-go/core/ops"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
)

func TestCreateThenReadBackUnpartitioned(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	res := mustWrite(t, s, request.Request{
		Op: request.OpCreate, Table: "local.db.plain",
		Options: map[string]string{"snapshot-property.app": "gotests", "snapshot-property.run.id": "7"},
	}, rowsReader(t, 0, 500, 3))

	equalRows(t, readRows(t, s, "local.db.plain", nil), expectRows([2]int64{0, 1500}))
	tbl := loadTable(t, s, "local.db.plain")
	if !tbl.Metadata().PartitionSpec().IsUnpartitioned() {
		t.Fatalf("spec %s, want unpartitioned", tbl.Metadata().PartitionSpec())
	}
	checkSummary(t, e, "plain", res, tbl.CurrentSnapshot().Summary.Properties, 1500, 1500)
	if got := res.Summary["app"]; got != "gotests" {
		t.Errorf("snapshot-property.app: summary app=%q", got)
	}
	if got := res.Summary["run.id"]; got != "7" {
		t.Errorf("snapshot-property.run.id: summary run.id=%q", got)
	}
	if !withoutPrefix(res.Summary, "snapshot-property.") {
		t.Errorf("summary keeps the snapshot-property. prefix: %v", res.Summary)
	}
	if res.Metrics.Rows != 1500 || res.Metrics.Files != int64(len(e.dataFiles(t, "plain"))) {
		t.Errorf("metrics %+v", res.Metrics)
	}
	if got := tbl.Metadata().Properties()["write.parquet.compression-codec"]; got != "zstd" {
		t.Errorf("write.parquet.compression-codec=%q, want zstd", got)
	}
	if v := tbl.Metadata().Version(); v != 2 {
		t.Errorf("default format-version %d, want 2", v)
	}
	// Columns of a table created from data are optional.
	for _, f := range tbl.Schema().Fields() {
		if f.Required {
			t.Errorf("column %s is required", f.Name)
		}
	}

	// An append adds to the totals.
	res2 := mustWrite(t, s, request.Request{Op: request.OpAppend, Table: "local.db.plain"}, rowsReader(t, 1500, 250, 2))
	tbl = loadTable(t, s, "local.db.plain")
	checkSummary(t, e, "plain", res2, tbl.CurrentSnapshot().Summary.Properties, 500, 2000)
	if _, ok := res2.Summary["app"]; ok {
		t.Errorf("a snapshot property of an earlier write leaked into the next: %v", res2.Summary)
	}
	if p := tbl.CurrentSnapshot().ParentSnapshotID; p == nil || *p != *res.SnapshotID {
		t.Errorf("append's parent %v, want %d", p, *res.SnapshotID)
	}
	equalRows(t, readRows(t, s, "local.db.plain", nil), expectRows([2]int64{0, 2000}))
	// Time travel to the create.
	equalRows(t, readRows(t, s, "local.db.plain", res.SnapshotID), expectRows([2]int64{0, 1500}))
}

func TestCreateThenReadBackPartitionedSeveralTransforms(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	res := mustWrite(t, s, request.Request{
		Op: request.OpCreate, Table: "local.db.parts",
		PartitionBy: []request.PartitionField{
			{Transform: "identity", Column: "cat"},
			{Transform: "bucket[4]", Column: "id"},
			{Transform: "day", Column: "ts"},
			{Transform: "truncate[2]", Column: "name"},
		},
	}, rowsReader(t, 0, 400, 2))
	equalRows(t, readRows(t, s, "local.db.parts", nil), expectRows([2]int64{0, 800}))

	tbl := loadTable(t, s, "local.db.parts")
	spec := tbl.Metadata().PartitionSpec()
	var names []string
	for _, f := range spec.Fields() {
		names = append(names, f.Name+":"+f.Transform.String())
	}
	if got, want := strings.Join(names, ","), "cat:identity,id_bucket:bucket[4],ts_day:day,name_trunc:truncate[2]"; got != want {
		t.Fatalf("spec fields %s, want %s", got, want)
	}
	sum := tbl.CurrentSnapshot().Summary.Properties
	checkSummary(t, e, "parts", res, sum, 800, 800)

	// Every file holds the rows of exactly its partition: check the
	// identity, day and truncate values against rows recomputed from ids.
	tasks, err := tbl.Scan().PlanFiles(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	fieldID := map[string]int{}
	for _, f := range spec.Fields() {
		fieldID[f.Name] = f.FieldID
	}
	tuples := map[string]bool{}
	for _, task := range tasks {
		df := task.File
		p := df.Partition()
		tuples[fmt.Sprint(p[fieldID["cat"]], p[fieldID["id_bucket"]], p[fieldID["ts_day"]], p[fieldID["name_trunc"]])] = true
		ids := fileIDs(t, df.FilePath())
		if int64(len(ids)) != df.Count() {
			t.Fatalf("%s: record_count %d, file has %d rows", df.FilePath(), df.Count(), len(ids))
		}
		for _, id := range ids {
			r := expectRow(id)
			if got := human(tbl.Schema(), spec, "cat", p); got != r.Cat {
				t.Fatalf("%s: id %d has cat %s but partition cat=%s", df.FilePath(), id, r.Cat, got)
			}
			wantDay := "null"
			if r.TS != nil {
				wantDay = time.UnixMicro(*r.TS).UTC().Format("2006-01-02")
			}
			if got := human(tbl.Schema(), spec, "ts_day", p); got != wantDay {
				t.Fatalf("%s: id %d has day %s but partition ts_day=%s", df.FilePath(), id, wantDay, got)
			}
			wantTrunc := "null"
			if r.Name != nil {
				wantTrunc = (*r.Name)[:2]
			}
			if got := human(tbl.Schema(), spec, "name_trunc", p); got != wantTrunc {
				t.Fatalf("%s: id %d has name prefix %s but partition name_trunc=%s", df.FilePath(), id, wantTrunc, got)
			}
		}
		// Files sit in Hive-style folders named after their partition.
		if !strings.Contains(df.FilePath(), "/cat="+human(tbl.Schema(), spec, "cat", p)+"/") {
			t.Errorf("%s is not under cat=%s", df.FilePath(), human(tbl.Schema(), spec, "cat", p))
		}
	}
	if got := sum["changed-partition-count"]; got != strconv.Itoa(len(tuples)) {
		t.Errorf("changed-partition-count=%s, files cover %d partitions", got, len(tuples))
	}
}

// human renders a partition value the way Iceberg paths show it.
func human(sc *iceberg.Schema, spec iceberg.PartitionSpec, field string, p map[int]any) string {
	for _, f := range spec.Fields() {
		if f.Name == field {
			if v := p[f.FieldID]; v != nil {
				src, ok := sc.FindFieldByID(f.SourceID())
				if !ok {
					return fmt.Sprintf("no source column %d", f.SourceID())
				}
				return f.Transform.ToHumanStrType(f.Transform.ResultType(src.Type), v)
			}
			return "null"
		}
	}
	return "?"
}

// checkSummary checks a write's snapshot summary against what is on disk
// and what was written. res.Summary must be the committed summary.
func checkSummary(t *testing.T, e *env, name string, res *ops.Result, sum map[string]string, added, total int64) {
	t.Helper()
	if res.SnapshotID == nil {
		t.Fatal("result has no snapshot id")
	}
	for k, v := range sum {
		if res.Summary[k] != v {
			t.Errorf("result summary %s=%q, committed %q", k, res.Summary[k], v)
		}
	}
	if res.Operation != "append" {
		t.Errorf("operation %q, want append", res.Operation)
	}
	want := map[string]string{
		"added-records":  strconv.FormatInt(added, 10),
		"total-records":  strconv.FormatInt(total, 10),
		"engine-name":    ops.EngineName,
		"engine-version": ops.Version,
	}
	for k, v := range want {
		if sum[k] != v {
			t.Errorf("summary %s=%q, want %q (summary %v)", k, sum[k], v, sum)
		}
	}
	files := e.dataFiles(t, name)
	if got := sum["total-data-files"]; got != strconv.Itoa(len(files)) {
		t.Errorf("total-data-files=%s, %d files on disk", got, len(files))
	}
	added64, _ := strconv.ParseInt(sum["added-data-files"], 10, 64)
	if added64 < 1 || added64 != res.Metrics.Files {
		t.Errorf("added-data-files=%s, metrics files %d", sum["added-data-files"], res.Metrics.Files)
	}
	var size int64
	for _, f := range files {
		size += fileSize(t, f)
	}
	if got := sum["total-files-size"]; got != strconv.FormatInt(size, 10) {
		t.Errorf("total-files-size=%s, files on disk hold %d bytes", got, size)
	}
}

func fileSize(t testing.TB, p string) int64 {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}
