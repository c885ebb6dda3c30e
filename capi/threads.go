package main

import (
	"fmt"
	"runtime/debug"

	"github.com/pyiceberg-go/pyiceberg-go/capi/czstd"
	"github.com/pyiceberg-go/pyiceberg-go/core/host"
)

func init() {
	// zstd pages through the C library (capi/czstd); the GC policy and the
	// diagnostics are the core's (core/host).
	czstd.Install()
	host.Start()
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
