package parquet

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// The end of a file the native encoder writes: its bloom filters, then the
// footer.

// offsetWriter passes writes on to w and counts the bytes passed on: n is
// the file offset the next write lands at.
type offsetWriter struct {
	w io.Writer
	n int64
}

func (c *offsetWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// finishBlooms finishes a row group's bloom filters (nil where a column has
// none).
func finishBlooms(blooms []*bloomBuilder) [][]byte {
	rg := make([][]byte, len(blooms))
	for i, b := range blooms {
		if b != nil {
			rg[i] = b.finish()
		}
	}
	return rg
}

// writeBloomFilters writes filters (by row group, then column; nil where a
// column has none) to sink and points md's column chunks at them.
func writeBloomFilters(sink *offsetWriter, md *format.FileMetaData, filters [][][]byte) error {
	proto := new(thrift.CompactProtocol)
	for rg, cols := range filters {
		for c, bitset := range cols {
			if bitset == nil {
				continue
			}
			hdr := format.BloomFilterHeader{NumBytes: int32(len(bitset))}
			hdr.Algorithm.Value = &format.SplitBlockAlgorithm{}
			hdr.Hash.Value = &format.XxHash{}
			hdr.Compression.Value = &format.BloomFilterUncompressed{}
			raw, err := thrift.Marshal(proto, &hdr)
			if err != nil {
				return fmt.Errorf("encoding bloom filter header: %w", err)
			}
			meta := &md.RowGroups[rg].Columns[c].MetaData
			meta.BloomFilterOffset = sink.n
			meta.BloomFilterLength = int32(len(raw) + len(bitset))
			if _, err := sink.Write(raw); err != nil {
				return withIO(err)
			}
			if _, err := sink.Write(bitset); err != nil {
				return withIO(err)
			}
		}
	}
	return nil
}

// writeFooter writes md, its length and the closing magic to sink, and
// returns md as arrow-go reads it.
func writeFooter(sink *offsetWriter, md *format.FileMetaData) (*metadata.FileMetaData, error) {
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), md)
	if err != nil {
		return nil, fmt.Errorf("encoding footer: %w", err)
	}
	trailer := binary.LittleEndian.AppendUint32(nil, uint32(len(footer)))
	for _, b := range [][]byte{footer, append(trailer, "PAR1"...)} {
		if _, err := sink.Write(b); err != nil {
			return nil, withIO(err)
		}
	}
	return metadata.NewFileMetaData(footer, nil)
}
