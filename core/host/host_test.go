package host

import (
	"errors"
	"os"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

func TestApplySetsWhatItNamesAndRefusesBadValues(t *testing.T) {
	procs, limit := runtime.GOMAXPROCS(0), debug.SetMemoryLimit(-1)
	defer func() { runtime.GOMAXPROCS(procs); debug.SetMemoryLimit(limit) }()
	one, lim := 1, int64(3<<30)
	if err := Apply(Settings{MaxProcs: &one, MemoryLimitBytes: &lim, Env: map[string]string{"PIG_HOST_TEST": "x"}}); err != nil {
		t.Fatal(err)
	}
	if runtime.GOMAXPROCS(0) != 1 || debug.SetMemoryLimit(-1) != lim || os.Getenv("PIG_HOST_TEST") != "x" {
		t.Fatalf("GOMAXPROCS %d, limit %d, env %q", runtime.GOMAXPROCS(0), debug.SetMemoryLimit(-1), os.Getenv("PIG_HOST_TEST"))
	}
	zero, neg := 0, int64(-5)
	for _, s := range []Settings{{MaxProcs: &zero}, {MemoryLimitBytes: &neg}, {Env: map[string]string{"": "x"}}} {
		if err := Apply(s); !errors.Is(err, errs.ErrInvalidArgument) {
			t.Errorf("%+v: err = %v, want ErrInvalidArgument", s, err)
		}
	}
	// A refused setting applies nothing.
	if err := Apply(Settings{MaxProcs: &zero, Env: map[string]string{"PIG_HOST_TEST": "y"}}); err == nil || os.Getenv("PIG_HOST_TEST") != "x" {
		t.Fatalf("a refused call changed the environment: %v %q", err, os.Getenv("PIG_HOST_TEST"))
	}
}
