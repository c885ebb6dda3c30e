package parquet

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	pgo "github.com/parquet-go/parquet-go"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// Flat schemas: the schemas of top-level primitive columns that the native
// encoder writes, how each column maps to a Parquet leaf, and the checks
// and bounds that go with them.

// flatColumn is how one top-level Arrow column maps to a Parquet leaf.
type flatColumn struct {
	// node describes the leaf with parquet-go's types, from which the
	// native encoder takes the physical, logical and converted types and
	// the column order it writes into the footer.
	node     pgo.Node
	optional bool
	dict     bool // dictionary encoding is worth trying (not for bool)
	fixed    int  // decimal width of FIXED_LEN_BYTE_ARRAY decimals, else 0
	width    int  // plain-encoded bytes per value; 0 for byte arrays
	id       int  // Iceberg field id, -1 when absent
}

// flatSchema maps a schema of top-level primitive columns to Parquet
// leaves; ok is false, with the first unsupported column named in why, when
// some column needs the pqarrow encoder.
func flatSchema(sc *arrow.Schema) (cols []flatColumn, why string, ok bool) {
	cols = make([]flatColumn, len(sc.Fields()))
	for i, f := range sc.Fields() {
		var n pgo.Node
		c := flatColumn{dict: true, optional: f.Nullable}
		switch t := f.Type.(type) {
		case *arrow.BooleanType:
			n, c.dict, c.width = pgo.Leaf(pgo.BooleanType), false, 1
		case *arrow.Int32Type:
			n, c.width = pgo.Int(32), 4
		case *arrow.Int64Type:
			n, c.width = pgo.Int(64), 8
		// Floats are not dictionary encoded. This began as a workaround
		// (parquet-go v0.32.0, the earlier encoder, let NaN into the bounds
		// of dictionary pages); the native encoder kept the layout.
		case *arrow.Float32Type:
			n, c.dict, c.width = pgo.Leaf(pgo.FloatType), false, 4
		case *arrow.Float64Type:
			n, c.dict, c.width = pgo.Leaf(pgo.DoubleType), false, 8
		case *arrow.Decimal128Type:
			p, s := int(t.Precision), int(t.Scale)
			switch {
			case p < 1:
				return nil, f.Name, false
			case p <= 9:
				n, c.width = pgo.Decimal(s, p, pgo.Int32Type), 4
			case p <= 18:
				n, c.width = pgo.Decimal(s, p, pgo.Int64Type), 8
			default:
				c.fixed = decimalBytes(p)
				c.width = c.fixed
				n = pgo.Decimal(s, p, pgo.FixedLenByteArrayType(c.fixed))
			}
		case *arrow.Date32Type:
			n, c.width = pgo.Date(), 4
		case *arrow.Time64Type:
			if t.Unit != arrow.Microsecond {
				return nil, f.Name, false
			}
			n, c.width = pgo.TimeAdjusted(pgo.Microsecond, false), 8
		case *arrow.TimestampType:
			if t.Unit != arrow.Microsecond {
				return nil, f.Name, false
			}
			n, c.width = pgo.TimestampAdjusted(pgo.Microsecond, t.TimeZone != ""), 8
		case *arrow.StringType:
			n = pgo.String()
		case *arrow.BinaryType:
			n = pgo.Leaf(pgo.ByteArrayType)
		case *arrow.FixedSizeBinaryType:
			n, c.width = pgo.Leaf(pgo.FixedLenByteArrayType(t.ByteWidth)), t.ByteWidth
		case *extensions.UUIDType:
			n, c.width = pgo.UUID(), 16
		default:
			return nil, f.Name, false
		}
		if c.optional {
			n = pgo.Optional(n)
		} else {
			n = pgo.Required(n)
		}
		c.id = -1
		if id, ok := fieldID(f); ok {
			n = pgo.FieldID(n, id)
			c.id = id
		}
		c.node = n
		cols[i] = c
	}
	return cols, "", true
}

// decimalBytes is the smallest FIXED_LEN_BYTE_ARRAY width holding
// precision digits, the width arrow-go and Iceberg use.
func decimalBytes(precision int) int {
	for n := 1; ; n++ {
		if float64(precision) <= math.Floor(math.Log10(math.Pow(2, float64(8*n-1))-1)) {
			return n
		}
	}
}

// checkRequired rejects a batch with nulls in a column cols says is required.
func checkRequired(cols []flatColumn, rec arrow.RecordBatch) error {
	for i, c := range cols {
		if arr := rec.Column(i); !c.optional && arr.NullN() > 0 {
			return fmt.Errorf("column %q is required but has %d nulls: %w",
				rec.Schema().Field(i).Name, arr.NullN(), errs.ErrInvalidArgument)
		}
	}
	return nil
}

// decimalBound is the running min and max of a FIXED_LEN_BYTE_ARRAY
// decimal column. Such columns get no bounds in the footer or the column
// index (parquet-go, the earlier encoder, ordered them as unsigned bytes,
// and the native encoder kept that layout): the Iceberg metrics take their
// bounds from here.
type decimalBound struct {
	set    bool
	lo, hi decimal128.Num
}

// add widens b with the valid values of nums, rows off.. of arr.
func (b *decimalBound) add(nums []decimal128.Num, arr arrow.Array, off int) {
	nulls := arr.NullN() > 0
	for j, v := range nums {
		if nulls && arr.IsNull(off+j) {
			continue
		}
		if !b.set || v.Less(b.lo) {
			b.lo = v
		}
		if !b.set || b.hi.Less(v) {
			b.hi = v
		}
		b.set = true
	}
}

// fixDecimalMetrics sets the bounds of the FIXED_LEN_BYTE_ARRAY decimal
// columns (by column index in bounds) that the encoder kept out of the
// footer.
func fixDecimalMetrics(f *File, cols []flatColumn, bounds map[int]*decimalBound) {
	for i, b := range bounds {
		id := cols[i].id
		if id < 0 || !b.set {
			continue
		}
		f.Lower[id] = decimalBytesOf(b.lo)
		f.Upper[id] = decimalBytesOf(b.hi)
	}
}

// decimalBytesOf is Iceberg's decimal serialisation: minimal big-endian
// two's complement of the unscaled value.
func decimalBytesOf(n decimal128.Num) []byte {
	var be [16]byte
	binary.BigEndian.PutUint64(be[:8], uint64(n.HighBits()))
	binary.BigEndian.PutUint64(be[8:], n.LowBits())
	return minimalTwosComplement(be[:])
}
