//go:build !linux

package filelock

import (
	"context"
	"fmt"
	"os"
	"time"
)

// Without OFD locks the lock is a file created exclusively next to path
// (path.<offset>): portable, but a holder that dies leaves it behind. The
// library ships for Linux only; this keeps other builds correct.

func lock(ctx context.Context, path string, off int64) (func(), error) {
	name := fmt.Sprintf("%s.%x", path, off)
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			f.Close()
			return func() { os.Remove(name) }, nil
		}
		if !os.IsExist(err) {
			return nil, fmt.Errorf("locking %s: %w", name, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
}
