package main

import (
	"os"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"time"
)

// defaultGCPercent is the garbage collector's target when the host sets no
// GOGC: the heap may grow to 1.5x the live data between collections rather
// than Go's default 2x. Most of what a write allocates is Arrow and Parquet
// buffers with no pointers, so collecting more often costs little, while a
// smaller heap needs fewer fresh pages from the OS: on the TPC-H SF1
// benchmarks it cut peak RSS by a fifth and made the partitioned append
// faster (docs/decisions.md).
const defaultGCPercent = 50

func init() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(defaultGCPercent)
	}
	startProfile()
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
