//go:build !pig_testhooks

package testhooks

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// Enabled reports whether the hooks are built in.
const Enabled = false

// CheckConf rejects the test keys in the session configuration conf as
// unknown: this build has no hooks for them.
func CheckConf(conf map[string]string) error {
	keys := make([]string, 0, len(conf))
	for k := range conf {
		if isTestKey(k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	slices.Sort(keys)
	return fmt.Errorf("%w: unknown session configuration key %q (test hooks are only in libraries built with the pig_testhooks tag)",
		errs.ErrInvalidArgument, keys[0])
}

// Panic returns the error of an unknown operation: __panic does not exist
// in this build.
func Panic(map[string]string) error {
	return fmt.Errorf("%w: unknown operation %q", errs.ErrInvalidArgument, "__panic")
}

// CommitDelay does nothing in this build.
func CommitDelay(map[string]string) {}

// isTestKey reports whether k, a session configuration key, is one of the
// test keys, spelled as ours or with Spark's prefix.
func isTestKey(k string) bool {
	return strings.HasPrefix(strings.TrimPrefix(k, "spark.sql.iceberg."), "test.")
}
