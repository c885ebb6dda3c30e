// Package filelock serialises work across processes with byte-range locks on
// a lock file. On Linux the locks are open file description (OFD) locks: each
// Lock opens the file anew, so two holders conflict whether they are two
// processes or two goroutines of one, and no other descriptor's close in the
// process (another SQLite copy, a user's open/close) can drop them. A process
// that dies releases its locks with its descriptors.
package filelock

import (
	"context"
	"hash/fnv"
)

// offset maps a key to the byte it locks: distinct keys almost never share
// one (when they do, their holders only wait for each other).
func offset(key string) int64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	return int64(h.Sum64() >> 2) // below 2^62: a valid, positive file offset
}

// Lock waits until it holds key's lock in the file at path (created if
// missing) or ctx ends. The returned function releases it; it is safe to call
// once.
func Lock(ctx context.Context, path, key string) (unlock func(), err error) {
	return lock(ctx, path, offset(key))
}
