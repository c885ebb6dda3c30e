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

var (
	mu      sync.Mutex
	current Settings
	started bool
	// allocations and time at the last apply, for the allocation rate.
	lastAllocs uint64
	lastTime   time.Time
	// pending applies the rule again after RateWindow (nil: none set).
	pending *time.Timer
)

// Start makes s the rule from the next collection on (and applies it to
// the live heap now). It can be called again to change the rule.
func Start(s Settings) {
	mu.Lock()
	current = s
	first := !started
	started = true
	mu.Unlock()
	apply()
	if first {
		arm()
	}
}

// sentinel is garbage from birth: its finalizer runs after each
// collection, applies the rule and arms a new one.
type sentinel struct{ _ [16]byte }

func arm() {
	s := &sentinel{}
	runtime.SetFinalizer(s, func(*sentinel) {
		apply()
		arm()
	})
}

var samples = []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/heap/allocs:bytes"}}

func apply() {
	mu.Lock()
	s := current
	metrics.Read(samples)
	live := int64(samples[0].Value.Uint64())
	allocs, now := samples[1].Value.Uint64(), time.Now()
	rate := -1.0 // not known before the first collection
	if !lastTime.IsZero() {
		rate = float64(allocs-lastAllocs) / max(now.Sub(lastTime).Seconds(), 1e-3)
	}
	lastAllocs, lastTime = allocs, now
	h := Headroom(s, rate)
	if s.RateWindow > 0 && h > s.LowHeadroom && pending == nil {
		pending = time.AfterFunc(s.RateWindow, func() {
			mu.Lock()
			pending = nil
			mu.Unlock()
			apply()
		})
	}
	mu.Unlock()
	debug.SetGCPercent(Percent(s, live, h))
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

// Percent is the GOGC that rule s gives for live bytes of live heap and a
// floor of headroom bytes.
func Percent(s Settings, live, headroom int64) int {
	p := s.Percent
	if live > 0 {
		if h := int(headroom * 100 / live); h > p {
			p = h
		}
	} else if headroom > 0 {
		p = 1000
	}
	return min(p, 1000)
}
