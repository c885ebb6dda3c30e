package gctune

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
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
		if got := Percent(s, c.live, s.MinHeadroom); got != c.want {
			t.Errorf("live %d: GOGC %d, want %d", c.live, got, c.want)
		}
	}
}

// TestHeadroomFollowsTheAllocationRate: with a window, the floor is the
// allocations of one window, between LowHeadroom and MinHeadroom; without
// one, or before a rate is known, it is MinHeadroom.
func TestHeadroomFollowsTheAllocationRate(t *testing.T) {
	s := Settings{Percent: 25, MinHeadroom: 64 << 20, RateWindow: time.Second, LowHeadroom: 16 << 20}
	for _, c := range []struct {
		rate float64
		want int64
	}{
		{-1, 64 << 20},      // not known yet
		{1 << 30, 64 << 20}, // a busy write: the full floor
		{32 << 20, 32 << 20},
		{4 << 20, 16 << 20}, // a slow stream: no lower than LowHeadroom
		{0, 16 << 20},
	} {
		if got := Headroom(s, c.rate); got != c.want {
			t.Errorf("rate %.0f: headroom %d, want %d", c.rate, got, c.want)
		}
	}
	// A slow allocator with 80 MB live (W5's write) gets GOGC 25, not 80.
	if got := Percent(s, 80<<20, Headroom(s, 4<<20)); got != 25 {
		t.Errorf("slow allocator, 80 MB live: GOGC %d, want 25", got)
	}
	s.RateWindow = 0
	if got := Headroom(s, 4<<20); got != 64<<20 {
		t.Errorf("no window: headroom %d, want %d", got, 64<<20)
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

// TestSlowAllocationLowersTheFloor: with 512 MB live, the collection
// after allocating it at once keeps the floor (256 MB: GOGC about 50), and
// one after a quiet half second applies the percent rule alone (GOGC 40).
func TestSlowAllocationLowersTheFloor(t *testing.T) {
	defer Start(Settings{Percent: 100})
	Start(Settings{Percent: 40, MinHeadroom: 256 << 20, RateWindow: time.Second, LowHeadroom: 16 << 20})
	// One collection, then the target its finalizer sets (a second
	// collection would measure the rate over the moment between them).
	collect := func() int64 {
		before := gogc()
		runtime.GC()
		for deadline := time.Now().Add(2 * time.Second); gogc() == before && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		return gogc()
	}
	runtime.GC()
	runtime.GC()
	big := make([][]byte, 0, 32)
	for range 32 {
		big = append(big, make([]byte, 16<<20))
	}
	if got := collect(); got < 45 || got > 50 {
		t.Fatalf("512 MB allocated at once: GOGC %d, want about 50", got)
	}
	time.Sleep(500 * time.Millisecond)
	if got := collect(); got != 40 {
		t.Fatalf("after a quiet half second: GOGC %d, want 40", got)
	}
	runtime.KeepAlive(big)
}

// TestFloorFallsWithoutACollection: a fast start sets the full floor; when
// the program then allocates little, the rule is applied again a window
// later with no collection in between, and the floor falls to LowHeadroom.
func TestFloorFallsWithoutACollection(t *testing.T) {
	defer Start(Settings{Percent: 100})
	// Longer than allocating and collecting take even on a loaded machine:
	// a timer between them would measure the allocation and the
	// collection after it none.
	const window = time.Second
	runtime.GC()
	runtime.GC()
	Start(Settings{Percent: 10, MinHeadroom: 64 << 20, RateWindow: window, LowHeadroom: 16 << 20})
	// No collection while it allocates, or that one would be the last to
	// measure the rate (the next applies the rule again).
	debug.SetGCPercent(-1)
	big := make([][]byte, 0, 8)
	for range 8 {
		big = append(big, make([]byte, 16<<20)) // 128 MB live
	}
	// The collection finds 128 MB live, allocated at once: the full 64 MB
	// floor, 50%. (Its finalizer applies the rule just after it.)
	runtime.GC()
	high := func(p int64) bool { return p >= 45 && p <= 50 }
	for deadline := time.Now().Add(2 * time.Second); !high(gogc()) && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if got := gogc(); !high(got) {
		t.Fatalf("after allocating 128 MB at once: GOGC %d, want about 50", got)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	gcs := ms.NumGC
	deadline := time.Now().Add(3 * window)
	for high(gogc()) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	runtime.ReadMemStats(&ms)
	if ms.NumGC != gcs {
		t.Fatalf("%d collections ran meanwhile: the timer is not what moved GOGC", ms.NumGC-gcs)
	}
	// 16 MB of headroom on 128 MB live: 12%.
	if got := gogc(); got < 11 || got > 12 {
		t.Fatalf("a quiet window later, no collection: GOGC %d, want 12", got)
	}
	runtime.KeepAlive(big)
}
