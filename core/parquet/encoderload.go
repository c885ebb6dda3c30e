package parquet

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// The encoders of one process share its cores and memory. Two counts say
// how loaded they are: the encoders encoding now (encodersBusy), which
// decides how many goroutines a file's columns are spread over, and the
// files open (openEncoders), past fullPageFiles of which each file cuts
// smaller pages (pagesize.go).

// encodersBusy counts the encoders inside write or newRowGroup, the
// goroutines encoding now; parallelColumnRows is the smallest batch whose
// columns are spread over goroutines.
var encodersBusy atomic.Int32

const parallelColumnRows = 4096

// openEncoders counts the native encoders with a file open. Each holds an
// open page per column, uncompressed: with a write to many partitions at
// once those pages were most of the memory (bench W2: 84 files open, about
// 500 MB of open pages). Past fullPageFiles open files, page limits shrink
// in proportion (see pageLimitsFor): at 84 files, 500 MB less at the peak
// for 2% more bytes and no measurable time (docs/decisions.md). Tests give
// a Writer a count of its own (Options.openFiles).
var openEncoders atomic.Int32

// openCount is an encoder's place in its count of open encoders: counted
// when the encoder is made, released once.
type openCount struct {
	open     *atomic.Int32
	released bool
}

func newOpenCount(open *atomic.Int32) openCount {
	open.Add(1)
	return openCount{open: open}
}

// release takes the encoder out of its count, once.
func (o *openCount) release() {
	if !o.released {
		o.released = true
		o.open.Add(-1)
	}
}

// columnHelpers is the number of goroutines, beside the caller, that encode
// a file's ncols columns of a batch of rows rows when busy encoders (the
// caller's included) share procs cores: none for a small batch, else one
// per core no other encoder is using, and no more than there are columns
// to share.
func columnHelpers(busy, procs, ncols, rows int) int {
	if rows < parallelColumnRows {
		return 0
	}
	return max(0, min(procs-busy, ncols-1))
}

// eachColumnSpread runs fn on each of ncols columns, spread over the cores
// no other encoder is using: a lone file (an overwrite of one partition, a
// small table) encodes on every core, while writers that already keep every
// core busy encode their columns in turn without extra goroutines. Spread
// columns are taken largest first by cost (longest job first), so that no
// core is left alone with a large column at the end: in schema order,
// lineitem's l_comment came last and one core encoded it alone. A nil cost
// keeps the columns in schema order; rows below parallelColumnRows (0 to
// keep to one goroutine) are encoded in turn. scratch holds one S per
// goroutine (grown as needed).
func eachColumnSpread[S any](scratch *[]S, ncols, rows int, cost func(i int) int64, fn func(i int, sc *S) error) error {
	busy := int(encodersBusy.Add(1))
	defer encodersBusy.Add(-1)
	helpers := columnHelpers(busy, runtime.GOMAXPROCS(0), ncols, rows)
	if len(*scratch) < helpers+1 {
		*scratch = append(*scratch, make([]S, helpers+1-len(*scratch))...)
	}
	sc := *scratch
	if helpers == 0 {
		for i := range ncols {
			if err := fn(i, &sc[0]); err != nil {
				return err
			}
		}
		return nil
	}
	order := make([]int, ncols)
	for i := range order {
		order[i] = i
	}
	if cost != nil {
		costs := make([]int64, ncols)
		for i := range costs {
			costs[i] = cost(i)
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(costs[b], costs[a]) })
	}
	var next atomic.Int32
	failed := make([]error, helpers+1)
	work := func(k int) {
		defer func() {
			if r := recover(); r != nil {
				failed[k] = fmt.Errorf("encoding a column: panic: %v", r)
			}
		}()
		for {
			j := int(next.Add(1)) - 1
			if j >= len(order) || failed[k] != nil {
				return
			}
			failed[k] = fn(order[j], &sc[k])
		}
	}
	var wg sync.WaitGroup
	for k := 1; k <= helpers; k++ {
		wg.Go(func() { work(k) })
	}
	work(0)
	wg.Wait()
	for _, err := range failed {
		if err != nil {
			return err
		}
	}
	return nil
}
