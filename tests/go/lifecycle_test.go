package gotests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/ops"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
)

// A create of a large, slow input is one catalog commit: a reader polling
// the catalog meanwhile sees either no table or the table with all its data.
func TestCreateIsAtomic(t *testing.T) {
	e := newEnv(t)
	writer := e.session(t)
	poller := e.session(t) // its own catalog connection, as another process would have
	const batches, size = 40, 5000
	// The producer holds the write open until a poll has seen no table, so
	// both states are observed whatever the machine's load.
	seen := make(chan struct{})
	var once sync.Once
	in := newGenReader(0, size, batches, holdUntil(batches/2, seen))
	done := make(chan error, 1)
	go func() {
		_, err := write(ctxT(t), writer, request.Request{Op: request.OpCreate, Table: "local.db.ctas", PartitionBy: []request.PartitionField{{Transform: "identity", Column: "cat"}}}, in)
		done <- err
	}()
	var missing, present int
	observe := func() {
		tbl, err := ops.LoadTable(ctxT(t), poller, "local.db.ctas")
		switch {
		case errors.Is(err, errs.ErrNoSuchTable):
			missing++
			once.Do(func() { close(seen) })
		case err != nil:
			t.Errorf("polling: %v", err)
		case tbl.CurrentSnapshot() == nil:
			t.Fatal("the table exists without a current snapshot")
		default:
			if got := tbl.CurrentSnapshot().Summary.Properties["total-records"]; got != fmt.Sprint(batches*size) {
				t.Fatalf("the table is visible with total-records=%s, want %d", got, batches*size)
			}
			present++
		}
	}
	err := pollWhile(done, observe)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	observe()
	if missing == 0 || present == 0 {
		t.Fatalf("polls saw the table missing %d times and complete %d times: the race was not observed", missing, present)
	}
}

