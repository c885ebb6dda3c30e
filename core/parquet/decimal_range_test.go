package parquet

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// A decimal beyond its column's precision (Arrow does not stop a producer
// from sending one) is a validation error. The native
// encoder wrote its low 32 or 64 bits: a row that read back as another
// number (found by FuzzWriteStream). Values in null slots are not read.
func TestDecimalBeyondPrecisionIsRefused(t *testing.T) {
	for _, prec := range []int{4, 15, 30} {
		sc := arrowSchema(t, iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "d", Type: iceberg.DecimalTypeOf(prec, 2)}))
		dt := sc.Field(0).Type.(*arrow.Decimal128Type)
		build := func(vals []decimal128.Num, valid []bool) arrow.RecordBatch {
			b := array.NewDecimal128Builder(memory.DefaultAllocator, dt)
			defer b.Release()
			b.AppendValues(vals, valid)
			a := b.NewArray()
			defer a.Release()
			// The builder zeroes null slots; put the value back.
			d := a.Data()
			copy(arrow.Decimal128Traits.CastFromBytes(d.Buffers()[1].Bytes()), vals)
			return array.NewRecordBatch(sc, []arrow.Array{a}, int64(len(vals)))
		}
		tooBig := decimal128.FromI64(1).Mul(decimal128.GetScaleMultiplier(prec)) // 10^prec
		fits := decimal128.FromI64(1).Mul(decimal128.GetScaleMultiplier(prec)).Sub(decimal128.FromI64(1))
		forEachEncoder(t, func(t *testing.T, ec encoderCase) {
			if !ec.flat && prec > 18 {
				// arrow-go's encoder writes a wide (FIXED_LEN) decimal as it
				// is; core/schema's conformer refuses it before it gets here
				// (checkPrecision, tested there).
				return
			}
			fs := newMemFS()
			w := NewWriter(t.Context(), fs, sc, ec.opts(Options{}), pathGen("mem://t"))
			ok := build([]decimal128.Num{fits, fits.Negate(), tooBig}, []bool{true, true, false})
			if err := w.Write(ok); err != nil {
				t.Fatalf("precision %d: in range, out of range in a null slot: %v", prec, err)
			}
			ok.Release()
			bad := build([]decimal128.Num{fits, tooBig.Negate()}, nil)
			err := w.Write(bad)
			if err == nil {
				_, err = w.Close()
			} else {
				w.Abort()
			}
			bad.Release()
			if !errors.Is(err, errs.ErrValidation) || !strings.Contains(err.Error(), "does not fit") {
				t.Fatalf("precision %d: error %v", prec, err)
			}
		})
	}
}

// beyond agrees with decimal128's FitsInPrecision around every bound.
func TestBeyondMatchesFitsInPrecision(t *testing.T) {
	for p := int32(1); p <= 18; p++ {
		lim := pow10[p]
		for _, v := range []int64{0, 1, -1, lim - 1, lim, lim + 1, -lim + 1, -lim, -lim - 1, 1<<63 - 1, -1 << 63, 1 << 62, -(1 << 62)} {
			for _, hi := range []int64{v >> 63, 0, -1, 5} {
				n := decimal128.New(hi, uint64(v))
				if got, want := beyond(n, v, lim) != 0, !n.FitsInPrecision(p); got != want {
					t.Errorf("p %d, %s: beyond %v, FitsInPrecision %v", p, n.BigInt(), got, !want)
				}
			}
		}
	}
}

// BenchmarkDecimalConversion is the native encoder's loop over 64-bit
// decimals with and without the precision check, in CPU time.
func BenchmarkDecimalConversion(b *testing.B) {
	nums := make([]decimal128.Num, 1<<16)
	for i := range nums {
		nums[i] = decimal128.FromI64(int64(i*7919) % 1_000_000_000)
	}
	out := make([]int64, 0, len(nums))
	for _, check := range []bool{false, true} {
		b.Run(fmt.Sprint("check=", check), func(b *testing.B) {
			cpu0 := cpuSeconds()
			var bad uint64
			for b.Loop() {
				out = out[:0]
				for _, n := range nums {
					v := int64(n.LowBits())
					if check {
						bad |= beyond(n, v, pow10[15])
					}
					out = append(out, v)
				}
			}
			if bad != 0 {
				b.Fatal("a value was beyond")
			}
			b.ReportMetric((cpuSeconds()-cpu0)*1e9/float64(b.N)/float64(len(nums)), "cpu-ns/value")
		})
	}
}
