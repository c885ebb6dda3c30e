package gctune

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sort"
	"sync"
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
		if got := Percent(s, c.live, 0, s.MinHeadroom); got != c.want {
			t.Errorf("live %d: GOGC %d, want %d", c.live, got, c.want)
		}
	}
}

// Held bytes earn no headroom: a 1 GiB heap of which 900 MiB is a held
// sort buffer grows by a quarter of the rest, or the floor.
func TestHeldBytesEarnNoHeadroom(t *testing.T) {
	s := Settings{Percent: 25, MinHeadroom: 64 << 20}
	for _, c := range []struct {
		live, held int64
		want       int
	}{
		{1 << 30, 0, 25},
		{1 << 30, 512 << 20, 12},   // a quarter of 512 MiB is 12.5% of 1 GiB
		{1 << 30, 1000 << 20, 6},   // the 64 MiB floor
		{100 << 20, 200 << 20, 64}, // held more than was live at the last collection: the floor
		{64 << 30, 64 << 30, 1},    // at least 1
	} {
		if got := Percent(s, c.live, c.held, s.MinHeadroom); got != c.want {
			t.Errorf("live %d held %d: GOGC %d, want %d", c.live, c.held, got, c.want)
		}
	}
	f, tu := newFake(s)
	f.allocate(1<<30, 1<<30, time.Second)
	if got := f.collect(tu); got != 25 {
		t.Fatalf("1 GiB live: GOGC %d, want 25", got)
	}
	release := tu.hold(768 << 20)
	if got := f.gogc(); got != 6 {
		t.Fatalf("holding 768 MiB of 1 GiB: GOGC %d at once, want 6", got)
	}
	if got := f.collect(tu); got != 6 {
		t.Fatalf("holding, after a collection: GOGC %d, want 6", got)
	}
	release()
	release() // a second call changes nothing
	if got := f.gogc(); got != 25 {
		t.Fatalf("released: GOGC %d, want 25", got)
	}
	if got := f.collect(tu); got != 25 {
		t.Fatalf("released, after a collection: GOGC %d, want 25", got)
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
	if got := Percent(s, 80<<20, 0, Headroom(s, 4<<20)); got != 25 {
		t.Errorf("slow allocator, 80 MB live: GOGC %d, want 25", got)
	}
	s.RateWindow = 0
	if got := Headroom(s, 4<<20); got != 64<<20 {
		t.Errorf("no window: headroom %d, want %d", got, 64<<20)
	}
}

// fake is a tuner's world driven by the test: a clock that moves only when
// told to, timers on that clock, heap counters set by hand, and the GOGC
// values the tuner set. Nothing in it depends on the machine's load.
type fake struct {
	mu       sync.Mutex
	now      time.Time
	live     int64
	allocs   uint64
	timers   []fakeTimer
	percents []int
}

type fakeTimer struct {
	at time.Time
	f  func()
}

func newFake(s Settings) (*fake, *tuner) {
	f := &fake{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), live: 4 << 20, allocs: 100 << 20}
	tu := &tuner{env: env{
		now: func() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.now },
		afterFunc: func(d time.Duration, fn func()) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.timers = append(f.timers, fakeTimer{f.now.Add(d), fn})
		},
		heap:       func() (int64, uint64) { f.mu.Lock(); defer f.mu.Unlock(); return f.live, f.allocs },
		setPercent: func(p int) { f.mu.Lock(); defer f.mu.Unlock(); f.percents = append(f.percents, p) },
	}}
	tu.start(s)
	return f, tu
}

// advance moves the clock by d, firing the timers that fall due on the way
// (each at its own time, in order).
func (f *fake) advance(d time.Duration) {
	f.mu.Lock()
	end := f.now.Add(d)
	for {
		sort.SliceStable(f.timers, func(i, j int) bool { return f.timers[i].at.Before(f.timers[j].at) })
		if len(f.timers) == 0 || f.timers[0].at.After(end) {
			break
		}
		tm := f.timers[0]
		f.timers = f.timers[1:]
		f.now = tm.at
		f.mu.Unlock()
		tm.f()
		f.mu.Lock()
	}
	f.now = end
	f.mu.Unlock()
}

