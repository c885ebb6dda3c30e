package pin

import (
	"runtime"
	"sync"
	"syscall"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// threadReader records the OS thread of every call into it.
type threadReader struct {
	array.RecordReader
	mu       sync.Mutex
	threads  map[int]int
	left     int
	released int
	panics   bool
}

func (r *threadReader) note() {
	r.mu.Lock()
	r.threads[syscall.Gettid()]++
	r.mu.Unlock()
}

func (r *threadReader) Next() bool {
	r.note()
	if r.panics {
		panic("producer failed")
	}
	r.left--
	return r.left >= 0
}

func (r *threadReader) Release() { r.note(); r.released++ }

func newThreadReader(n int) *threadReader {
	sc := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}}, nil)
	rr, _ := array.NewRecordReader(sc, nil)
	return &threadReader{RecordReader: rr, threads: map[int]int{}, left: n}
}

// Calls made from many goroutines on many OS threads reach the producer on
// one thread; the stream is released once, there, after the last reference.
func TestCallsReachTheProducerOnOneThread(t *testing.T) {
	inner := newThreadReader(200)
	p := NewReader(inner)
	p.Retain()
	var wg sync.WaitGroup
	callers := map[int]bool{}
	var mu sync.Mutex
	// All callers hold their threads until each has one: a caller that
	// finished and unlocked first handed its thread to the next.
	var started sync.WaitGroup
	started.Add(8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // each caller on a thread of its own
			defer runtime.UnlockOSThread()
			mu.Lock()
			callers[syscall.Gettid()] = true
			mu.Unlock()
			started.Done()
			started.Wait()
			for range 20 {
				mu.Lock() // a reader is pulled by one caller at a time
				p.Next()
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if inner.left != 40 {
		t.Fatalf("%d batches left of 200 after 160 calls", inner.left)
	}
	p.Release()
	if inner.released != 0 {
		t.Fatal("released while a reference was held")
	}
	p.Release()
	if inner.released != 1 {
		t.Fatalf("released %d times", inner.released)
	}
	if len(inner.threads) != 1 || len(callers) != 8 {
		t.Fatalf("producer called on %d threads by %d calling threads", len(inner.threads), len(callers))
	}
	for tid := range inner.threads {
		if callers[tid] {
			t.Fatal("producer called on a caller's thread")
		}
	}
}

// A panic in the producer's call is raised in the caller, and the reader
// still releases.
func TestPanicReachesTheCaller(t *testing.T) {
	inner := newThreadReader(1)
	inner.panics = true
	p := NewReader(inner)
	func() {
		defer func() {
			if v := recover(); v != "producer failed" {
				t.Fatalf("recovered %v", v)
			}
		}()
		p.Next()
		t.Fatal("no panic")
	}()
	p.Release()
	if inner.released != 1 {
		t.Fatalf("released %d times", inner.released)
	}
}
