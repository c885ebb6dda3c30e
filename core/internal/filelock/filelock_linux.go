//go:build linux

package filelock

import (
	"context"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

func lock(ctx context.Context, path string, off int64) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening lock file: %w", err)
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: off, Len: 1}
	fd := f.Fd()
	err = unix.FcntlFlock(fd, unix.F_OFD_SETLK, &lk)
	if err == nil {
		return func() { f.Close() }, nil
	}
	if !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EACCES) {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	// Held elsewhere: wait in the kernel, which wakes waiters as the holder
	// lets go. A blocked fcntl cannot be interrupted, so a cancelled wait
	// leaves the goroutine to release the lock the moment it gets it.
	done := make(chan error, 1)
	go func() {
		lk := lk
		for {
			err := unix.FcntlFlock(fd, unix.F_OFD_SETLKW, &lk)
			if !errors.Is(err, unix.EINTR) {
				done <- err
				return
			}
		}
	}()
	select {
	case err := <-done:
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		return func() { f.Close() }, nil
	case <-ctx.Done():
		go func() {
			<-done
			f.Close()
		}()
		return nil, ctx.Err()
	}
}
