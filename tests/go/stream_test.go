package gotests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyiceberg-go/pyiceberg-go/core/ops"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/stream"
)

func streamReq(op, tbl, query string, batch int64) request.Request {
	return request.Request{Op: op, Table: tbl, Stream: &request.Stream{QueryID: query, BatchID: &batch}}
}

func lastBatch(t *testing.T, e *env, tbl, query string) *stream.Committed {
	t.Helper()
	res, err := ops.Execute(ctxT(t), e.session(t), &request.Request{Op: request.OpLastCommittedBatch, Table: tbl, Stream: &request.Stream{QueryID: query}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	last, _ := res.(map[string]any)["last"].(*stream.Committed)
	return last
}

// A batch id at or below the query's last committed one commits nothing
// and writes no file; later batches and other queries commit.
func TestStreamBatchCommittedOnce(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "local.db.st"}, rowsReader(t, 0, 5, 1))
	if last := lastBatch(t, e, "local.db.st", "q1"); last != nil {
		t.Fatalf("no batch yet, got %+v", last)
	}
	req := streamReq(request.OpAppend, "local.db.st", "q1", 0)
	req.Options = map[string]string{"snapshot-property.kafka.offsets": `{"p0":10}`}
	r := mustWrite(t, s, req, rowsReader(t, 5, 5, 1))
	if r.Skipped || r.SnapshotID == nil {
		t.Fatalf("first commit of batch 0: %+v", r)
	}
	if r.Summary[stream.QueryIDKey] != "q1" || r.Summary[stream.EpochIDKey] != "0" || r.Summary["kafka.offsets"] != `{"p0":10}` {
		t.Fatalf("summary %v", r.Summary)
	}
	files := len(e.dataFiles(t, "st"))
	for _, b := range []int64{0, 0} {
		r := mustWrite(t, s, streamReq(request.OpAppend, "local.db.st", "q1", b), rowsReader(t, 5, 5, 1))
		if !r.Skipped || r.SnapshotID != nil || r.LastBatchID == nil || *r.LastBatchID != 0 {
			t.Fatalf("replay of batch %d: %+v", b, r)
		}
	}
	// Another query's batch 0 commits; q1's batch 3 (ids may jump) commits.
	mustWrite(t, s, streamReq(request.OpAppend, "local.db.st", "q2", 0), rowsReader(t, 10, 5, 1))
	mustWrite(t, s, streamReq(request.OpAppend, "local.db.st", "q1", 3), rowsReader(t, 15, 5, 1))
	if r := mustWrite(t, s, streamReq(request.OpAppend, "local.db.st", "q1", 2), rowsReader(t, 99, 5, 1)); !r.Skipped || *r.LastBatchID != 3 {
		t.Fatalf("batch 2 after 3: %+v", r)
	}
	if got := len(readRows(t, s, "local.db.st", nil)); got != 20 {
		t.Fatalf("rows %d, want 20", got)
	}
	if got := len(e.dataFiles(t, "st")); got != files+2 {
		t.Fatalf("data files %d, want %d: a skipped batch leaves no file", got, files+2)
	}
	last := lastBatch(t, e, "local.db.st", "q1")
	if last == nil || last.BatchID != 3 || last.Summary[stream.EpochIDKey] != "3" {
		t.Fatalf("last of q1: %+v", last)
	}
	if last := lastBatch(t, e, "local.db.st", "q2"); last == nil || last.BatchID != 0 {
		t.Fatalf("last of q2: %+v", last)
	}
	// complete mode: an overwrite of everything, skipped the same way.
	ow := streamReq(request.OpOverwrite, "local.db.st", "q3", 7)
	ow.Filter = "true"
	if r := mustWrite(t, s, ow, rowsReader(t, 0, 3, 1)); r.Skipped || r.Operation != "overwrite" {
		t.Fatalf("complete batch: %+v", r)
	}
	if r := mustWrite(t, s, ow, rowsReader(t, 0, 3, 1)); !r.Skipped {
		t.Fatalf("complete replay: %+v", r)
	}
	if got := len(readRows(t, s, "local.db.st", nil)); got != 3 {
		t.Fatalf("rows after complete %d, want 3", got)
	}
}

// The check runs again inside the commit: a writer of the same query that
// commits the batch while ours is writing its data makes ours skip.
func TestStreamBatchRecheckedAtCommit(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "local.db.race"}, rowsReader(t, 0, 5, 1))
	for _, op := range []string{request.OpAppend, request.OpOverwritePartitions} {
		batch := int64(map[string]int{request.OpAppend: 1, request.OpOverwritePartitions: 2}[op])
		in := newGenReader(100, 5, 2, func(i int) error {
			if i == 1 { // our write already passed the first check
				mustWrite(t, e.session(t), streamReq(request.OpAppend, "local.db.race", "q", batch), rowsReader(t, 200, 5, 1))
			}
			return nil
		})
		r, err := write(ctxT(t), s, streamReq(op, "local.db.race", "q", batch), in)
		if err != nil || !r.Skipped || r.LastBatchID == nil || *r.LastBatchID != batch {
			t.Fatalf("%s: %+v, %v", op, r, err)
		}
	}
	if got := len(readRows(t, s, "local.db.race", nil)); got != 15 {
		t.Fatalf("rows %d, want 15", got)
	}
	// Only the winners' files remain.
	var left int
	_ = filepath.Walk(e.tableDir("race"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".parquet") {
			left++
		}
		return nil
	})
	if left != 3 {
		t.Fatalf("%d data files, want 3 (the losers' files are deleted)", left)
	}
}

func TestStreamRequestValidation(t *testing.T) {
	for _, doc := range []string{
		`{"op": "append", "table": "db.t", "stream": {"query_id": "q"}}`,
		`{"op": "append", "table": "db.t", "stream": {"query_id": " ", "batch_id": 1}}`,
		`{"op": "append", "table": "db.t", "stream": {"query_id": "q", "batch_id": -1}}`,
		`{"op": "delete", "table": "db.t", "filter": "true", "stream": {"query_id": "q", "batch_id": 1}}`,
		`{"op": "last_committed_batch", "table": "db.t"}`,
		`{"op": "last_committed_batch", "table": "db.t", "stream": {"query_id": "q", "batch_id": 1}}`,
		`{"op": "append", "table": "db.t", "stream": {"query_id": "q", "batch_id": 1, "x": 1}}`,
	} {
		if _, err := request.Decode([]byte(doc)); err == nil {
			t.Errorf("accepted %s", doc)
		}
	}
	// The stream keys come from the stream batch only.
	e := newEnv(t)
	s := e.session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "local.db.t"}, rowsReader(t, 0, 1, 1))
	for _, k := range []string{stream.QueryIDKey, stream.EpochIDKey} {
		_, err := write(ctxT(t), s, request.Request{Op: request.OpAppend, Table: "local.db.t", Options: map[string]string{"snapshot-property." + k: "1"}}, rowsReader(t, 0, 1, 1))
		if err == nil || !strings.Contains(err.Error(), "would overwrite") {
			t.Errorf("snapshot-property.%s: %v", k, err)
		}
	}
}
