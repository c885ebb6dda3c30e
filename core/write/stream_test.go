package write

import (
	"errors"
	"fmt"
	"iter"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

var streamSchema = arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)

// streamBatches yields n batches of 10 rows, batch i holding i*10.., and
// fails with failAt's error at batch failAt (-1: never).
func streamBatches(mem memory.Allocator, n, failAt int) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for i := range n {
			if i == failAt {
				yield(nil, errors.New("disk gone"))
				return
			}
			b := array.NewInt64Builder(mem)
			for j := range 10 {
				b.Append(int64(i*10 + j))
			}
			col := b.NewArray()
			b.Release()
			rec := array.NewRecordBatch(streamSchema, []arrow.Array{col}, 10)
			col.Release()
			if !yield(rec, nil) {
				return
			}
		}
	}
}

// changesFrom keeps every row and reports a change from batch k on.
func changesFrom(k int) func(arrow.RecordBatch) ([]arrow.RecordBatch, bool, error) {
	i := 0
	return func(rec arrow.RecordBatch) ([]arrow.RecordBatch, bool, error) {
		i++
		rec.Retain()
		return []arrow.RecordBatch{rec}, i > k, nil
	}
}

// collect is a writer that checks rows arrive in order, sums them and fails
// after failAfter batches (-1: never).
func collect(sum *int64, rows *int64, failAfter int) func(array.RecordReader) (Written, error) {
	return func(r array.RecordReader) (Written, error) {
		n := 0
		for r.Next() {
			if n == failAfter {
				return Written{}, errors.New("encoder broke")
			}
			n++
			col := r.RecordBatch().Column(0).(*array.Int64)
			for _, v := range col.Int64Values() {
				if v != *rows {
					return Written{}, fmt.Errorf("row %d arrived at position %d", v, *rows)
				}
				*sum += v
				*rows++
			}
		}
		if err := r.Err(); err != nil {
			return Written{}, err
		}
		return Written{Rows: *rows}, nil
	}
}

func TestRewriteStream(t *testing.T) {
	cases := []struct {
		name                string
		n, failAt, changeAt int
		writerFailsAfter    int
		wantChanged         bool
		wantErr             string
		wantRows            int64
	}{
		{name: "change in a late batch writes every row in order", n: 20, failAt: -1, changeAt: 15, writerFailsAfter: -1, wantChanged: true, wantRows: 200},
		{name: "change in the first batch", n: 5, failAt: -1, changeAt: 0, writerFailsAfter: -1, wantChanged: true, wantRows: 50},
		{name: "no change writes nothing", n: 8, failAt: -1, changeAt: 100, writerFailsAfter: -1},
		{name: "read error after the writer started", n: 20, failAt: 12, changeAt: 3, writerFailsAfter: -1, wantErr: "reading f.parquet: disk gone"},
		{name: "read error before any change", n: 20, failAt: 2, changeAt: 10, writerFailsAfter: -1, wantErr: "reading f.parquet: disk gone"},
		{name: "writer fails midway", n: 50, failAt: -1, changeAt: 1, writerFailsAfter: 4, wantErr: "encoder broke"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			var sum, rows int64
			called := false
			var writerErr error
			write := collect(&sum, &rows, c.writerFailsAfter)
			out, changed, err := RewriteStream(streamSchema, streamBatches(mem, c.n, c.failAt), "f.parquet", changesFrom(c.changeAt),
				func(r array.RecordReader) (Written, error) {
					called = true
					w, err := write(r)
					writerErr = err
					return w, err
				})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || changed {
					t.Fatalf("err %v changed %v, want error %q", err, changed, c.wantErr)
				}
				// A writer that started must have failed too (so it deletes
				// its files), not committed a partial rewrite.
				if called && writerErr == nil {
					t.Fatal("the writer finished without an error after the input failed")
				}
				return
			}
			if err != nil || changed != c.wantChanged || called != c.wantChanged {
				t.Fatalf("err %v changed %v writer called %v", err, changed, called)
			}
			if !changed {
				return
			}
			n := int64(c.n * 10)
			if out.Rows != c.wantRows || rows != n || sum != n*(n-1)/2 {
				t.Fatalf("wrote %d rows (reported %d), sum %d; want %d rows, sum %d", rows, out.Rows, sum, n, n*(n-1)/2)
			}
		})
	}
}