// allocate allocates n bytes over d, of which keep stay live.
func (f *fake) allocate(n, keep int64, d time.Duration) {
	f.mu.Lock()
	f.allocs += uint64(n)
	f.live += keep
	f.mu.Unlock()
	f.advance(d)
}

// gogc is the last GOGC the tuner set.
func (f *fake) gogc() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.percents[len(f.percents)-1]
}

func (f *fake) pendingTimers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

// collect is a collection: the sentinel's finalizer applies the rule.
func (f *fake) collect(tu *tuner) int {
	tu.apply()
	return f.gogc()
}

// TestRetunesAfterEachCollection: the target follows the live heap across
// collections, high while little is live and back to Percent once a large
// heap is live.
func TestRetunesAfterEachCollection(t *testing.T) {
	f, tu := newFake(Settings{Percent: 50, MinHeadroom: 256 << 20})
	if got := f.gogc(); got != 1000 {
		t.Fatalf("applied at start, 4 MB live: GOGC %d, want 1000", got)
	}
	f.allocate(1<<30, 1<<30, 2*time.Second)
	if got := f.collect(tu); got != 50 {
		t.Fatalf("1 GiB live: GOGC %d, want 50", got)
	}
	f.mu.Lock()
	f.live = 100 << 20
	f.mu.Unlock()
	if got := f.collect(tu); got != 256 {
		t.Fatalf("after the large heap died, 100 MB live: GOGC %d, want 256", got)
	}
	if n := f.pendingTimers(); n != 0 {
		t.Fatalf("no RateWindow, yet %d timers armed", n)
	}
}

// TestSlowAllocationLowersTheFloor: with 512 MB live, the collection
// after allocating it at once keeps the floor (256 MB: GOGC 49), and one
// after a quiet half second applies the percent rule alone (GOGC 40).
// The same 512 MB allocated over four seconds (as a loaded machine once
// took, which failed the earlier wall-clock version of this test) is a
// rate of 128 MB a second: a 128 MB floor, under the percent rule.
func TestSlowAllocationLowersTheFloor(t *testing.T) {
	s := Settings{Percent: 40, MinHeadroom: 256 << 20, RateWindow: time.Second, LowHeadroom: 16 << 20}
	f, tu := newFake(s)
	f.allocate(512<<20, 512<<20, 20*time.Millisecond)
	if got := f.collect(tu); got != 49 { // 256 MB of 516 MB live
		t.Fatalf("512 MB allocated at once: GOGC %d, want 49", got)
	}
	f.advance(500 * time.Millisecond)
	if got := f.collect(tu); got != 40 {
		t.Fatalf("after a quiet half second: GOGC %d, want 40", got)
	}

	f, tu = newFake(s)
	f.allocate(512<<20, 512<<20, 4*time.Second)
	if got := f.collect(tu); got != 40 { // 128 MB of 516 MB is 24%
		t.Fatalf("512 MB allocated over 4 s: GOGC %d, want 40", got)
	}
	f.allocate(512<<20, 0, 500*time.Millisecond) // 1 GB/s: the full floor again
	if got := f.collect(tu); got != 49 {
		t.Fatalf("512 MB of garbage in half a second: GOGC %d, want 49", got)
	}
}

// TestFloorFallsWithoutACollection: a fast start sets the full floor; when
// the program then allocates little, the rule is applied again a window
// later with no collection in between, and the floor falls to LowHeadroom.
func TestFloorFallsWithoutACollection(t *testing.T) {
	f, tu := newFake(Settings{Percent: 10, MinHeadroom: 64 << 20, RateWindow: time.Second, LowHeadroom: 16 << 20})
	if n := f.pendingTimers(); n != 1 {
		t.Fatalf("the floor at start is MinHeadroom: %d timers armed, want 1", n)
	}
	f.allocate(128<<20, 124<<20, 10*time.Millisecond) // 128 MB live
	if got := f.collect(tu); got != 50 {
		t.Fatalf("after allocating 128 MB at once: GOGC %d, want 50", got)
	}
	if n := f.pendingTimers(); n != 1 {
		t.Fatalf("one timer at a time: %d armed", n)
	}
	f.advance(989 * time.Millisecond)
	if got := f.gogc(); got != 50 {
		t.Fatalf("before the window ends: GOGC %d, want 50", got)
	}
	f.advance(time.Millisecond) // the timer set at start fires, no collection
	// 16 MB of headroom on 128 MB live: 12%.
	if got := f.gogc(); got != 12 {
		t.Fatalf("a quiet window later, no collection: GOGC %d, want 12", got)
	}
	if n := f.pendingTimers(); n != 0 {
		t.Fatalf("the floor is LowHeadroom, yet %d timers armed", n)
	}
}

