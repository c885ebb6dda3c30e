package rowlevel

import (
	"context"
	"fmt"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/expr"
	"github.com/pyiceberg-go/pyiceberg-go/core/schema"
	"github.com/pyiceberg-go/pyiceberg-go/core/write"
)

// sourceRows is a merge source held in the batches it arrived in, not
// concatenated (which would copy the whole source), its rows numbered
// across batches.
type sourceRows struct {
	schema  *arrow.Schema
	batches []arrow.RecordBatch
	starts  []int64 // batch i holds rows starts[i] .. starts[i+1]-1
}

// readSource reads a stream once, keeping its non-empty batches, as conf
// converts them when it is not nil.
func readSource(ctx context.Context, in array.RecordReader, conf *schema.Conformer) (*sourceRows, error) {
	s := &sourceRows{schema: in.Schema(), starts: []int64{0}}
	if conf != nil {
		s.schema = conf.Schema()
	}
	for in.Next() {
		if err := ctx.Err(); err != nil {
			s.Release()
			return nil, fmt.Errorf("%w: %v", errs.ErrCancelled, err)
		}
		rec := in.RecordBatch()
		if rec.NumRows() == 0 {
			continue
		}
		if conf != nil {
			c, err := conf.Conform(rec)
			if err != nil {
				s.Release()
				return nil, err
			}
			rec = c
		} else {
			rec.Retain()
		}
		s.batches = append(s.batches, rec)
		s.starts = append(s.starts, s.starts[len(s.starts)-1]+rec.NumRows())
	}
	if err := in.Err(); err != nil {
		s.Release()
		return nil, fmt.Errorf("%w: reading the merge source: %v", errs.ErrInvalidArgument, err)
	}
	return s, nil
}

func (s *sourceRows) NumRows() int64 { return s.starts[len(s.starts)-1] }

func (s *sourceRows) Release() {
	write.ReleaseAll(s.batches)
	s.batches = nil
}

// evalKeys evaluates the source side of keys over every batch, one array
// per key (the key columns only are concatenated).
func (s *sourceRows) evalKeys(ctx context.Context, keys []expr.Key) ([]arrow.Array, error) {
	switch len(s.batches) {
	case 0:
		cols := write.EmptyColumns(s.schema)
		empty := array.NewRecordBatch(s.schema, cols, 0)
		write.ReleaseArrays(cols)
		defer empty.Release()
		return evalKeys(ctx, keys, empty, false)
	case 1:
		return evalKeys(ctx, keys, s.batches[0], false)
	}
	parts := make([][]arrow.Array, len(keys))
	defer func() {
		for _, p := range parts {
			write.ReleaseArrays(p)
		}
	}()
	for _, b := range s.batches {
		vals, err := evalKeys(ctx, keys, b, false)
		if err != nil {
			return nil, err
		}
		for k, v := range vals {
			parts[k] = append(parts[k], v)
		}
	}
	out := make([]arrow.Array, len(keys))
	for k := range keys {
		c, err := array.Concatenate(parts[k], memory.DefaultAllocator)
		if err != nil {
			write.ReleaseArrays(out[:k])
			return nil, fmt.Errorf("%w: the merge source's keys: %v", errs.ErrInvalidArgument, err)
		}
		out[k] = c
	}
	return out, nil
}

// take gathers source rows idx (numbered across batches) in idx's order.
func (s *sourceRows) take(ctx context.Context, idx []int32) (arrow.RecordBatch, error) {
	switch len(s.batches) {
	case 0:
		return write.ConcatBatches(s.schema, nil)
	case 1:
		return takeRecord(ctx, s.batches[0], idx)
	}
	// Group the rows by batch (stably), gather each batch's, concatenate,
	// and put the rows back in idx's order unless they already are.
	which := make([]int32, len(idx))
	count := make([]int, len(s.batches)+1)
	for j, r := range idx {
		b := sort.Search(len(s.batches), func(b int) bool { return s.starts[b+1] > int64(r) })
		which[j] = int32(b)
		count[b+1]++
	}
	for b := range s.batches {
		count[b+1] += count[b]
	}
	local := make([]int32, len(idx))
	pos := make([]int32, len(idx)) // where row j lands in the grouped rows
	next := append([]int(nil), count[:len(s.batches)]...)
	inOrder := true
	for j, r := range idx {
		b := which[j]
		p := next[b]
		next[b]++
		local[p] = r - int32(s.starts[b])
		pos[j] = int32(p)
		inOrder = inOrder && p == j
	}
	var parts []arrow.RecordBatch
	defer func() { write.ReleaseAll(parts) }()
	for b, rec := range s.batches {
		if count[b+1] == count[b] {
			continue
		}
		part, err := takeRecord(ctx, rec, local[count[b]:count[b+1]])
		if err != nil {
			return nil, err
		}
		parts = append(parts, part)
	}
	grouped, err := write.ConcatBatches(s.schema, parts)
	if err != nil {
		return nil, err
	}
	if inOrder {
		return grouped, nil
	}
	defer grouped.Release()
	return takeRecord(ctx, grouped, pos)
}
