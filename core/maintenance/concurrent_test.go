package maintenance_test

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/config"
	"github.com/pyiceberg-go/pyiceberg-go/core/maintenance"
	"github.com/pyiceberg-go/pyiceberg-go/core/ops"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/session"
)

var schema = arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)

func ids(first, n int64) array.RecordReader {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	for i := first; i < first+n; i++ {
		b.Append(i)
	}
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, n)
	defer rec.Release()
	rdr, err := array.NewRecordReader(schema, []arrow.RecordBatch{rec})
	if err != nil {
		panic(err)
	}
	return rdr
}

// TestExpireRetriesOverAConcurrentCommit: another writer (one that does
// not queue on this project's commit lock, as Spark) rolls main back to
// its first snapshot between the expiry's planning and its commit. The
// commit fails on its assertion of main's head, the next attempt plans on
// the new metadata, and main's new head and its files survive.
func TestExpireRetriesOverAConcurrentCommit(t *testing.T) {
	dir := t.TempDir()
	props := map[string]string{"type": "sql", "uri": "sqlite:///" + filepath.Join(dir, "catalog.db"), "warehouse": "file://" + filepath.Join(dir, "wh")}
	s, err := session.Open(config.Session{Catalogs: map[string]map[string]string{"local": maps.Clone(props)}, Env: map[string]string{}, Home: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	run := func(req request.Request, in array.RecordReader) {
		t.Helper()
		if _, err := ops.Execute(ctx, s, &req, in, nil); err != nil {
			t.Fatal(err)
		}
	}
	run(request.Request{Op: request.OpCreate, Table: "db.t"}, ids(0, 10))
	run(request.Request{Op: request.OpOverwrite, Table: "db.t", Filter: "true"}, ids(10, 10))

	id, _ := s.Identifier("db.t")
	cat, err := s.Catalog(ctx, id.Catalog)
	if err != nil {
		t.Fatal(err)
	}
	tg := maintenance.Target{Cat: cat, ID: id, Ident: table.Identifier{"db", "t"}}
	before, err := cat.LoadTable(ctx, tg.Ident)
	if err != nil {
		t.Fatal(err)
	}
	first := before.Metadata().Snapshots()[0].SnapshotID
	head := before.Metadata().SnapshotByName(table.MainBranch).SnapshotID

	attempts := 0
	maintenance.SetBeforeCommit(func() {
		attempts++
		if attempts == 1 {
			_, _, err := cat.CommitTable(ctx, tg.Ident,
				[]table.Requirement{table.AssertRefSnapshotID(table.MainBranch, &head)},
				[]table.Update{table.NewSetSnapshotRefUpdate(table.MainBranch, first, table.BranchRef, -1, -1, -1)})
			if err != nil {
				t.Error(err)
			}
		}
	})
	defer maintenance.SetBeforeCommit(nil)

	now := time.Now().Add(24 * time.Hour) // after every snapshot: all are old
	cut := now.UnixMilli()
	res, err := maintenance.ExpireSnapshots(ctx, tg, &request.Request{Op: request.OpExpireSnapshots, Table: "db.t", OlderThanMs: &cut}, now)
	if err != nil {
		t.Fatal(err)
	}
	if attempts != 2 {
		t.Fatalf("%d commit attempts, want 2 (the first meets the concurrent rollback)", attempts)
	}
	after, err := cat.LoadTable(ctx, tg.Ident)
	if err != nil {
		t.Fatal(err)
	}
	if snaps := after.Metadata().Snapshots(); len(snaps) != 1 || snaps[0].SnapshotID != first ||
		len(res.ExpiredSnapshotIDs) != 1 || res.ExpiredSnapshotIDs[0] != head {
		t.Fatalf("left %v, expired %v; want main's new head %d kept and %d expired", snaps, res.ExpiredSnapshotIDs, first, head)
	}
	tasks, err := after.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	for _, task := range tasks {
		if _, err := os.Stat(strings.TrimPrefix(task.File.FilePath(), "file://")); err != nil {
			t.Fatalf("a file of main's head is gone: %v", err)
		}
		rows += task.File.Count()
	}
	if rows != 10 || res.DeletedDataFilesCount != 1 {
		t.Fatalf("head has %d rows (want 10), %d data files deleted (want 1)", rows, res.DeletedDataFilesCount)
	}
}
