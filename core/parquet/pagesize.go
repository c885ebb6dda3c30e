package parquet

import (
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Page sizes of the native encoder: the page size it starts from, the
// limits it cuts pages at while many files are open, and the runs of rows
// it takes into a page at once.

const (
	fullPageFiles = 16
	minPageRows   = 1024
	minPageBytes  = 4 << 10
)

// pageBytesFor is the plain-encoded size at which a page is cut. The
// encoder counts the values of open pages plain-encoded in the size
// estimate the Writer rolls files on, so pages are kept small against the
// target file size (1/8 of it over all columns): the estimate then stays
// close to the bytes really written.
func pageBytesFor(r resolved, ncols int) int {
	limit := r.TargetFileSize / int64(8*max(1, ncols))
	return int(max(4<<10, min(r.PageBytes, limit)))
}

// pageLimitsFor is the rows and plain-encoded bytes at which a page is cut
// when open files are open: the configured limits rows and bytes while at
// most fullPageFiles are, a share of them (not below minPageRows and
// minPageBytes) past that.
func pageLimitsFor(rows, bytes, open int) (int, int) {
	if open > fullPageFiles {
		rows = max(min(rows, minPageRows), rows*fullPageFiles/open)
		bytes = max(min(bytes, minPageBytes), bytes*fullPageFiles/open)
	}
	return rows, bytes
}

// pageChunkRows bounds the rows taken into a page at once, so that pages
// stay close to the page size.
const pageChunkRows = 4096

// chunkEndFor picks the rows [off, end) of arr, a column of plain width
// (0 for byte arrays) whose open page has room for rowsLeft more rows and
// budget more bytes, that go into the page next: at most pageChunkRows,
// and no more than fit (at least one row). size is their plain-encoded
// bytes.
func chunkEndFor(width int, arr arrow.Array, off, n, rowsLeft, budget int) (end, size int) {
	rows := min(n-off, pageChunkRows, rowsLeft)
	if width > 0 {
		rows = max(1, min(rows, budget/width))
		return off + rows, rows * width
	}
	var offs []int32
	switch a := arr.(type) {
	case *array.String:
		offs = a.ValueOffsets()
	case *array.Binary:
		offs = a.ValueOffsets()
	default:
		return off + max(1, rows), 0
	}
	bytesOf := func(k int) int { return int(offs[off+k]-offs[off]) + 4*k }
	// The largest k <= rows whose bytes fit the budget, at least 1.
	k := sort.Search(rows, func(k int) bool { return bytesOf(k+1) > budget })
	k = max(1, k)
	return off + k, bytesOf(k)
}
