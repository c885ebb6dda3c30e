package filelock

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// try takes key's lock only if it is free now: with a cancelled context Lock
// returns at once unless its first, non-blocking attempt succeeded.
func try(t *testing.T, path, key string) (func(), bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	unlock, err := Lock(ctx, path, key)
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Lock: %v", err)
		}
		return nil, false
	}
	return unlock, true
}

func TestHeldKeyIsRefusedFreeKeyIsNot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l")
	unlock, err := Lock(context.Background(), path, "db.a")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := try(t, path, "db.a"); ok {
		t.Fatal("a second holder got db.a's lock in the same process")
	}
	other, ok := try(t, path, "db.b")
	if !ok {
		t.Fatal("db.b is free but was refused")
	}
	other()
	unlock()
	// The refused try above left its waiter in the kernel (a blocked fcntl
	// cannot be interrupted); it takes db.a the moment it is released and
	// lets go at once. So the released key is taken again by waiting, not
	// by a try that could meet that waiter (it failed one run in three).
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	again, err := Lock(ctx, path, "db.a")
	if err != nil {
		t.Fatalf("db.a was released but is still refused: %v", err)
	}
	again()
}

// Another descriptor of the lock file closed in the process (as another
// SQLite copy or a user's code would) must not release the lock.
func TestForeignCloseKeepsTheLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l")
	unlock, err := Lock(context.Background(), path, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, ok := try(t, path, "k"); ok {
		t.Fatal("closing another descriptor of the file released the lock")
	}
}

func TestWaitersTakeTurns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l")
	var inside, most, total atomic.Int32
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				unlock, err := Lock(context.Background(), path, "k")
				if err != nil {
					t.Error(err)
					return
				}
				n := inside.Add(1)
				if n > most.Load() {
					most.Store(n)
				}
				runtime.Gosched()
				total.Add(1)
				inside.Add(-1)
				unlock()
			}
		}()
	}
	wg.Wait()
	if most.Load() != 1 || total.Load() != 200 {
		t.Fatalf("at most %d holders at once (want 1), %d turns (want 200)", most.Load(), total.Load())
	}
}

func TestCancelledWaitGivesUpAndReleasesLater(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l")
	unlock, err := Lock(context.Background(), path, "k")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() {
		_, err := Lock(ctx, path, "k")
		got <- err
	}()
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait returned %v", err)
	}
	unlock()
	// The abandoned waiter may take the lock briefly; it must let it go.
	again, err := Lock(context.Background(), path, "k")
	if err != nil {
		t.Fatal(err)
	}
	again()
}

// A holder in another process excludes us until it dies; its death
// releases the lock.
func TestOtherProcessHoldsUntilItDies(t *testing.T) {
	if os.Getenv("FILELOCK_HOLD") != "" {
		unlock, err := Lock(context.Background(), os.Getenv("FILELOCK_HOLD"), "k")
		if err != nil {
			os.Exit(2)
		}
		defer unlock()
		os.Stdout.WriteString("held\n")
		bufio.NewReader(os.Stdin).ReadString('\n') // until killed
		return
	}
	path := filepath.Join(t.TempDir(), "l")
	cmd := exec.Command(os.Args[0], "-test.run=^TestOtherProcessHoldsUntilItDies$")
	cmd.Env = append(os.Environ(), "FILELOCK_HOLD="+path)
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "held\n" {
		t.Fatalf("child did not take the lock: %q %v", line, err)
	}
	if _, ok := try(t, path, "k"); ok {
		t.Fatal("the lock another process holds was granted")
	}
	cmd.Process.Kill()
	cmd.Wait()
	unlock, err := Lock(context.Background(), path, "k")
	if err != nil {
		t.Fatal(err)
	}
	unlock()
}
