package expr

import (
	"context"
	"errors"
	"math"
	"math/big"
	"math/rand"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// cell reads row i of arr as a reference value.
func cell(t *testing.T, arr arrow.Array, i int) tv {
	if arr.IsNull(i) {
		return tnull
	}
	switch a := arr.(type) {
	case *array.Int32:
		return tv{i: int64(a.Value(i))}
	case *array.Int64:
		return tv{i: a.Value(i)}
	case *array.Float64:
		return tv{f: a.Value(i)}
	case *array.Decimal128:
		sc := a.DataType().(*arrow.Decimal128Type).Scale
		return tv{r: new(big.Rat).SetFrac(a.Value(i).BigInt(), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(sc)), nil))}
	case *array.String:
		return tv{s: a.Value(i)}
	case *array.Boolean:
		return tv{b: a.Value(i)}
	case *array.Date32:
		return tv{i: int64(a.Value(i))}
	case *array.Timestamp:
		return tv{i: int64(a.Value(i))}
	}
	t.Fatalf("unexpected result array %T", arr)
	return tv{}
}

func sameValue(t ty, want, got tv) bool {
	if want.null || got.null {
		return want.null == got.null
	}
	switch t {
	case tyDouble:
		return want.f == got.f || math.IsNaN(want.f) && math.IsNaN(got.f)
	case tyDec:
		return got.r != nil && want.r.Cmp(got.r) == 0
	case tyStr:
		return want.s == got.s
	case tyBool:
		return want.b == got.b
	}
	return want.i == got.i
}

func TestEvalDifferential(t *testing.T) {
	for _, seed := range diffSeeds {
		testEvalDifferential(t, seed)
	}
}

var diffSeeds = []int64{42, 7, 2026}

func testEvalDifferential(t *testing.T, seed int64) {
	r := rand.New(rand.NewSource(seed))
	sc := testSchema()
	g := gen{r: r}
	checked, errored := 0, 0
	for batch := 0; batch < 40; batch++ {
		rows := randRows(r, 60, batch%3 == 0)
		rec := makeBatch(t, sc, rows)
		for k := 0; k < 60; k++ {
			var x tn
			if k%2 == 0 {
				x = g.pred(1 + r.Intn(4))
			} else {
				x = g.value([]ty{tyInt, tyLong, tyDouble, tyDec, tyStr, tyTs}[r.Intn(6)], 1+r.Intn(3))
			}
			src := x.sql()
			e, err := Compile(src, sc)
			if err != nil {
				t.Fatalf("%s: %v", src, err)
			}
			// the canonical text binds to the same expression
			if again, err := Compile(e.String(), sc); err != nil || again.String() != e.String() || !again.Type().Equals(e.Type()) {
				t.Fatalf("%s: canonical text %s does not round trip: %v", src, e, err)
			}
			var refErr error
			want := make([]tv, len(rows))
			for i, rw := range rows {
				v, err := x.eval(rw)
				if err != nil {
					refErr = err
				}
				want[i] = v
			}
			arr, err := e.Eval(context.Background(), rec, memory.DefaultAllocator)
			if (err != nil) != (refErr != nil) {
				t.Fatalf("%s: Eval error %v, reference error %v", src, err, refErr)
			}
			if err != nil {
				if !errors.Is(err, errs.ErrValidation) {
					t.Fatalf("%s: eval error kind: %v", src, err)
				}
				errored++
				continue
			}
			if arr.Len() != len(rows) {
				t.Fatalf("%s: %d rows, want %d", src, arr.Len(), len(rows))
			}
			for i := range rows {
				var got tv
				if _, isNull := arr.(*array.Null); isNull {
					got = tnull
				} else {
					got = cell(t, arr, i)
				}
				if !sameValue(x.ty(), want[i], got) {
					t.Fatalf("%s (bound %s, %s): row %d = %+v, want %+v; row %v", src, e, arr.DataType(), i, got, want[i], rows[i])
				}
			}
			arr.Release()
			checked++
		}
		rec.Release()
	}
	t.Logf("%d expressions compared, %d raised errors in both", checked, errored)
	if errored == 0 || checked < 1500 {
		t.Errorf("too little coverage: %d checked, %d errors", checked, errored)
	}
}

func evalOne(t *testing.T, src string, rows []row) (arrow.Array, error) {
	t.Helper()
	sc := testSchema()
	e, err := Compile(src, sc)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	rec := makeBatch(t, sc, rows)
	defer rec.Release()
	return e.Eval(context.Background(), rec, nil)
}

