// Package host holds what the library does as a guest in another program's
// process: its garbage collector policy, its diagnostics (CPU profile,
// execution trace, heap profile, switched on by environment variables) and
// the runtime settings a host may change after start (GOMAXPROCS, the
// memory limit, environment variables the Go runtime reads).
package host

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"time"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/gctune"
)

// GCRule is the garbage collector's target when the host sets no GOGC:
// the heap may grow by a quarter of the live data between collections
// (Go's default is all of it), or by 64 MB while less than 256 MB is live;
// by less (what it allocates in a second, at least 16 MB) while the
// library allocates slowly, as a long streamed write does. Most of what a
// write allocates is Arrow and Parquet buffers with no pointers, so
// collecting more often costs little on large writes, while a smaller heap
// needs fewer fresh pages from the OS; small appends with a few MB live
// would otherwise collect several times per call (core/gctune).
var GCRule = gctune.Settings{Percent: 25, MinHeadroom: 64 << 20, RateWindow: time.Second, LowHeadroom: 16 << 20}

// Start applies the GC policy (unless the host set GOGC) and starts the
// diagnostics the environment asks for. The shared library calls it once,
// at load.
func Start() {
	if _, set := os.LookupEnv("GOGC"); !set {
		gctune.Start(GCRule)
	}
	// A CPU profile (where the time is spent) and an execution trace (where
	// it waits: locks, I/O, GC, scheduling), each of the first seconds from
	// load, and a heap profile of what is live that many seconds after load.
	startDiagnostic("PYICEBERG_GO_CPUPROFILE", 60, pprof.StartCPUProfile, pprof.StopCPUProfile)
	startDiagnostic("PYICEBERG_GO_TRACE", 10, trace.Start, trace.Stop)
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

// Settings are runtime settings a host changes after start: the Go runtime
// reads only the environment the process started with.
type Settings struct {
	MaxProcs         *int              `json:"max_procs"`
	MemoryLimitBytes *int64            `json:"memory_limit_bytes"`
	Env              map[string]string `json:"env"`
}

// Apply sets the environment variables, GOMAXPROCS and the soft memory
// limit that s names; nil fields are left alone. A bad value is an
// errs.ErrInvalidArgument and nothing after it is applied.
func Apply(s Settings) error {
	if s.MaxProcs != nil && *s.MaxProcs < 1 {
		return fmt.Errorf("%w: max_procs must be >= 1", errs.ErrInvalidArgument)
	}
	if s.MemoryLimitBytes != nil && *s.MemoryLimitBytes < 0 {
		return fmt.Errorf("%w: memory_limit_bytes must be >= 0", errs.ErrInvalidArgument)
	}
	for k, v := range s.Env {
		if err := os.Setenv(k, v); err != nil {
			return fmt.Errorf("%w: setting %s: %v", errs.ErrInvalidArgument, k, err)
		}
	}
	if s.MaxProcs != nil {
		runtime.GOMAXPROCS(*s.MaxProcs)
	}
	if s.MemoryLimitBytes != nil {
		debug.SetMemoryLimit(*s.MemoryLimitBytes)
	}
	return nil
}
