package gotests

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/ops"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/scan"
	"github.com/pyiceberg-go/pyiceberg-go/core/session"
	corewrite "github.com/pyiceberg-go/pyiceberg-go/core/write"
)

// The distributed write's documents go through JSON and request.Decode,
// as they do between a worker, the coordinator and the C ABI.

// execDoc decodes doc as the C ABI does and runs it.
func execDoc(t testing.TB, s *session.Session, doc map[string]any, in array.RecordReader) (any, error) {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	req, err := request.Decode(b)
	if err != nil {
		if in != nil {
			in.Release()
		}
		return nil, err
	}
	return ops.Execute(ctxT(t), s, req, in, nil)
}

// task is one write_files call's descriptions as a worker sends them: JSON.
func writeTask(t testing.TB, s *session.Session, table, mode, writeID string, task, attempt int64, in array.RecordReader, extra map[string]any) []json.RawMessage {
	t.Helper()
	doc := map[string]any{"op": "write_files", "table": table,
		"distributed": map[string]any{"mode": mode, "write_id": writeID, "task": task, "attempt": attempt}}
	for k, v := range extra {
		doc[k] = v
	}
	res, err := execDoc(t, s, doc, in)
	if err != nil {
		t.Fatalf("write_files task %d attempt %d: %v", task, attempt, err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Files []json.RawMessage `json:"files"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out.Files
}

func commitDoc(table, mode, writeID string, files []json.RawMessage, extra map[string]any) map[string]any {
	if files == nil {
		files = []json.RawMessage{}
	}
	doc := map[string]any{"op": "commit_files", "table": table,
		"distributed": map[string]any{"mode": mode, "write_id": writeID, "files": files}}
	for k, v := range extra {
		doc[k] = v
	}
	return doc
}

func commitFiles(t testing.TB, s *session.Session, table, mode, writeID string, files []json.RawMessage, in array.RecordReader, extra map[string]any) (*ops.CommitResult, error) {
	t.Helper()
	res, err := execDoc(t, s, commitDoc(table, mode, writeID, files, extra), in)
	if err != nil {
		return nil, err
	}
	return res.(*ops.CommitResult), nil
}

func filePaths(t testing.TB, files []json.RawMessage) []string {
	t.Helper()
	var out []string
	for _, f := range files {
		var d request.DataFile
		if err := json.Unmarshal(f, &d); err != nil {
			t.Fatal(err)
		}
		p := strings.TrimPrefix(d.FilePath, "file://")
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// emptyReader is a stream of the base schema with no rows: the schema a
// create's commit plans with.
func emptyReader(t testing.TB) array.RecordReader {
	t.Helper()
	rdr, err := array.NewRecordReader(baseSchema, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rdr
}

func catPartitioned(t testing.TB, s *session.Session) {
	t.Helper()
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.t",
		PartitionBy: []request.PartitionField{{Transform: "identity", Column: "cat"}, {Transform: "bucket[4]", Column: "id"}}}, rowsReader(t, 0, 30, 1))
}

// A coordinator commits the descriptions of 100 workers as one append
// snapshot: its added-data-files are the files the workers wrote, its
// records their rows, and no other file of the write is left.
func TestDistributedHundredWorkersOneSnapshot(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	catPartitioned(t, s)
	before := e.dataFiles(t, "t")
	const workers, rowsPer = 100, 25
	var files []json.RawMessage
	for w := range int64(workers) {
		fs := writeTask(t, s, "db.t", "append", "job1", w, 0, rowsReader(t, 1000+w*rowsPer, rowsPer, 1), nil)
		for _, f := range fs {
			if len(f) >= 2048 {
				t.Errorf("a description is %d bytes, want < 2 KB: %s", len(f), f)
			}
		}
		files = append(files, fs...)
	}
	snaps := snapshotCount(t, s, "db.t")
	res, err := commitFiles(t, s, "db.t", "append", "job1", files, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := snapshotCount(t, s, "db.t"); got != snaps+1 {
		t.Fatalf("%d snapshots after the commit, want %d", got, snaps+1)
	}
	if res.Operation != "append" || res.Summary["added-data-files"] != strconv.Itoa(len(files)) ||
		res.Summary["added-records"] != strconv.Itoa(workers*rowsPer) || res.Summary["total-records"] != strconv.Itoa(30+workers*rowsPer) ||
		res.Summary["pyiceberg-go.write-id"] != "job1" {
		t.Fatalf("summary %v, want an append of %d files and %d rows", res.Summary, len(files), workers*rowsPer)
	}
	if res.DeletedFilesCount != 0 {
		t.Errorf("deleted %d files of a commit with no leftovers", res.DeletedFilesCount)
	}
	equalRows(t, readRows(t, s, "db.t", nil), expectRows([2]int64{0, 30}, [2]int64{1000, 1000 + workers*rowsPer}))
	want := append(slices.Clone(before), filePaths(t, files)...)
	slices.Sort(want)
	if got := e.dataFiles(t, "t"); !slices.Equal(got, want) {
		t.Errorf("data files on disk:\n%v\nwant the table's before and the workers':\n%v", got, want)
	}
	// The same write cannot commit twice, and its files stay the table's.
	if _, err := commitFiles(t, s, "db.t", "append", "job1", files, nil, nil); !errors.Is(err, errs.ErrValidation) || !strings.Contains(err.Error(), "already committed") {
		t.Fatalf("second commit of job1: %v, want already committed", err)
	}
	if _, err := execDoc(t, s, map[string]any{"op": "abort_files", "table": "db.t", "distributed": map[string]any{"mode": "append", "write_id": "job1"}}, nil); !errors.Is(err, errs.ErrValidation) {
		t.Fatalf("abort of a committed write: %v, want a validation error", err)
	}
	if got := snapshotCount(t, s, "db.t"); got != snaps+1 {
		t.Fatalf("%d snapshots, want %d", got, snaps+1)
	}
	equalRows(t, readRows(t, s, "db.t", nil), expectRows([2]int64{0, 30}, [2]int64{1000, 1000 + workers*rowsPer}))
}

// A task killed mid-write is retried under another attempt: the commit of
// the attempts that finished counts each row once and deletes what the
// killed attempt left; descriptions of two attempts of one task are
// refused and nothing is committed.
func TestDistributedRetriedTask(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	catPartitioned(t, s)
	before := e.dataFiles(t, "t")
	t0 := writeTask(t, s, "db.t", "append", "w2", 0, 0, rowsReader(t, 100, 40, 1), nil)
	killed := writeTask(t, s, "db.t", "append", "w2", 1, 0, rowsReader(t, 200, 40, 1), nil)
	// The killed attempt also left a partial file nobody described.
	partial := filepath.Join(e.tableDir("t"), "data", "cat=c0", "00001-0-w2-00099.parquet")
	if err := os.MkdirAll(filepath.Dir(partial), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(partial, []byte("PAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	retried := writeTask(t, s, "db.t", "append", "w2", 1, 1, rowsReader(t, 200, 40, 1), nil)
	snaps := snapshotCount(t, s, "db.t")

	_, err := commitFiles(t, s, "db.t", "append", "w2", append(append(slices.Clone(t0), killed...), retried...), nil, nil)
	if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), "task 1 is given by attempts 0 and 1") {
		t.Fatalf("commit of two attempts of task 1: %v", err)
	}
	if snapshotCount(t, s, "db.t") != snaps {
		t.Fatal("a refused commit committed")
	}
	// A failed commit removes every file of the write.
	if got := e.dataFiles(t, "t"); !slices.Equal(got, before) {
		t.Fatalf("files after a failed commit:\n%v\nwant\n%v", got, before)
	}

	// The job runs again (a new write id); attempt 0 of task 1 dies again.
	t0 = writeTask(t, s, "db.t", "append", "w3", 0, 0, rowsReader(t, 100, 40, 1), nil)
	writeTask(t, s, "db.t", "append", "w3", 1, 0, rowsReader(t, 200, 40, 1), nil)
	retried = writeTask(t, s, "db.t", "append", "w3", 1, 1, rowsReader(t, 200, 40, 1), nil)
	files := append(slices.Clone(t0), retried...)
	res, err := commitFiles(t, s, "db.t", "append", "w3", files, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.DeletedFilesCount == 0 {
		t.Error("the killed attempt's files were not deleted")
	}
	equalRows(t, readRows(t, s, "db.t", nil), expectRows([2]int64{0, 30}, [2]int64{100, 140}, [2]int64{200, 240}))
	want := append(slices.Clone(before), filePaths(t, files)...)
	slices.Sort(want)
	if got := e.dataFiles(t, "t"); !slices.Equal(got, want) {
		t.Errorf("data files on disk:\n%v\nwant\n%v", got, want)
	}
}

// Descriptions written against a schema that changed since are refused,
// nothing is committed and the write's files are gone.
func TestDistributedRefusesChangedSchema(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	catPartitioned(t, s)
	before := e.dataFiles(t, "t")
	files := writeTask(t, s, "db.t", "append", "w", 0, 0, rowsReader(t, 100, 40, 1), nil)
	if _, err := ops.Execute(ctxT(t), s, &request.Request{Op: request.OpUpdateTable, Table: "db.t",
		Changes: []request.Change{{Action: request.ActionAddColumn, Path: []string{"extra"}, Type: "int"}}}, nil, nil); err != nil {
		t.Fatal(err)
	}
	snaps := snapshotCount(t, s, "db.t")
	_, err := commitFiles(t, s, "db.t", "append", "w", files, nil, nil)
	if !errors.Is(err, errs.ErrValidation) || !strings.Contains(err.Error(), "written against schema") {
		t.Fatalf("commit after a schema change: %v, want a validation error", err)
	}
	if snapshotCount(t, s, "db.t") != snaps {
		t.Fatal("committed")
	}
	if got := e.dataFiles(t, "t"); !slices.Equal(got, before) {
		t.Fatalf("files after a refused commit:\n%v\nwant\n%v", got, before)
	}
	// A tampered description (another folder, another plan) is refused too.
	files = writeTask(t, s, "db.t", "append", "w4", 0, 0, rowsReader(t, 100, 40, 1), nil)
	var d map[string]any
	if err := json.Unmarshal(files[0], &d); err != nil {
		t.Fatal(err)
	}
	for key, v := range map[string]any{"file_path": "file:///etc/passwd", "plan": "0123", "task": 7} {
		bad := map[string]any{}
		for k, x := range d {
			bad[k] = x
		}
		bad[key] = v
		b, _ := json.Marshal(bad)
		if _, err := commitFiles(t, s, "db.t", "append", "w4", []json.RawMessage{b}, nil, nil); !errors.Is(err, errs.ErrValidation) {
			t.Errorf("description with %s=%v: %v, want a validation error", key, v, err)
		}
	}
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Fatalf("/etc/passwd: %v", err)
	}
}

// overwritePartitions replaces the union of the partitions the tasks
// wrote; overwrite(filter) deletes what matches and adds every task's rows.
func TestDistributedOverwrites(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.t",
		PartitionBy: []request.PartitionField{{Transform: "identity", Column: "cat"}}}, rowsReader(t, 0, 30, 1))
	// Task 0 writes ids 300..302 (cats c0, c1, c2 by id%3 = 0,1,2): use
	// single-row batches to control the partitions each task covers.
	one := func(id int64) array.RecordReader { return rowsReader(t, id, 1, 1) }
	f0 := writeTask(t, s, "db.t", "overwritePartitions", "op1", 0, 0, one(300), nil) // c0
	f1 := writeTask(t, s, "db.t", "overwritePartitions", "op1", 1, 0, one(301), nil) // c1
	res, err := commitFiles(t, s, "db.t", "overwritePartitions", "op1", append(f0, f1...), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Operation != "overwrite" || res.Summary["replace-partitions"] != "true" {
		t.Fatalf("result %+v", res.Result)
	}
	var want []row
	for _, r := range expectRows([2]int64{0, 30}) {
		if r.Cat == "c2" {
			want = append(want, r)
		}
	}
	want = append(want, expectRow(300), expectRow(301))
	sort.Slice(want, func(i, j int) bool { return want[i].ID < want[j].ID })
	equalRows(t, readRows(t, s, "db.t", nil), want)

	filter := map[string]any{"filter": "id < 10"}
	g0 := writeTask(t, s, "db.t", "overwrite", "op2", 0, 0, rowsReader(t, 400, 5, 1), filter)
	g1 := writeTask(t, s, "db.t", "overwrite", "op2", 1, 0, rowsReader(t, 500, 5, 1), filter)
	if _, err := commitFiles(t, s, "db.t", "overwrite", "op2", append(g0, g1...), nil, filter); err != nil {
		t.Fatal(err)
	}
	var want2 []row
	for _, r := range want {
		if r.ID >= 10 {
			want2 = append(want2, r)
		}
	}
	want2 = append(want2, expectRows([2]int64{400, 405}, [2]int64{500, 505})...)
	sort.Slice(want2, func(i, j int) bool { return want2[i].ID < want2[j].ID })
	equalRows(t, readRows(t, s, "db.t", nil), want2)
}

// createOrReplace: tasks plan the new table from their data, the
// coordinator from the same schema; the table, its spec and sort order
// and its data appear in one commit. A create whose table appeared in
// between fails and leaves no file.
func TestDistributedCreate(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	shape := map[string]any{
		"partition_by": []map[string]string{{"transform": "day", "column": "ts"}, {"transform": "identity", "column": "cat"}},
		"sort_order":   []string{"id DESC"},
		"properties":   map[string]string{"format-version": "3"},
	}
	var files []json.RawMessage
	for w := range int64(4) {
		files = append(files, writeTask(t, s, "db.c", "createOrReplace", "cr1", w, 0, rowsReader(t, w*200, 100, 2), shape)...)
	}
	if _, err := ops.LoadTable(ctxT(t), s, "db.c"); !errors.Is(err, errs.ErrNoSuchTable) {
		t.Fatalf("the table exists before the commit: %v", err)
	}
	res, err := commitFiles(t, s, "db.c", "createOrReplace", "cr1", files, emptyReader(t), shape)
	if err != nil {
		t.Fatal(err)
	}
	if snapshotCount(t, s, "db.c") != 1 || res.Summary["added-records"] != "800" || res.Summary["added-data-files"] != strconv.Itoa(len(files)) {
		t.Fatalf("result %+v", res.Result)
	}
	tbl := loadTable(t, s, "db.c")
	spec := tbl.Metadata().PartitionSpec()
	if tbl.Metadata().Version() != 3 || tbl.Metadata().SortOrder().OrderID() != 1 || spec.NumFields() != 2 {
		t.Fatalf("table metadata: v%d, order %v, spec %v", tbl.Metadata().Version(), tbl.Metadata().SortOrder(), spec)
	}
	tasks, err := tbl.Scan().PlanFiles(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		if task.File.SortOrderID() == nil || *task.File.SortOrderID() != 1 {
			t.Errorf("%s: sort order %v, want 1", task.File.FilePath(), task.File.SortOrderID())
		}
	}
	equalRows(t, readRows(t, s, "db.c", nil), expectRows([2]int64{0, 800}))

	// create (not createOrReplace) of a table that now exists: refused by
	// the first task already.
	doc := map[string]any{"op": "write_files", "table": "db.c", "distributed": map[string]any{"mode": "create", "write_id": "cr2", "task": 0, "attempt": 0}}
	if _, err := execDoc(t, s, doc, rowsReader(t, 0, 10, 1)); !errors.Is(err, errs.ErrTableAlreadyExists) {
		t.Fatalf("write_files of a create of an existing table: %v", err)
	}
	// A create whose table another writer created in between.
	files = writeTask(t, s, "db.d", "create", "cr3", 0, 0, rowsReader(t, 0, 10, 1), nil)
	ours := filePaths(t, files)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.d"}, rowsReader(t, 50, 10, 1))
	var before []string
	for _, f := range e.dataFiles(t, "d") {
		if !slices.Contains(ours, f) {
			before = append(before, f)
		}
	}
	if len(before) == 0 || len(ours) == 0 {
		t.Fatal("no files written")
	}
	if _, err := commitFiles(t, s, "db.d", "create", "cr3", files, emptyReader(t), nil); !errors.Is(err, errs.ErrTableAlreadyExists) {
		t.Fatalf("commit of a create that lost the race: %v", err)
	}
	if got := e.dataFiles(t, "d"); !slices.Equal(got, before) {
		t.Fatalf("files:\n%v\nwant\n%v", got, before)
	}
	equalRows(t, readRows(t, s, "db.d", nil), expectRows([2]int64{50, 60}))
}

// Exactly-once keys: a batch a streaming query committed before is not
// committed again by another distributed write of that batch.
func TestDistributedStreamBatch(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	catPartitioned(t, s)
	st := map[string]any{"stream": map[string]any{"query_id": "q", "batch_id": 5}}
	f := writeTask(t, s, "db.t", "append", "s1", 0, 0, rowsReader(t, 100, 10, 1), st)
	res, err := commitFiles(t, s, "db.t", "append", "s1", f, nil, st)
	if err != nil || res.SnapshotID == nil || res.Summary["spark.sql.streaming.epochId"] != "5" {
		t.Fatalf("first commit of batch 5: %+v %v", res, err)
	}
	committed := e.dataFiles(t, "t")
	// The batch is replayed by a second job: its tasks ran before the
	// first commit (so they wrote files); its commit is skipped and its
	// files deleted.
	f2 := writeTask(t, s, "db.t", "append", "s2", 0, 0, rowsReader(t, 100, 10, 1), nil)
	res, err = commitFiles(t, s, "db.t", "append", "s2", f2, nil, st)
	if err != nil || !res.Skipped || res.SnapshotID != nil || *res.LastBatchID != 5 {
		t.Fatalf("replayed batch 5: %+v %v", res, err)
	}
	if got := e.dataFiles(t, "t"); !slices.Equal(got, committed) {
		t.Fatalf("files after a skipped batch:\n%v\nwant\n%v", got, committed)
	}
	// write_files of a committed batch writes nothing.
	doc := map[string]any{"op": "write_files", "table": "db.t", "stream": st["stream"],
		"distributed": map[string]any{"mode": "append", "write_id": "s3", "task": 0, "attempt": 0}}
	out, err := execDoc(t, s, doc, rowsReader(t, 100, 10, 1))
	if fr, ok := out.(*ops.FilesResult); err != nil || !ok || !fr.Skipped || len(fr.Files) != 0 {
		t.Fatalf("write_files of a committed batch: %+v %v", out, err)
	}
	equalRows(t, readRows(t, s, "db.t", nil), expectRows([2]int64{0, 30}, [2]int64{100, 110}))
}

// abort_files removes every file of a write, described or not.
func TestDistributedAbort(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	catPartitioned(t, s)
	before := e.dataFiles(t, "t")
	snaps := snapshotCount(t, s, "db.t")
	f := writeTask(t, s, "db.t", "append", "ab", 0, 0, rowsReader(t, 100, 50, 1), nil)
	writeTask(t, s, "db.t", "append", "ab", 1, 0, rowsReader(t, 200, 50, 1), nil) // never described
	if len(e.dataFiles(t, "t")) <= len(before) {
		t.Fatal("the tasks wrote no file")
	}
	res, err := execDoc(t, s, map[string]any{"op": "abort_files", "table": "db.t", "distributed": map[string]any{"mode": "append", "write_id": "ab", "files": f}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ar := res.(*ops.AbortResult); ar.DeletedFilesCount == 0 || len(ar.FailedDeletes) != 0 {
		t.Fatalf("abort: %+v", ar)
	}
	if got := e.dataFiles(t, "t"); !slices.Equal(got, before) || snapshotCount(t, s, "db.t") != snaps {
		t.Fatalf("files after abort:\n%v\nwant\n%v", got, before)
	}
	// Abort of a create whose table does not exist: its folder is the one
	// the create would use.
	writeTask(t, s, "db.n", "create", "ab2", 0, 0, rowsReader(t, 0, 10, 1), nil)
	if len(e.dataFiles(t, "n")) == 0 {
		t.Fatal("no file written")
	}
	if _, err := execDoc(t, s, map[string]any{"op": "abort_files", "table": "db.n", "distributed": map[string]any{"mode": "create", "write_id": "ab2"}}, nil); err != nil {
		t.Fatal(err)
	}
	if got := e.dataFiles(t, "n"); len(got) != 0 {
		t.Fatalf("left after abort: %v", got)
	}
}

// The documents are strict: each operation takes its own keys.
func TestDistributedDocuments(t *testing.T) {
	for doc, want := range map[string]string{
		`{"op":"write_files","table":"db.t","distributed":{"mode":"append","write_id":"a","task":0,"attempt":0}}`:   "",
		`{"op":"write_files","table":"db.t","distributed":{"mode":"append","write_id":"a","task":0}}`:               "needs distributed.task and distributed.attempt",
		`{"op":"write_files","table":"db.t","distributed":{"mode":"merge","write_id":"a","task":0,"attempt":0}}`:    "is not append",
		`{"op":"write_files","table":"db.t","distributed":{"mode":"append","write_id":"a-b","task":0,"attempt":0}}`: "letters, digits and underscores",
		`{"op":"write_files","table":"db.t","distributed":{"mode":"append","write_id":"a","task":-1,"attempt":0}}`:  ">= 0",
		`{"op":"write_files","table":"db.t"}`:                                                                                                        "needs distributed",
		`{"op":"append","table":"db.t","distributed":{"mode":"append","write_id":"a"}}`:                                                              "takes no distributed",
		`{"op":"commit_files","table":"db.t","distributed":{"mode":"append","write_id":"a","task":1}}`:                                               "takes no distributed.task",
		`{"op":"commit_files","table":"db.t","distributed":{"mode":"overwrite","write_id":"a"}}`:                                                     "needs a filter",
		`{"op":"commit_files","table":"db.t","distributed":{"mode":"append","write_id":"a"},"partition_by":[{"transform":"identity","column":"x"}]}`: "create/replace only",
		`{"op":"commit_files","table":"db.t","distributed":{"mode":"create","write_id":"a"},"partition_by":[{"transform":"identity","column":"x"}]}`: "",
		`{"op":"commit_files","table":"db.t","distributed":{"mode":"append","write_id":"a","files":[{"file_path":"x","unknown":1}]}}`:                "unknown key",
		`{"op":"abort_files","table":"db.t","distributed":{"mode":"append","write_id":"a"},"options":{"a":"b"}}`:                                     "takes table, distributed",
		`{"op":"abort_files","table":"db.t","distributed":{"mode":"overwrite","write_id":"a"}}`:                                                      "",
	} {
		_, err := request.Decode([]byte(doc))
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", doc, err)
		case want != "" && (!errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v, want an invalid argument with %q", doc, err, want)
		}
	}
}

// Partition tuples of every transform and type survive the description:
// a distributed write puts each row in the partition a one-machine write
// puts it in.
func TestDistributedPartitionValuesRoundTrip(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "l", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "ts", Type: tsType, Nullable: true},
		{Name: "ok", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "dec", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
	}, nil)
	mk := func(n int) array.RecordReader {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		defer b.Release()
		for k := range n {
			if k%5 == 4 {
				for f := range b.Fields() {
					b.Field(f).AppendNull()
				}
				continue
			}
			b.Field(0).(*array.Int32Builder).Append(int32(k%7 - 3))
			b.Field(1).(*array.Int64Builder).Append(int64(k) * 1_000_000_007)
			b.Field(2).(*array.StringBuilder).Append([]string{"", "a", "héllo wörld", "a/b=c"}[k%4])
			b.Field(3).(*array.BinaryBuilder).Append([]byte{byte(k % 3), 0xff}[:k%3])
			b.Field(4).(*array.Date32Builder).Append(arrow.Date32(int32(k*37 - 500)))
			b.Field(5).(*array.TimestampBuilder).Append(arrow.Timestamp(tsBase + int64(k)*tsStep*7))
			b.Field(6).(*array.BooleanBuilder).Append(k%2 == 0)
			b.Field(7).(*array.Decimal128Builder).Append(decimalOf(int64(k%9) * 125))
		}
		rec := b.NewRecordBatch()
		defer rec.Release()
		rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
		if err != nil {
			t.Fatal(err)
		}
		return rdr
	}
	by := []map[string]string{
		{"transform": "identity", "column": "i"}, {"transform": "bucket[5]", "column": "l"}, {"transform": "identity", "column": "s"},
		{"transform": "identity", "column": "b"}, {"transform": "month", "column": "d"}, {"transform": "hour", "column": "ts"},
		{"transform": "identity", "column": "ok"}, {"transform": "identity", "column": "dec"}, {"transform": "truncate[2]", "column": "s"},
	}
	shape := map[string]any{"partition_by": by}
	files := writeTask(t, s, "db.dist", "create", "rt", 0, 0, mk(60), shape)
	rdr := mk(0)
	if _, err := commitFiles(t, s, "db.dist", "create", "rt", files, rdr, shape); err != nil {
		t.Fatal(err)
	}
	if _, err := execDoc(t, s, map[string]any{"op": "create", "table": "db.one", "partition_by": by}, mk(60)); err != nil {
		t.Fatal(err)
	}
	tuples := func(name string) []string {
		tbl := loadTable(t, s, name)
		tasks, err := tbl.Scan().PlanFiles(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, task := range tasks {
			p := task.File.Partition()
			var parts []string
			spec := tbl.Metadata().PartitionSpec()
			for _, f := range spec.Fields() {
				parts = append(parts, fmt.Sprintf("%T:%v", p[f.FieldID], p[f.FieldID]))
			}
			out = append(out, fmt.Sprintf("%v rows=%d", parts, task.File.Count()))
		}
		slices.Sort(out)
		return out
	}
	got, want := tuples("db.dist"), tuples("db.one")
	if len(want) < 10 || !slices.Equal(got, want) {
		t.Fatalf("distributed partitions:\n%s\none-machine:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func decimalOf(unscaled int64) decimal128.Num { return decimal128.FromI64(unscaled) }

// A distributed read's splits read disjoint shares of the files whose
// union is the whole scan.
func TestScanSplits(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	catPartitioned(t, s)
	mustWrite(t, s, request.Request{Op: request.OpAppend, Table: "db.t"}, rowsReader(t, 100, 50, 1))
	snap := loadTable(t, s, "db.t").CurrentSnapshot().SnapshotID
	var all []row
	for i := range 3 {
		rdr, err := scan.Read(ctxT(t), s, &request.Request{Op: request.OpScan, Table: "db.t", SnapshotID: &snap, Filter: "id >= 10", Split: &request.Split{Index: i, Count: 3}}, memory.DefaultAllocator, nil)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rdr.Next() {
			ids := rdr.RecordBatch().Column(0).(*array.Int64)
			for k := range ids.Len() {
				all = append(all, expectRow(ids.Value(k)))
				n++
			}
		}
		rdr.Release()
		if n == 0 {
			t.Errorf("split %d read nothing", i)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	equalRows(t, all, expectRows([2]int64{10, 30}, [2]int64{100, 150}))
	if _, err := request.DecodeScan([]byte(`{"table":"db.t","split":{"index":3,"count":3}}`)); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Fatalf("split index 3 of 3: %v", err)
	}
}

// endingReader is a task's input that ends its write (end) when the
// task has read all of it: the write ends while the task's files are
// still being written, as a straggler of a failed job's sees it.
type endingReader struct {
	array.RecordReader
	end   func()
	ended bool
}

func (r *endingReader) Next() bool {
	if r.RecordReader.Next() {
		return true
	}
	if !r.ended {
		r.ended = true
		r.end()
	}
	return false
}

// A task of a distributed write that is still running when the write ends
// (aborted, committed, or its commit failed) deletes its own files and
// fails with a validation error naming the end; a task that starts after
// the end writes nothing. No file of the write is left in the data folder.
func TestDistributedStragglerLeavesNoFile(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	catPartitioned(t, s)
	before := e.dataFiles(t, "t")
	snaps := snapshotCount(t, s, "db.t")
	doc := func(op, writeID string, extra map[string]any) map[string]any {
		d := map[string]any{"mode": "append", "write_id": writeID}
		for k, v := range extra {
			d[k] = v
		}
		return map[string]any{"op": op, "table": "db.t", "distributed": d}
	}
	ended := func(err error, committed bool) {
		t.Helper()
		var we *corewrite.WriteEndedError
		var ac *corewrite.AlreadyCommittedError
		switch {
		case !errors.Is(err, errs.ErrValidation):
		case errors.As(err, &we) && (we.SnapshotID != 0) == committed:
			return
		case errors.As(err, &ac) && committed:
			return // a task that starts after the commit: the plan refuses it
		}
		t.Fatalf("straggler: %v, want the write's end (committed %v)", err, committed)
	}

	// Aborted while the task writes.
	in := &endingReader{RecordReader: rowsReader(t, 100, 200, 3), end: func() {
		if _, err := execDoc(t, s, doc("abort_files", "ab", nil), nil); err != nil {
			t.Errorf("abort: %v", err)
		}
	}}
	_, err := execDoc(t, s, doc("write_files", "ab", map[string]any{"task": 0, "attempt": 1}), in)
	ended(err, false)
	if !in.ended {
		t.Fatal("the write was not aborted during the task")
	}
	// A task that starts after the abort, and a retry of the same write.
	_, err = execDoc(t, s, doc("write_files", "ab", map[string]any{"task": 1, "attempt": 1}), rowsReader(t, 100, 20, 1))
	ended(err, false)
	if got := e.dataFiles(t, "t"); !slices.Equal(got, before) {
		t.Fatalf("files after an aborted write's stragglers:\n%v\nwant\n%v", got, before)
	}

	// Committed (without it) while the task writes.
	f := writeTask(t, s, "db.t", "append", "cm", 0, 0, rowsReader(t, 300, 10, 1), nil)
	in = &endingReader{RecordReader: rowsReader(t, 400, 200, 3), end: func() {
		if _, err := commitFiles(t, s, "db.t", "append", "cm", f, nil, nil); err != nil {
			t.Errorf("commit: %v", err)
		}
	}}
	_, err = execDoc(t, s, doc("write_files", "cm", map[string]any{"task": 1, "attempt": 0}), in)
	ended(err, true)
	_, err = execDoc(t, s, doc("write_files", "cm", map[string]any{"task": 2, "attempt": 0}), rowsReader(t, 500, 10, 1))
	ended(err, true)
	want := append(slices.Clone(before), filePaths(t, f)...)
	slices.Sort(want)
	if got := e.dataFiles(t, "t"); !slices.Equal(got, want) || snapshotCount(t, s, "db.t") != snaps+1 {
		t.Fatalf("files after a committed write's stragglers:\n%v\nwant\n%v", got, want)
	}
	equalRows(t, readRows(t, s, "db.t", nil), expectRows([2]int64{0, 30}, [2]int64{300, 310}))

	// A commit that fails (a file of another write) ends the write too.
	f = writeTask(t, s, "db.t", "append", "bad", 0, 0, rowsReader(t, 600, 10, 1), nil)
	g := writeTask(t, s, "db.t", "append", "other", 0, 0, rowsReader(t, 700, 10, 1), nil)
	if _, err := commitFiles(t, s, "db.t", "append", "bad", append(f, g...), nil, nil); !errors.Is(err, errs.ErrValidation) {
		t.Fatalf("commit of another write's file: %v", err)
	}
	_, err = execDoc(t, s, doc("write_files", "bad", map[string]any{"task": 1, "attempt": 0}), rowsReader(t, 800, 10, 1))
	ended(err, false)
	if _, err := execDoc(t, s, doc("abort_files", "other", nil), nil); err != nil {
		t.Fatal(err)
	}
	if got := e.dataFiles(t, "t"); !slices.Equal(got, want) {
		t.Fatalf("files after a failed commit's straggler:\n%v\nwant\n%v", got, want)
	}
}
