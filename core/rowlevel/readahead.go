package rowlevel

import (
	"context"
	"fmt"
	"iter"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
)

// readAheadQueue is the decoded batches a file read ahead may hold before
// it waits for the consumer.
const readAheadQueue = 4

// readAhead yields the batches of n files in order, file after file, while
// up to ahead of the following files are already being decoded, each on a
// goroutine of its own into a short queue: a group of many small files is
// decoded on every core, not one file at a time. open(i) starts reading
// file i. When the consumer stops early, the readers stop and their queued
// batches are released.
func readAhead(ctx context.Context, n, ahead int, open func(i int) (iter.Seq2[arrow.RecordBatch, error], error)) iter.Seq2[arrow.RecordBatch, error] {
	type item struct {
		rec arrow.RecordBatch
		err error
	}
	return func(yield func(arrow.RecordBatch, error) bool) {
		done := make(chan struct{})
		var wg sync.WaitGroup
		queues := make([]chan item, n)
		start := func(i int) {
			q := make(chan item, readAheadQueue)
			queues[i] = q
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer close(q)
				send := func(it item) bool {
					select {
					case q <- it:
						return true
					case <-done:
						if it.rec != nil {
							it.rec.Release()
						}
						return false
					}
				}
				defer func() {
					if r := recover(); r != nil {
						send(item{err: fmt.Errorf("reading file %d of %d: internal error: %v", i+1, n, r)})
					}
				}()
				batches, err := open(i)
				if err != nil {
					send(item{err: err})
					return
				}
				for rec, err := range batches {
					if !send(item{rec, err}) || err != nil || ctx.Err() != nil {
						return
					}
				}
			}()
		}
		defer func() {
			close(done)
			for _, q := range queues {
				if q == nil {
					continue
				}
				for it := range q {
					if it.rec != nil {
						it.rec.Release()
					}
				}
			}
			wg.Wait()
		}()
		next := 0
		for i := range n {
			for next < n && next <= i+ahead {
				start(next)
				next++
			}
			for it := range queues[i] {
				if !yield(it.rec, it.err) || it.err != nil {
					return
				}
			}
			if err := ctx.Err(); err != nil {
				yield(nil, err)
				return
			}
		}
	}
}
