package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"time"

	"github.com/pyiceberg-go/pyiceberg-go/capi/czstd"
	"github.com/pyiceberg-go/pyiceberg-go/core/gctune"
)

// gcRule is the garbage collector's target when the host sets no GOGC:
// the heap may grow by a quarter of the live data between collections
// (Go's default is all of it), or by 64 MB while less than 256 MB is live;
// by less (what it allocates in a second, at least 16 MB) while the
// library allocates slowly, as a long streamed write does.
// Most of what a write allocates is Arrow and Parquet buffers with no
// pointers, so collecting more often costs little on large writes, while
// a smaller heap needs fewer fresh pages from the OS; small appends with a
// few MB live would otherwise collect several times per call
// (core/gctune, docs/decisions.md).
var gcRule = gctune.Settings{Percent: 25, MinHeadroom: 64 << 20, RateWindow: time.Second, LowHeadroom: 16 << 20}

func init() {
	// zstd pages through the C library (capi/czstd).
	czstd.Install()
	if _, set := os.LookupEnv("GOGC"); !set {
		gctune.Start(gcRule)
	}
	// Diagnostics of the library inside its host process: a CPU profile
	// (where the time is spent) and an execution trace (where it waits:
	// locks, I/O, GC, scheduling), each of its first seconds from load.
	startDiagnostic("PYICEBERG_GO_CPUPROFILE", 60, pprof.StartCPUProfile, pprof.StopCPUProfile)
	startDiagnostic("PYICEBERG_GO_TRACE", 10, trace.Start, trace.Stop)
	// And a heap profile of what is live that many seconds after load.
	var heapOut io.Writer
	startDiagnostic("PYICEBERG_GO_HEAPPROFILE", 10, func(w io.Writer) error { heapOut = w; return nil },
		func() { _ = pprof.Lookup("heap").WriteTo(heapOut, 0) })
}

// startDiagnostic runs start on the file named by the variable env, and
// stop after env_SECONDS seconds (default secs); nothing when env is unset.
func startDiagnostic(env string, secs int, start func(io.Writer) error, stop func()) {
	path := os.Getenv(env)
	if path == "" {
		return
	}
	if n, err := strconv.Atoi(os.Getenv(env + "_SECONDS")); err == nil && n > 0 {
		secs = n
	}
	f, err := os.Create(path)
	if err != nil {
		return
	}
	if err := start(f); err != nil {
		f.Close()
		return
	}
	time.AfterFunc(time.Duration(secs)*time.Second, func() {
		stop()
		f.Close()
	})
}

// onGoThread runs fn on a goroutine of its own and waits for it. An export
// runs on the host's calling thread, which Go did not create, and Go's CPU
// profiler does not sample such threads: an operation run there was
// missing from PYICEBERG_GO_CPUPROFILE (all its work but what it handed
// to other goroutines: routing and partition splitting, the metadata
// loads and the commit). A panic in fn is raised again on the caller's
// goroutine, with fn's stack, for the export's guard.
func onGoThread[T any](fn func() (T, error)) (T, error) {
	type result struct {
		v        T
		err      error
		panicked any
		stack    []byte
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			if p := recover(); p != nil {
				r.panicked, r.stack = p, debug.Stack()
			}
			done <- r
		}()
		r.v, r.err = fn()
	}()
	r := <-done
	if r.panicked != nil {
		panic(fmt.Sprintf("%v\n%s", r.panicked, r.stack))
	}
	return r.v, r.err
}
