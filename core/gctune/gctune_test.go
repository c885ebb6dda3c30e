package gctune

import (
	"runtime"
	"runtime/metrics"
	"testing"
)

func TestPercent(t *testing.T) {
	s := Settings{Percent: 50, MinHeadroom: 64 << 20}
	for _, c := range []struct {
		live int64
		want int
	}{
		{1 << 30, 50},   // large heap: the percent rule
		{128 << 20, 50}, // 64 MB is exactly 50%
		{32 << 20, 200}, // small heap: 64 MB of headroom
		{4 << 20, 1000}, // capped
		{0, 1000},       // nothing measured yet
	} {
		if got := Percent(s, c.live); got != c.want {
			t.Errorf("live %d: GOGC %d, want %d", c.live, got, c.want)
		}
	}
}

func gogc() int64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// TestRetunesAfterEachCollection: the target follows the live heap across
// collections, high while little is live and back to Percent once a large
// heap is live.
func TestRetunesAfterEachCollection(t *testing.T) {
	Start(Settings{Percent: 50, MinHeadroom: 256 << 20})
	collect := func() {
		// The finalizer runs after the collection that found the sentinel
		// dead; a second one makes sure it has run.
		runtime.GC()
		runtime.GC()
	}
	collect()
	if got := gogc(); got < 200 {
		t.Fatalf("small live heap: GOGC %d, want well above 50", got)
	}
	big := make([][]byte, 0, 64)
	for range 64 {
		big = append(big, make([]byte, 16<<20)) // 1 GiB live
	}
	collect()
	if got := gogc(); got != 50 {
		t.Fatalf("1 GiB live: GOGC %d, want 50", got)
	}
	runtime.KeepAlive(big)
	big = nil
	collect()
	if got := gogc(); got < 200 {
		t.Fatalf("after the large heap died: GOGC %d, want well above 50", got)
	}
}
