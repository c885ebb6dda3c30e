// Package gctune sets the Go garbage collector's target for a library that
// writes large Arrow and Parquet buffers but is also called for many small
// operations: after each collection the target becomes the live heap plus
// the larger of Percent of it and MinHeadroom bytes.
//
// A fixed GOGC cannot do both. At GOGC=50 a 1 GB merge peaks 25% lower
// than at Go's default 100 (docs/decisions.md), but a 1,000-row append
// with a few MB live then collects several times per call, and the
// collector took a third of its CPU (bench/run.py W4). MinHeadroom lets a
// small heap grow by tens of MB between collections; Percent bounds a
// large one.
//
// A long streamed write allocates slowly (a few MB a second: its buffers
// are reused) and would fill all of MinHeadroom with garbage before the
// next collection, tens of MB of peak memory that a collection every few
// seconds would keep down at no measurable cost. With RateWindow set, the
// floor is what the program allocated per RateWindow since the rule was
// last applied, within [LowHeadroom, MinHeadroom]. While that floor is above
// LowHeadroom the rule is applied again every RateWindow, not only after
// collections: a stream that starts fast and goes on slowly would otherwise
// keep the floor of its first second until its next collection, which the
// floor itself puts off (bench/run.py W5 at 10x: a 64 MB floor set one
// second in, and no other collection for 25 s while the heap grew from 47
// to 108 MB).
package gctune

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// Settings of the tuner.
type Settings struct {
	Percent     int   // GOGC for a large live heap
	MinHeadroom int64 // bytes the heap may grow past the live heap at least
	// RateWindow (if set) lowers that floor for a program that allocates
	// slowly: to its allocations per RateWindow, but not under LowHeadroom.
	RateWindow  time.Duration
	LowHeadroom int64
}

// env is what the tuner reads and sets outside itself: the clock, a timer,
// the heap's counters and the collector's target. The process uses the
// real ones (std); tests drive a fake clock and fake counters.
type env struct {
	now        func() time.Time
	afterFunc  func(time.Duration, func())
	heap       func() (live int64, allocs uint64) // live heap bytes, bytes allocated so far
	setPercent func(int)
}

// tuner applies a rule; the process has one (std).
type tuner struct {
	env
	mu      sync.Mutex
	current Settings
	started bool
	// allocations and time at the last apply, for the allocation rate.
	lastAllocs uint64
	lastTime   time.Time
	// pending: a timer will apply the rule again after RateWindow.
	pending bool
	// held is the bytes of the live heap held rather than worked through
	// (Hold).
	held int64
}

var samples = []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/heap/allocs:bytes"}}

// std is the process's tuner, on the runtime's clock and counters.
var std = &tuner{env: env{
	now:       time.Now,
	afterFunc: func(d time.Duration, f func()) { time.AfterFunc(d, f) },
	heap: func() (int64, uint64) {
		// Called with the tuner's lock held, which guards samples.
		metrics.Read(samples)
		return int64(samples[0].Value.Uint64()), samples[1].Value.Uint64()
	},
	setPercent: func(p int) { debug.SetGCPercent(p) },
}}

// Start makes s the rule from the next collection on (and applies it to
// the live heap now). It can be called again to change the rule.
func Start(s Settings) {
	if std.start(s) {
		arm(std)
	}
}

// start sets the rule and applies it; it reports whether it is the first.
func (t *tuner) start(s Settings) (first bool) {
	t.mu.Lock()
	t.current = s
	first = !t.started
	t.started = true
	t.mu.Unlock()
	t.apply()
	return first
}

// sentinel is garbage from birth: its finalizer runs after each
// collection, applies the rule and arms a new one.
type sentinel struct{ _ [16]byte }

func arm(t *tuner) {
	s := &sentinel{}
	runtime.SetFinalizer(s, func(*sentinel) {
		t.apply()
		arm(t)
	})
}

// apply sets the collector's target from the live heap and the allocation
// rate since the last apply, and while the floor is above LowHeadroom
// makes sure it is applied again a RateWindow later.
func (t *tuner) apply() {
	t.mu.Lock()
	s := t.current
	live, allocs := t.heap()
	now := t.now()
	rate := -1.0 // not known before the first collection
	if !t.lastTime.IsZero() {
		rate = float64(allocs-t.lastAllocs) / max(now.Sub(t.lastTime).Seconds(), 1e-3)
	}
	t.lastAllocs, t.lastTime = allocs, now
	h := Headroom(s, rate)
	if s.RateWindow > 0 && h > s.LowHeadroom && !t.pending {
		t.pending = true
		t.afterFunc(s.RateWindow, func() {
			t.mu.Lock()
			t.pending = false
			t.mu.Unlock()
			t.apply()
		})
	}
	held := t.held
	t.mu.Unlock()
	t.setPercent(Percent(s, live, held, h))
}

// Hold tells the tuner that n bytes of the live heap are held for a while
// (a sort buffer being written out) rather than worked through: they earn
// no headroom, so the garbage made around them is collected before it adds
// up to a quarter of them. The rule is applied at once, and again when the
// returned func ends the hold.
func Hold(n int64) (release func()) { return std.hold(n) }

func (t *tuner) hold(n int64) func() {
	change := func(d int64) {
		t.mu.Lock()
		t.held += d
		started := t.started
		t.mu.Unlock()
		if started {
			t.apply()
		}
	}
	change(n)
	var once sync.Once
	return func() { once.Do(func() { change(-n) }) }
}

// Headroom is the floor of headroom rule s gives a program that allocated
// rate bytes a second since the last collection (negative: not known).
func Headroom(s Settings, rate float64) int64 {
	if s.RateWindow <= 0 || rate < 0 {
		return s.MinHeadroom
	}
	h := int64(rate * s.RateWindow.Seconds())
	return min(max(h, s.LowHeadroom), s.MinHeadroom)
}

// Percent is the GOGC that rule s gives for live bytes of live heap, of
// which held bytes earn no headroom, and a floor of headroom bytes: the
// heap may grow by Percent of the rest of the live heap, or the floor.
func Percent(s Settings, live, held, headroom int64) int {
	if live <= 0 {
		if headroom > 0 {
			return 1000
		}
		return s.Percent
	}
	p := max(int64(s.Percent)*max(live-held, 0)/live, headroom*100/live)
	return int(min(max(p, 1), 1000))
}