// Four writers, each with its own session on one SQLite file, append ten
// times each: every append lands once, on top of the one before it.
func TestConcurrentAppendsRetry(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mustWrite(t, s, request.Request{
		Op: request.OpCreate, Table: "local.db.t",
		// Java's 4 retries are too few for 4 writers racing 10 times each.
		Properties: map[string]string{"commit.retry.num-retries": "200", "commit.retry.min-wait-ms": "5", "commit.retry.max-wait-ms": "100"},
	}, rowsReader(t, 0, 100, 1))

	const writers, appends, size = 4, 10, 50
	var wg sync.WaitGroup
	errc := make(chan error, writers*appends)
	for g := range writers {
		ws := e.session(t)
		var inputs []array.RecordReader
		for k := range appends {
			inputs = append(inputs, rowsReader(t, int64(1000+(g*appends+k)*size), size, 1))
		}
		wg.Go(func() {
			for k, in := range inputs {
				if _, err := write(context.Background(), ws, request.Request{Op: request.OpAppend, Table: "local.db.t"}, in); err != nil {
					errc <- fmt.Errorf("writer %d append %d: %w", g, k, err)
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	tbl := loadTable(t, s, "local.db.t")
	m := tbl.Metadata()
	if n := len(m.Snapshots()); n != 1+writers*appends {
		t.Fatalf("%d snapshots, want %d", n, 1+writers*appends)
	}
	total := 100 + writers*appends*size
	if got := tbl.CurrentSnapshot().Summary.Properties["total-records"]; got != fmt.Sprint(total) {
		t.Errorf("total-records=%s, want %d", got, total)
	}
	// The history is one line, and every snapshot's totals build on its parent's.
	n := 0
	for sn := tbl.CurrentSnapshot(); sn != nil; n++ {
		p := sn.Summary.Properties
		var parentTotal, added, totalHere int
		fmt.Sscan(p["added-records"], &added)
		fmt.Sscan(p["total-records"], &totalHere)
		if sn.ParentSnapshotID == nil {
			if n != writers*appends {
				t.Fatalf("the chain from main ends after %d snapshots", n+1)
			}
			break
		}
		parent := m.SnapshotByID(*sn.ParentSnapshotID)
		if parent == nil {
			t.Fatalf("snapshot %d has a missing parent", sn.SnapshotID)
		}
		fmt.Sscan(parent.Summary.Properties["total-records"], &parentTotal)
		if totalHere != parentTotal+added || added != size {
			t.Fatalf("snapshot %d: total %d != parent total %d + added %d", sn.SnapshotID, totalHere, parentTotal, added)
		}
		sn = parent
	}
	var spans [][2]int64
	spans = append(spans, [2]int64{0, 100}, [2]int64{1000, int64(1000 + writers*appends*size)})
	equalRows(t, readRows(t, s, "local.db.t", nil), expectRows(spans...))
	if files := e.dataFiles(t, "t"); fmt.Sprint(len(files)) != tbl.CurrentSnapshot().Summary.Properties["total-data-files"] {
		t.Errorf("%d files on disk, total-data-files=%s: a retried commit left files behind", len(files), tbl.CurrentSnapshot().Summary.Properties["total-data-files"])
	}
	// Retried commits leave no manifest lists or manifests of their failed
	// attempts: every Avro file in metadata/ belongs to a committed snapshot.
	fsys, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	referenced := map[string]bool{}
	for _, sn := range m.Snapshots() {
		referenced[strings.TrimPrefix(sn.ManifestList, "file://")] = true
		manifests, err := sn.Manifests(fsys)
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range manifests {
			referenced[strings.TrimPrefix(mf.FilePath(), "file://")] = true
		}
	}
	avros, _ := filepath.Glob(filepath.Join(e.tableDir("t"), "metadata", "*.avro"))
	var orphans []string
	for _, a := range avros {
		if !referenced[a] {
			orphans = append(orphans, filepath.Base(a))
		}
	}
	if len(orphans) > 0 {
		t.Errorf("%d metadata files of failed attempts left behind (of %d): %v", len(orphans), len(avros), orphans[:min(3, len(orphans))])
	}
}

// A context cancelled while the input is being written stops the write:
// ErrCancelled, no snapshot, no files.
func TestCancelMidWrite(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "local.db.t", PartitionBy: []request.PartitionField{{Transform: "identity", Column: "cat"}}}, rowsReader(t, 0, 100, 1))
	before := stateOf(t, e, "t")

	for _, op := range []string{request.OpAppend, request.OpCreate, request.OpReplace} {
		t.Run(op, func(t *testing.T) {
			name := "t"
			if op == request.OpCreate {
				name = "fresh"
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			onDisk := 0
			in := newGenReader(1000, 20000, 12, func(i int) error {
				if i == 5 {
					onDisk = len(e.dataFiles(t, name))
					cancel()
				}
				return nil
			})
			_, err := write(ctx, s, request.Request{Op: op, Table: "local.db." + name, Options: map[string]string{"target-file-size-bytes": "65536"}}, in)
			if !errors.Is(err, errs.ErrCancelled) {
				t.Fatalf("%v, want ErrCancelled", err)
			}
			if !in.released.Load() {
				t.Error("the input was not released")
			}
			if onDisk <= len(before.files) && op != request.OpCreate || onDisk == 0 && op == request.OpCreate {
				t.Errorf("no new file was on disk at the cancel (%d): the cleanup went untested", onDisk)
			}
			if op == request.OpCreate {
				if _, err := ops.LoadTable(ctxT(t), s, "local.db.fresh"); !errors.Is(err, errs.ErrNoSuchTable) {
					t.Errorf("a cancelled create left a table: %v", err)
				}
				if files := e.dataFiles(t, "fresh"); len(files) != 0 {
					t.Errorf("files left by a cancelled create: %v", files)
				}
				return
			}
			unchanged(t, e, "t", before)
		})
	}
}

// metadataJSON reads the table's current metadata file from disk, without
// iceberg-go's parser.
func metadataJSON(t *testing.T, loc string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(strings.TrimPrefix(loc, "file://"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestFormatVersion3(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mustWrite(t, s, request.Request{
		Op: request.OpCreate, Table: "local.db.v3",
		PartitionBy: []request.PartitionField{{Transform: "day", Column: "ts"}},
		Properties:  map[string]string{"format-version": "3"},
	}, rowsReader(t, 0, 120, 2))
	mustWrite(t, s, request.Request{Op: request.OpAppend, Table: "local.db.v3"}, rowsReader(t, 240, 60, 1))

	tbl := loadTable(t, s, "local.db.v3")
	m := metadataJSON(t, tbl.MetadataLocation())
	if v, _ := m["format-version"].(float64); v != 3 {
		t.Fatalf("metadata file format-version %v, want 3", m["format-version"])
	}
	if props, _ := m["properties"].(map[string]any); props["format-version"] != nil {
		t.Errorf("format-version is stored as a table property: %v", props)
	}
	// Row lineage: next-row-id counts every row added; snapshots record
	// where their row ids start.
	if v, _ := m["next-row-id"].(float64); v != 300 {
		t.Errorf("next-row-id %v, want 300", m["next-row-id"])
	}
	snaps, _ := m["snapshots"].([]any)
	if len(snaps) != 2 {
		t.Fatalf("%d snapshots in the metadata file, want 2", len(snaps))
	}
	for i, want := range []float64{0, 240} {
		sn, _ := snaps[i].(map[string]any)
		if got, _ := sn["first-row-id"].(float64); got != want {
			t.Errorf("snapshot %d first-row-id %v, want %v", i, sn["first-row-id"], want)
		}
	}
	equalRows(t, readRows(t, s, "local.db.v3", nil), expectRows([2]int64{0, 240}, [2]int64{240, 300}))
}

// A replace is one commit too: a poller sees the old table or the new one,
// never the new properties with the old data or an empty main.
func TestReplaceIsAtomic(t *testing.T) {
	e := newEnv(t)
	writer := e.session(t)
	poller := e.session(t)
	mustWrite(t, writer, request.Request{Op: request.OpCreate, Table: "local.db.t"}, rowsReader(t, 0, 1000, 1))
	const batches, size = 40, 5000
	seen := make(chan struct{}) // a poll saw the old table: the replace may go on
	var once sync.Once
	in := newGenReader(0, size, batches, holdUntil(batches/2, seen))
	done := make(chan error, 1)
	go func() {
		_, err := write(ctxT(t), writer, request.Request{Op: request.OpReplace, Table: "local.db.t", Properties: map[string]string{"replaced": "yes"}}, in)
		done <- err
	}()
	var old, replaced int
	observe := func() {
		tbl, err := ops.LoadTable(ctxT(t), poller, "local.db.t")
		if err != nil {
			t.Fatalf("polling during a replace: %v", err)
		}
		sn := tbl.CurrentSnapshot()
		if sn == nil {
			t.Fatal("the table has no current snapshot during a replace")
		}
		total := sn.Summary.Properties["total-records"]
		isNew := tbl.Metadata().Properties()["replaced"] == "yes"
		switch {
		case total == "1000" && !isNew:
			old++
			once.Do(func() { close(seen) })
		case total == fmt.Sprint(batches*size) && isNew:
			replaced++
		default:
			t.Fatalf("half-replaced table: total-records=%s, new properties %v", total, isNew)
		}
	}
	err := pollWhile(done, observe)
	if err != nil {
		t.Fatalf("replace: %v", err)
	}
	observe()
	if old == 0 || replaced == 0 {
		t.Fatalf("polls saw the old table %d times and the new one %d times: the race was not observed", old, replaced)
	}
}

// Two sessions create the same table at once: one wins, the other fails
// with ErrTableAlreadyExists and deletes the files it wrote.
func TestConcurrentCreatesOneWins(t *testing.T) {
	e := newEnv(t)
	const n = 3
	var wg sync.WaitGroup
	results := make([]error, n)
	var inputs []array.RecordReader
	for i := range n {
		inputs = append(inputs, rowsReader(t, int64(i*10000), 2000, 2))
	}
	for i := range n {
		s := e.session(t)
		wg.Go(func() {
			_, results[i] = write(context.Background(), s, request.Request{Op: request.OpCreate, Table: "local.db.t"}, inputs[i])
		})
	}
	wg.Wait()
	winner := -1
	for i, err := range results {
		switch {
		case err == nil && winner < 0:
			winner = i
		case err == nil:
			t.Fatalf("creates %d and %d both succeeded", winner, i)
		case !errors.Is(err, errs.ErrTableAlreadyExists):
			t.Errorf("losing create %d: %v, want ErrTableAlreadyExists", i, err)
		}
	}
	if winner < 0 {
		t.Fatalf("no create succeeded: %v", results)
	}
	s := e.session(t)
	w := int64(winner * 10000)
	equalRows(t, readRows(t, s, "local.db.t", nil), expectRows([2]int64{w, w + 4000}))
	tbl := loadTable(t, s, "local.db.t")
	if files := e.dataFiles(t, "t"); fmt.Sprint(len(files)) != tbl.CurrentSnapshot().Summary.Properties["total-data-files"] {
		t.Errorf("%d files on disk, total-data-files=%s: a losing create left files behind", len(files), tbl.CurrentSnapshot().Summary.Properties["total-data-files"])
	}
}

// holdUntil is a generator hook that, before batch at, waits until seen is
// closed (five minutes at most: only a hang is bounded).
func holdUntil(at int, seen <-chan struct{}) func(int) error {
	return func(i int) error {
		if i != at {
			return nil
		}
		select {
		case <-seen:
			return nil
		case <-time.After(5 * time.Minute):
			return errors.New("the poller never saw the state before the commit")
		}
	}
}

// pollWhile calls observe every 2 ms until done delivers the writer's result.
func pollWhile(done <-chan error, observe func()) error {
	for {
		select {
		case err := <-done:
			return err
		default:
			observe()
			time.Sleep(2 * time.Millisecond)
		}
	}
}
