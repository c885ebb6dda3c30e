package gotests

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/microbatch"
	"github.com/pyiceberg-go/pyiceberg-go/core/ops"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/session"
)

// streamOffset runs stream_offset through the request document, as the C
// API does, and returns its start and end.
func streamOffset(t *testing.T, s *session.Session, mb map[string]any) (start, end *request.Offset, err error) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"op": "stream_offset", "table": "db.s", "micro_batch": mb})
	req, err := request.Decode(b)
	if err != nil {
		return nil, nil, err
	}
	res, err := ops.Execute(ctxT(t), s, req, nil, nil)
	if err != nil {
		return nil, nil, err
	}
	m := res.(map[string]any)
	return m["start"].(*request.Offset), m["end"].(*request.Offset), nil
}

// appended is one append snapshot of the model: its id and the ids of the
// rows it added.
type appended struct {
	snap int64
	ids  []int64
}

// streamTable builds db.s (partitioned by cat, so an append of rows of k
// categories adds k files) from a random sequence of appends, overwrites,
// deletes and compactions, and returns the appends in commit order.
func streamTable(t *testing.T, s *session.Session, r *rand.Rand) []appended {
	t.Helper()
	var model []appended
	next := int64(0)
	head := func() int64 { return loadTable(t, s, "db.s").CurrentSnapshot().SnapshotID }
	add := func(op string) {
		n := 1 + r.Int64N(12)
		req := request.Request{Op: op, Table: "db.s"}
		if op == request.OpCreate {
			req.PartitionBy = []request.PartitionField{{Transform: "identity", Column: "cat"}}
		}
		// One batch per row when asked, so a file can hold one row.
		mustWrite(t, s, req, rowsReader(t, next, n, 1))
		model = append(model, appended{head(), span(next, n)})
		next += n
	}
	add(request.OpCreate)
	for range 6 + r.IntN(10) {
		switch k := r.IntN(10); {
		case k < 7:
			add(request.OpAppend)
		case k == 7:
			mustWrite(t, s, request.Request{Op: request.OpOverwrite, Table: "db.s", Filter: "cat = 'c1'"}, rowsReader(t, 10_000+next, 2, 1))
			next += 2
		case k == 8:
			mustWrite(t, s, request.Request{Op: request.OpDelete, Table: "db.s", Filter: "cat = 'c2'"}, nil)
		default:
			if _, err := rewriteFiles(t, s, "db.s", map[string]any{"options": map[string]string{"rewrite-all": "true"}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return model
}

// TestMicroBatchesFollowSparksLimits streams random tables under random
// limits and checks the batches against a model: every appended row once,
// in commit order, files whole; max_files never exceeded; a batch ends only
// when the next file would pass max_files or its rows reached max_rows
// (soft: the file that reaches it is in the batch).
func TestMicroBatchesFollowSparksLimits(t *testing.T) {
	for seed := range uint64(14) {
		r := rand.New(rand.NewPCG(seed, 33))
		e := newEnv(t)
		s := e.session(t)
		model := streamTable(t, s, r)
		maxFiles, maxRows := int64(0), int64(0)
		if r.IntN(3) > 0 {
			maxFiles = 1 + r.Int64N(4)
		}
		if r.IntN(3) > 0 {
			maxRows = 1 + r.Int64N(15)
		}
		tbl := loadTable(t, s, "db.s")
		fs, err := tbl.FS(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		st := &microbatch.Stream{Meta: tbl.Metadata(), FS: fs, SkipOverwrite: true, SkipDelete: true}
		var start *request.Offset
		var streamed [][]int64 // the row ids of each file, in stream order
		var batches [][2]int   // each batch's files: [first, end) in streamed
		for range 1000 {
			end, err := st.Latest(ctxT(t), start, microbatch.Limits{MaxFiles: maxFiles, MaxRows: maxRows}, nil)
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if end == nil {
				break
			}
			files, err := st.Files(ctxT(t), start, *end)
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			first := len(streamed)
			for _, df := range files {
				streamed = append(streamed, fileIDs(t, df.FilePath()))
			}
			batches = append(batches, [2]int{first, len(streamed)})
			// The scan of the same batch through the request reads those rows.
			got, _, _, err := scanIDs(t, ctxT(t), e, request.Request{Table: "db.s", MicroBatch: &request.MicroBatch{Start: start, End: end, SkipOverwriteSnapshots: true, SkipDeleteSnapshots: true}})
			if err != nil {
				t.Fatal(err)
			}
			want := slices.Concat(streamed[first:]...)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d: scan of batch %d: %v, want %v", seed, len(batches), got, want)
			}
			start = end
		}
		// Every appended row once, snapshot by snapshot in commit order.
		var i int
		for _, a := range model {
			var got []int64
			for ; i < len(streamed) && len(got) < len(a.ids); i++ {
				got = append(got, streamed[i]...)
			}
			slices.Sort(got)
			if !slices.Equal(got, a.ids) {
				t.Fatalf("seed %d: snapshot %d streamed %v, want %v", seed, a.snap, got, a.ids)
			}
		}
		if i != len(streamed) {
			t.Fatalf("seed %d: %d files streamed beyond the appends", seed, len(streamed)-i)
		}
		// The batches are Spark's greedy cut of the stream's files.
		for b, span := range batches {
			n := int64(span[1] - span[0])
			rows := int64(0)
			for _, f := range streamed[span[0]:span[1]] {
				rows += int64(len(f))
			}
			last := int64(len(streamed[span[1]-1]))
			switch {
			case n == 0:
				t.Fatalf("seed %d: batch %d is empty", seed, b)
			case maxFiles > 0 && n > maxFiles:
				t.Fatalf("seed %d: batch %d has %d files, max %d", seed, b, n, maxFiles)
			case maxRows > 0 && n > 1 && rows-last >= maxRows:
				t.Fatalf("seed %d: batch %d went on after reaching %d rows", seed, b, maxRows)
			}
			if b == len(batches)-1 {
				continue
			}
			full := maxFiles > 0 && n == maxFiles
			reached := maxRows > 0 && rows >= maxRows
			if !full && !reached {
				t.Fatalf("seed %d: batch %d (%d files, %d rows) ended with room under max_files %d, max_rows %d", seed, b, n, rows, maxFiles, maxRows)
			}
		}
	}
}

// TestStreamOffsetDocument: the request's offsets, stream-from-timestamp,
// an end fixed by until_snapshot_id, Spark's refusals of overwrite and
// delete snapshots, and an expired start.
func TestStreamOffsetDocument(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.s"}, rowsReader(t, 0, 5, 1))
	first := loadTable(t, s, "db.s").CurrentSnapshot()
	mustWrite(t, s, request.Request{Op: request.OpAppend, Table: "db.s"}, rowsReader(t, 5, 5, 1))
	second := loadTable(t, s, "db.s").CurrentSnapshot()

	// One file: the first snapshot's; as Spark, the end is the position
	// of the next snapshot's first file.
	start, end, err := streamOffset(t, s, map[string]any{"max_files": 1})
	if err != nil || start == nil || start.SnapshotID != first.SnapshotID || end == nil || *end != (request.Offset{SnapshotID: second.SnapshotID}) {
		t.Fatalf("first batch: %+v %+v %v", start, end, err)
	}
	// Spark's offset JSON, version and all, is a start.
	_, end, err = streamOffset(t, s, map[string]any{"start": map[string]any{"version": 1, "snapshot_id": first.SnapshotID, "position": 1, "scan_all_files": false}})
	if err != nil || end == nil || *end != (request.Offset{SnapshotID: second.SnapshotID, Position: 1}) {
		t.Fatalf("rest: %+v %v", end, err)
	}
	// Nothing new after the head, with or without Spark's version field.
	head := map[string]any{"version": 1, "snapshot_id": end.SnapshotID, "position": end.Position, "scan_all_files": false}
	if _, end, err = streamOffset(t, s, map[string]any{"start": end}); err != nil || end != nil {
		t.Fatalf("after the head: %+v %v", end, err)
	}
	if _, end, err = streamOffset(t, s, map[string]any{"start": head}); err != nil || end != nil {
		t.Fatalf("after the head, versioned: %+v %v", end, err)
	}
	// until_snapshot_id holds the end at that snapshot.
	if _, end, err = streamOffset(t, s, map[string]any{"until_snapshot_id": first.SnapshotID}); err != nil || end == nil || end.SnapshotID != first.SnapshotID {
		t.Fatalf("until: %+v %v", end, err)
	}
	// stream-from-timestamp: the oldest snapshot at or after it; after the
	// head, nothing yet.
	if start, _, err = streamOffset(t, s, map[string]any{"from_timestamp_ms": second.TimestampMs}); err != nil || start == nil || start.SnapshotID != second.SnapshotID {
		t.Fatalf("from the second's time: %+v %v", start, err)
	}
	if start, end, err = streamOffset(t, s, map[string]any{"from_timestamp_ms": second.TimestampMs + 1}); err != nil || start != nil || end != nil {
		t.Fatalf("from after the head: %+v %+v %v", start, end, err)
	}
	// An overwrite stops the stream, with Spark's words, unless passed over.
	mustWrite(t, s, request.Request{Op: request.OpOverwrite, Table: "db.s", Filter: "id < 2"}, rowsReader(t, 100, 2, 1))
	mustWrite(t, s, request.Request{Op: request.OpDelete, Table: "db.s", Filter: "id >= 100"}, nil)
	mustWrite(t, s, request.Request{Op: request.OpAppend, Table: "db.s"}, rowsReader(t, 10, 5, 1))
	at := map[string]any{"snapshot_id": second.SnapshotID, "position": 1}
	if _, _, err = streamOffset(t, s, map[string]any{"start": at}); !errors.Is(err, errs.ErrValidation) || !strings.Contains(err.Error(), "Cannot process overwrite snapshot") {
		t.Fatalf("overwrite: %v", err)
	}
	if _, _, err = streamOffset(t, s, map[string]any{"start": at, "skip_overwrite_snapshots": true}); !errors.Is(err, errs.ErrValidation) || !strings.Contains(err.Error(), "Cannot process delete snapshot") {
		t.Fatalf("delete: %v", err)
	}
	_, end, err = streamOffset(t, s, map[string]any{"start": at, "skip_overwrite_snapshots": true, "skip_delete_snapshots": true})
	if err != nil || end == nil || end.SnapshotID != loadTable(t, s, "db.s").CurrentSnapshot().SnapshotID {
		t.Fatalf("passed over: %+v %v", end, err)
	}
	// An offset at a snapshot the table no longer has.
	if _, _, err = streamOffset(t, s, map[string]any{"start": map[string]any{"snapshot_id": 42, "position": 0}}); !errors.Is(err, errs.ErrValidation) || !strings.Contains(err.Error(), "expired or removed") {
		t.Fatalf("expired: %v", err)
	}
	// Bad documents.
	for _, mb := range []map[string]any{
		{"max_files": -1},
		{"end": at},
		{"start": map[string]any{"version": 2, "snapshot_id": 1, "position": 0}},
		{"start": map[string]any{"snapshot_id": 1, "position": -1}},
	} {
		if _, _, err := streamOffset(t, s, mb); !errors.Is(err, errs.ErrInvalidArgument) {
			t.Fatalf("%v: %v", mb, err)
		}
	}
}
