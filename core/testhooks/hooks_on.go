//go:build pig_testhooks

package testhooks

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// Enabled reports whether the hooks are built in.
const Enabled = true

// CheckConf accepts the session configuration conf: the test keys are
// known in this build.
func CheckConf(conf map[string]string) error { return nil }

// on reports whether the session configuration turns the hooks on.
func on(conf map[string]string) bool { return conf["test.hooks"] == "true" }

// Panic panics when conf has test.hooks=true; otherwise it returns an
// invalid-argument error.
func Panic(conf map[string]string) error {
	if on(conf) {
		panic("injected panic (test.hooks)")
	}
	return fmt.Errorf("%w: operation __panic needs test.hooks", errs.ErrInvalidArgument)
}

// CommitDelay holds an operation before its first commit attempt when conf
// has test.hooks=true, so that tests can commit a concurrent change
// meanwhile. It first creates the file test.commit-delay-signal (if set) to
// tell them the wait has begun, then waits until the file
// test.commit-delay-release exists (if set: the test says when, whatever the
// machine's load; ten minutes at most), else sleeps test.commit-delay-ms.
func CommitDelay(conf map[string]string) {
	if !on(conf) {
		return
	}
	if path := conf["test.commit-delay-signal"]; path != "" {
		_ = os.WriteFile(path, nil, 0o644)
	}
	if path := conf["test.commit-delay-release"]; path != "" {
		for end := time.Now().Add(10 * time.Minute); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			if _, err := os.Stat(path); err == nil {
				return
			}
		}
		return
	}
	if ms, err := strconv.Atoi(conf["test.commit-delay-ms"]); err == nil && ms > 0 {
		time.Sleep(time.Duration(ms) * time.Millisecond)
	}
}