// TestTimerRearmsWhileTheFloorIsHigh: a steady 40 MB a second keeps the
// floor at 40 MB, above LowHeadroom, so the rule is applied every window;
// once the stream slows down, the floor falls and no timer is left.
func TestTimerRearmsWhileTheFloorIsHigh(t *testing.T) {
	f, _ := newFake(Settings{Percent: 10, MinHeadroom: 64 << 20, RateWindow: time.Second, LowHeadroom: 16 << 20})
	f.mu.Lock()
	f.live = 200 << 20
	f.mu.Unlock()
	applies := len(f.percents)
	for range 5 {
		f.allocate(40<<20, 0, time.Second)
	}
	if got := len(f.percents) - applies; got != 5 {
		t.Fatalf("five windows at 40 MB/s: the rule applied %d times, want 5", got)
	}
	if got := f.gogc(); got != 20 { // 40 MB on 200 MB live
		t.Fatalf("40 MB/s with 200 MB live: GOGC %d, want 20", got)
	}
	f.allocate(1<<20, 0, time.Second)
	if got := f.gogc(); got != 10 { // 16 MB on 200 MB is under the percent rule
		t.Fatalf("1 MB/s: GOGC %d, want 10", got)
	}
	if n := f.pendingTimers(); n != 0 {
		t.Fatalf("the floor is LowHeadroom, yet %d timers armed", n)
	}
}

// TestStartChangesTheRule: a second Start replaces the rule and applies it
// at once; a window of zero arms no timer.
func TestStartChangesTheRule(t *testing.T) {
	f, tu := newFake(Settings{Percent: 50, MinHeadroom: 64 << 20})
	f.mu.Lock()
	f.live = 1 << 30
	f.mu.Unlock()
	if first := tu.start(Settings{Percent: 30}); first {
		t.Fatal("a second start reported as the first")
	}
	if got := f.gogc(); got != 30 {
		t.Fatalf("after changing the rule: GOGC %d, want 30", got)
	}
	if n := f.pendingTimers(); n != 0 {
		t.Fatalf("no RateWindow, yet %d timers armed", n)
	}
}

// TestCollectionsApplyTheRule checks the production wiring: after a real
// collection the sentinel's finalizer applies the rule (read from the
// runtime's counters) and arms itself again. Only the GOGC it sets is
// captured; the wait bounds a hang and measures nothing.
func TestCollectionsApplyTheRule(t *testing.T) {
	got := make(chan int, 16)
	tu := &tuner{env: std.env}
	tu.setPercent = func(p int) {
		select {
		case got <- p:
		default:
		}
	}
	tu.start(Settings{Percent: 37})
	<-got // applied at start
	arm(tu)
	// The second proves the finalizer armed a new sentinel. The finalizer
	// applies the rule before it arms the next sentinel, so a collection
	// right after the first value may come before that sentinel exists:
	// collect until the rule is applied (only collections apply it).
	deadline := time.After(2 * time.Minute)
	for i := range 2 {
		tick := time.NewTicker(20 * time.Millisecond)
		runtime.GC()
	wait:
		for {
			select {
			case p := <-got:
				if p != 37 {
					t.Fatalf("collection %d: GOGC %d, want 37", i, p)
				}
				break wait
			case <-tick.C:
				runtime.GC()
			case <-deadline:
				t.Fatalf("collection %d: the rule was not applied", i)
			}
		}
		tick.Stop()
	}
}

// TestStartSetsTheCollector: the process's tuner sets the runtime's GOGC.
func TestStartSetsTheCollector(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer Start(Settings{Percent: 100})
	Start(Settings{Percent: 37})
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if got := s[0].Value.Uint64(); got != 37 {
		t.Fatalf("GOGC %d, want 37", got)
	}
}
