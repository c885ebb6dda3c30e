package main

import (
	"os"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"time"

	"github.com/pyiceberg-go/pyiceberg-go/core/gctune"
)

// gcRule is the garbage collector's target when the host sets no GOGC:
// the heap may grow by half the live data between collections (Go's
// default is all of it), or by 64 MB while less than 128 MB is live.
// Most of what a write allocates is Arrow and Parquet buffers with no
// pointers, so collecting more often costs little on large writes, while
// a smaller heap needs fewer fresh pages from the OS; small appends with a
// few MB live would otherwise collect several times per call
// (core/gctune, docs/decisions.md).
var gcRule = gctune.Settings{Percent: 50, MinHeadroom: 64 << 20}

func init() {
	if _, set := os.LookupEnv("GOGC"); !set {
		gctune.Start(gcRule)
	}
	startProfile()
	startTrace()
}

// startTrace writes a runtime execution trace (go tool trace) of the
// library's first PYICEBERG_GO_TRACE_SECONDS (default 10) seconds from load
// to the file named by PYICEBERG_GO_TRACE: where the CPU profile shows work,
// the trace shows waiting (locks, I/O, GC, scheduling).
func startTrace() {
	path := os.Getenv("PYICEBERG_GO_TRACE")
	if path == "" {
		return
	}
	secs, err := strconv.Atoi(os.Getenv("PYICEBERG_GO_TRACE_SECONDS"))
	if err != nil || secs <= 0 {
		secs = 10
	}
	f, err := os.Create(path)
	if err != nil {
		return
	}
	if err := trace.Start(f); err != nil {
		f.Close()
		return
	}
	time.AfterFunc(time.Duration(secs)*time.Second, func() {
		trace.Stop()
		f.Close()
	})
}

// startProfile writes a CPU profile of the library to the file named by
// PYICEBERG_GO_CPUPROFILE for PYICEBERG_GO_CPUPROFILE_SECONDS (default 60)
// seconds from load: a diagnostic for profiling the library inside the
// host process (bench/README in docs/benchmarks.md).
func startProfile() {
	path := os.Getenv("PYICEBERG_GO_CPUPROFILE")
	if path == "" {
		return
	}
	secs, err := strconv.Atoi(os.Getenv("PYICEBERG_GO_CPUPROFILE_SECONDS"))
	if err != nil || secs <= 0 {
		secs = 60
	}
	f, err := os.Create(path)
	if err != nil {
		return
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return
	}
	time.AfterFunc(time.Duration(secs)*time.Second, func() {
		pprof.StopCPUProfile()
		f.Close()
	})
}
