package gotests

import (
	"runtime"
	"testing"

	"github.com/pyiceberg-go/pyiceberg-go/core/request"
)

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestManyAppendsKeepOneMetadataAlive: a session that appends to one table
// many times keeps memory for the current metadata only. The metadata a
// commit builds must not hold on to the one it was built from: when it did,
// every version stayed reachable from the SQLite catalog's metadata cache,
// and memory grew with the square of the commits (700 MB live after 600
// appends of 1,000 rows).
func TestManyAppendsKeepOneMetadataAlive(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "db.m"}, rowsReader(t, 0, 10, 1))
	var at100 uint64
	for i := 1; i <= 400; i++ {
		mustWrite(t, s, request.Request{Op: request.OpAppend, Table: "db.m"}, rowsReader(t, int64(i*10), 10, 1))
		if i == 100 {
			at100 = liveHeap()
		}
	}
	at400 := liveHeap()
	t.Logf("live heap after 100 appends %d KB, after 400 %d KB", at100>>10, at400>>10)
	// The metadata of 400 snapshots is a few hundred KB; every version kept
	// was more than 200 MB here.
	if at400 > 2*at100+16<<20 {
		t.Fatalf("live heap grew from %d KB after 100 appends to %d KB after 400", at100>>10, at400>>10)
	}
}