func boolsOf(t *testing.T, arr arrow.Array) []any {
	out := make([]any, arr.Len())
	for i := range out {
		if !arr.IsNull(i) {
			out[i] = arr.(*array.Boolean).Value(i)
		}
	}
	return out
}

func TestEvalTargeted(t *testing.T) {
	rows := []row{
		{"id": int64(math.MaxInt64), "i": int32(math.MaxInt32), "s": "abc", "d": 0.0},
		{"id": int64(1), "i": int32(0), "s": "a_c", "d": 1.0},
		{"id": int64(2), "i": nil, "s": nil, "d": nil},
	}
	errCases := map[string]string{
		"id + 1 > 0":                        "overflow",
		"i * 2":                             "overflow",
		"-i - 2":                            "overflow",
		"abs(cast(-2147483647 - 1 as int))": "overflow",
		"id / i > 0":                        "division by zero",
		"id % i":                            "division by zero",
		"1.0D / d":                          "division by zero",
		"cast(s AS int)":                    "cannot cast",
		"cast(id AS int)":                   "out of range",
	}
	for src, msg := range errCases {
		_, err := evalOne(t, src, rows)
		if err == nil || !strings.Contains(err.Error(), msg) || !errors.Is(err, errs.ErrValidation) {
			t.Errorf("%s: got %v, want an error about %q", src, err, msg)
		}
	}
	// errors only count where Spark would evaluate: not in untaken branches,
	// not right of a decided AND/OR, not right of a NULL operand
	okCases := []string{
		"CASE WHEN i = 0 THEN NULL ELSE id / i END IS NULL OR TRUE",
		"if(i = 0 OR i IS NULL, 0D, 1D / i) >= 0 OR TRUE",
		"id < 5 AND id + 1 > 0",
		"coalesce(i, id + 1) IS NOT NULL OR TRUE",
		"nullif(i, 0) IS NULL OR 10 % nullif(i, 0) >= 0",
	}
	for _, src := range okCases {
		if _, err := evalOne(t, src, rows[1:]); err != nil {
			t.Errorf("%s: %v", src, err)
		}
	}

	likeRows := []row{{"s": "abc"}, {"s": "a_c"}, {"s": "ac"}, {"s": "äbc"}, {"s": "a%c"}, {"s": nil}, {"s": "xabcx"}}
	likes := map[string][]any{
		"s LIKE 'a%'":     {true, true, true, false, true, nil, false},
		"s LIKE 'a_c'":    {true, true, false, false, true, nil, false},
		"s LIKE '_bc'":    {true, false, false, true, false, nil, false},
		"s LIKE 'a\\_c'":  {false, true, false, false, false, nil, false},
		"s LIKE '%b%'":    {true, false, false, true, false, nil, true},
		"s NOT LIKE '%c'": {false, false, false, false, false, nil, true},
		"s LIKE 'a\\%c'":  {false, false, false, false, true, nil, false},
		"s LIKE '%a%c%'":  {true, true, true, false, true, nil, true},
	}
	for src, want := range likes {
		arr, err := evalOne(t, src, likeRows)
		if err != nil {
			t.Fatal(err)
		}
		if got := boolsOf(t, arr); !equalAny(got, want) {
			t.Errorf("%s = %v, want %v", src, got, want)
		}
	}

	inRows := []row{{"i": int32(1)}, {"i": int32(2)}, {"i": nil}}
	ins := map[string][]any{
		"i IN (1, NULL)":     {true, nil, nil},
		"i NOT IN (1, NULL)": {false, nil, nil},
		"i IN (1, 3)":        {true, false, nil},
		"i NOT IN (3)":       {true, true, nil},
		"i <=> NULL":         {false, false, true},
		"i <=> 1":            {true, false, false},
		"i = NULL":           {nil, nil, nil},
		"i IN (1L, 2.0)":     {true, true, nil},
		"CASE i WHEN 1 THEN TRUE WHEN 2 THEN FALSE END": {true, false, nil},
		"CASE WHEN i > 1 THEN NULL ELSE i = 1 END":      {true, nil, nil},
		"(i > 1) IS NOT TRUE":                           {true, false, true},
		"NOT (i = 1) OR i IS NULL":                      {false, true, true},
	}
	for src, want := range ins {
		arr, err := evalOne(t, src, inRows)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if got := boolsOf(t, arr); !equalAny(got, want) {
			t.Errorf("%s = %v, want %v", src, got, want)
		}
	}
}

func equalAny(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
