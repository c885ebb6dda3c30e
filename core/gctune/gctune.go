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
package gctune

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Settings of the tuner.
type Settings struct {
	Percent     int   // GOGC for a large live heap
	MinHeadroom int64 // bytes the heap may grow past the live heap at least
}

var (
	mu      sync.Mutex
	current Settings
	started bool
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

var liveSample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}

func apply() {
	mu.Lock()
	s := current
	metrics.Read(liveSample)
	live := int64(liveSample[0].Value.Uint64())
	mu.Unlock()
	debug.SetGCPercent(Percent(s, live))
}

// Percent is the GOGC that rule s gives for live bytes of live heap.
func Percent(s Settings, live int64) int {
	p := s.Percent
	if live > 0 {
		if h := int(s.MinHeadroom * 100 / live); h > p {
			p = h
		}
	} else if s.MinHeadroom > 0 {
		p = 1000
	}
	return min(p, 1000)
}
