package expr

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
)

// structRow is a row as iceberg-go's expression evaluator reads it.
type structRow []any

func (s structRow) Size() int          { return len(s) }
func (s structRow) Get(pos int) any    { return s[pos] }
func (s structRow) Set(pos int, v any) { s[pos] = v }

// icebergValue converts a test value of field f to iceberg-go's Go representation.
func icebergValue(f iceberg.NestedField, v any) any {
	if v == nil {
		return nil
	}
	switch f.Type.(type) {
	case iceberg.DateType:
		return iceberg.Date(v.(int32))
	case iceberg.TimestampType, iceberg.TimestampTzType:
		return iceberg.Timestamp(v.(int64))
	case iceberg.DecimalType:
		return iceberg.Decimal{Val: decimal128.FromI64(v.(int64)), Scale: 2}
	case *iceberg.StructType:
		return toStruct(f.Type.(*iceberg.StructType).FieldList, v.(row))
	}
	return v
}

func toStruct(fields []iceberg.NestedField, rw row) structRow {
	out := make(structRow, len(fields))
	for i, f := range fields {
		out[i] = icebergValue(f, rw[f.Name])
	}
	return out
}

// truth evaluates e on rows and returns one outcome per row: true, false or nil.
func truth(t *testing.T, e *Expr, sc *iceberg.Schema, rows []row) ([]any, error) {
	rec := makeBatch(t, sc, rows)
	defer rec.Release()
	arr, err := e.Eval(context.Background(), rec, nil)
	if err != nil {
		return nil, err
	}
	defer arr.Release()
	out := make([]any, len(rows))
	for i := range out {
		if !arr.IsNull(i) {
			out[i] = arr.(*array.Boolean).Value(i)
		}
	}
	return out, nil
}

func TestIcebergSoundness(t *testing.T) {
	for _, seed := range pruneSeeds {
		testIcebergSoundness(t, seed)
	}
}

// pruneSeeds are the random seeds of the soundness tests.
var pruneSeeds = []int64{5, 11}

func testIcebergSoundness(t *testing.T, seed int64) {
	r := rand.New(rand.NewSource(seed))
	sc := testSchema()
	g := gen{r: r}
	converted, rejected := 0, 0
	for batch := 0; batch < 20; batch++ {
		rows := randRows(r, 50, batch%2 == 0)
		for k := 0; k < 80; k++ {
			x := g.pred(1 + r.Intn(4))
			e, err := Compile(x.sql(), sc)
			if err != nil {
				t.Fatalf("%s: %v", x.sql(), err)
			}
			ice := e.Iceberg()
			if _, all := ice.(iceberg.AlwaysTrue); !all {
				converted++
			}
			eval, err := iceberg.ExpressionEvaluator(sc, ice, true)
			if err != nil {
				t.Fatalf("%s: converted expression %s does not bind: %v", e, ice, err)
			}
			got, err := truth(t, e, sc, rows)
			if err != nil {
				continue // evaluation errors (overflow, ...) have no truth
			}
			for i, rw := range rows {
				ok, err := eval(toStruct(sc.Fields(), rw))
				if err != nil {
					t.Fatalf("%s: evaluating %s: %v", e, ice, err)
				}
				if got[i] == true && !ok {
					t.Fatalf("%s is TRUE on row %v but %s is false", e, rw, ice)
				}
				if !ok {
					rejected++
				}
			}
		}
	}
	t.Logf("%d expressions converted non-trivially, %d row rejections", converted, rejected)
	if converted < 400 || rejected < 1000 {
		t.Errorf("conversion too weak: %d converted, %d rejections", converted, rejected)
	}
}

func TestIcebergConversion(t *testing.T) {
	sc := testSchema()
	cases := map[string]string{
		"id > 5":                                 "GreaterThan(term=Reference(name='id'), literal=5)",
		"NOT (id <= 5)":                          "GreaterThan(term=Reference(name='id'), literal=5)",
		"s LIKE 'ab%'":                           "StartsWith(term=Reference(name='s'), literal=ab)",
		"s NOT LIKE 'ab%'":                       "NotStartsWith(term=Reference(name='s'), literal=ab)",
		"s LIKE 'ab_%'":                          "StartsWith(term=Reference(name='s'), literal=ab)",
		"level = 'INFO' AND upper(s) = 'A'":      "Equal(term=Reference(name='level'), literal=INFO)",
		"NOT (level = 'INFO' OR upper(s) = 'A')": "NotEqual(term=Reference(name='level'), literal=INFO)",
		"i IN (1, 2) OR st.x IS NULL":            "Or(left=In(term=Reference(name='i'), {[1 2]}), right=IsNull(term=Reference(name='st.x')))",
		"i NOT IN (1, NULL)":                     "AlwaysFalse()",
		"upper(s) = 'A'":                         "AlwaysTrue()",
		"NOT (upper(s) = 'A')":                   "AlwaysTrue()",
		"i > 5000000000":                         "AlwaysTrue()",
		"id = 9007199254740992D":                 "AlwaysTrue()", // long to double is not injective
		"i = 3.0D":                               "Equal(term=Reference(name='i'), literal=3)",
		"dec = 1":                                "Equal(term=Reference(name='dec'), literal=1.00)",
		"dt < TIMESTAMP '2024-01-02 00:00:00'":   "LessThan(term=Reference(name='dt'), literal=2024-01-02)",
	}
	for src, want := range cases {
		e, err := Compile(src, sc)
		if err != nil {
			t.Fatal(err)
		}
		got := e.Iceberg().String()
		if strings.ReplaceAll(got, "{[2 1]}", "{[1 2]}") != want {
			t.Errorf("%s: %s, want %s", src, got, want)
		}
	}
}

// fileOf builds a DataFile describing rows: identity partition on level,
// metrics from the rows, with some metrics dropped or string bounds truncated.
func fileOf(t *testing.T, r *rand.Rand, sc *iceberg.Schema, spec iceberg.PartitionSpec, rows []row, level any, noise bool) iceberg.DataFile {
	t.Helper()
	vc, nc, nan := map[int]int64{}, map[int]int64{}, map[int]int64{}
	lo, hi := map[int][]byte{}, map[int][]byte{}
	type leaf struct {
		f    iceberg.NestedField
		path []string
	}
	var leaves []leaf
	for _, f := range sc.Fields() {
		if st, ok := f.Type.(*iceberg.StructType); ok {
			for _, c := range st.FieldList {
				leaves = append(leaves, leaf{c, []string{f.Name, c.Name}})
			}
			continue
		}
		leaves = append(leaves, leaf{f, []string{f.Name}})
	}
	for _, l := range leaves {
		id := l.f.ID
		nc[id] = 0
		if _, ok := l.f.Type.(iceberg.Float64Type); ok {
			nan[id] = 0
		}
		var minV, maxV iceberg.Literal
		for _, rw := range rows {
			v, _ := tCol{path: l.path}.raw(rw)
			vc[id]++
			if v == nil {
				nc[id]++
				continue
			}
			if f, ok := v.(float64); ok && math.IsNaN(f) {
				nan[id]++
				continue
			}
			lit := literalOf(l.f, v)
			if minV == nil || less(lit, minV) {
				minV = lit
			}
			if maxV == nil || less(maxV, lit) {
				maxV = lit
			}
		}
		if noise && r.Intn(5) == 0 {
			delete(nc, id)
		}
		if noise && r.Intn(5) == 0 {
			delete(nan, id)
		}
		if minV == nil || noise && r.Intn(6) == 0 {
			continue
		}
		lb, _ := minV.MarshalBinary()
		ub, _ := maxV.MarshalBinary()
		if _, isStr := l.f.Type.(iceberg.StringType); isStr && noise && r.Intn(2) == 0 {
			// truncated bounds: a prefix below, an incremented prefix above
			if len(lb) > 1 {
				lb = lb[:1]
			}
			if len(ub) > 1 {
				if ub[0] == 0xff {
					continue
				}
				ub = []byte{ub[0] + 1}
			}
		}
		lo[id], hi[id] = lb, ub
	}
	part := map[int]any{1000: level}
	b, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData, "file.parquet", iceberg.ParquetFile, part, nil, nil, int64(len(rows)), 100)
	if err != nil {
		t.Fatal(err)
	}
	return b.ValueCounts(vc).NullValueCounts(nc).NaNValueCounts(nan).LowerBoundValues(lo).UpperBoundValues(hi).Build()
}

// raw reads a column value from a test row (nil for NULL or a NULL struct).
func (c tCol) raw(rw row) (any, bool) {
	var v any = rw
	for _, p := range c.path {
		m, ok := v.(row)
		if !ok {
			return nil, false
		}
		v = m[p]
	}
	return v, true
}

func literalOf(f iceberg.NestedField, v any) iceberg.Literal {
	switch x := icebergValue(f, v).(type) {
	case int32:
		return iceberg.NewLiteral(x)
	case int64:
		return iceberg.NewLiteral(x)
	case float64:
		return iceberg.NewLiteral(x)
	case string:
		return iceberg.NewLiteral(x)
	case bool:
		return iceberg.NewLiteral(x)
	case iceberg.Date:
		return iceberg.NewLiteral(x)
	case iceberg.Timestamp:
		return iceberg.NewLiteral(x)
	case iceberg.Decimal:
		return iceberg.NewLiteral(x)
	}
	panic(fmt.Sprintf("literal of %T", v))
}

func less(a, b iceberg.Literal) bool {
	switch x := a.(type) {
	case iceberg.Int32Literal:
		return x < b.(iceberg.Int32Literal)
	case iceberg.Int64Literal:
		return x < b.(iceberg.Int64Literal)
	case iceberg.Float64Literal:
		return x < b.(iceberg.Float64Literal)
	case iceberg.StringLiteral:
		return x < b.(iceberg.StringLiteral)
	case iceberg.BoolLiteral:
		return !bool(x) && bool(b.(iceberg.BoolLiteral))
	case iceberg.DateLiteral:
		return x < b.(iceberg.DateLiteral)
	case iceberg.TimestampLiteral:
		return x < b.(iceberg.TimestampLiteral)
	case iceberg.DecimalLiteral:
		return x.Val.Less(b.(iceberg.DecimalLiteral).Val)
	}
	panic(fmt.Sprintf("less %T", a))
}

func levelSpec() iceberg.PartitionSpec {
	return iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{13}, FieldID: 1000, Name: "level", Transform: iceberg.IdentityTransform{}})
}

func TestMetricsSoundness(t *testing.T) {
	for _, seed := range pruneSeeds {
		testMetricsSoundness(t, seed)
	}
}

func testMetricsSoundness(t *testing.T, seed int64) {
	r := rand.New(rand.NewSource(seed))
	sc := testSchema()
	spec := levelSpec()
	g := gen{r: r}
	pruned, whole, judged, simplified := 0, 0, 0, 0
	for round := 0; round < 60; round++ {
		all := randRows(r, 8, round%4 == 0)
		var files [][]row
		var levels []any
		var dfs []iceberg.DataFile
		for k := 0; k < 6; k++ {
			var level any
			if r.Intn(6) != 0 {
				level = levelPool[r.Intn(len(levelPool))]
			}
			rows := make([]row, 1+r.Intn(5))
			for i := range rows {
				rw := row{}
				for k, v := range all[r.Intn(len(all))] {
					rw[k] = v
				}
				rw["level"] = level
				rows[i] = rw
			}
			files = append(files, rows)
			levels = append(levels, level)
			dfs = append(dfs, fileOf(t, r, sc, spec, rows, level, r.Intn(2) == 0))
		}
		for k := 0; k < 40; k++ {
			x := g.pred(1 + r.Intn(3))
			e, err := Compile(x.sql(), sc)
			if err != nil {
				t.Fatalf("%s: %v", x.sql(), err)
			}
			for fi, rows := range files {
				got, err := truth(t, e, sc, rows)
				if err != nil {
					continue
				}
				judged++
				anyTrue, allTrue := false, true
				for _, v := range got {
					anyTrue = anyTrue || v == true
					allTrue = allTrue && v == true
				}
				might, every := e.MightMatch(dfs[fi], spec), e.MatchesAll(dfs[fi], spec)
				// the residual gives every row the outcome e gives it
				res := e.Residual(dfs[fi], spec)
				if res != e {
					simplified++
					rgot, err := truth(t, res, sc, rows)
					if err != nil {
						t.Fatalf("%s: residual %s fails where e does not: %v", e, res, err)
					}
					if fmt.Sprint(rgot) != fmt.Sprint(got) {
						t.Fatalf("%s: residual %s gives %v, e gives %v on rows %v (level %v)", e, res, rgot, got, rows, levels[fi])
					}
				}
				if anyTrue && !might {
					t.Fatalf("%s: MightMatch false but rows %v give %v (level %v)", e, rows, got, levels[fi])
				}
				if every && !allTrue {
					t.Fatalf("%s: MatchesAll true but rows %v give %v (level %v)", e, rows, got, levels[fi])
				}
				if !might {
					pruned++
				}
				if every {
					whole++
				}
			}
		}
	}
	t.Logf("%d judgements: %d files pruned, %d matched whole, %d residuals simpler", judged, pruned, whole, simplified)
	if pruned < judged/20 || whole < judged/50 || simplified < judged/50 {
		t.Errorf("metrics decide too little: %d pruned, %d whole, %d simplified of %d", pruned, whole, simplified, judged)
	}
}

func TestMetricsObviousCases(t *testing.T) {
	sc := testSchema()
	spec := levelSpec()
	r := rand.New(rand.NewSource(1))
	rows := []row{
		{"id": int64(10), "i": int32(1), "d": 1.5, "s": "abc", "level": "INFO", "dec": int64(150), "dt": int32(19723)},
		{"id": int64(50), "i": int32(3), "d": 3.0, "s": "abd", "level": "INFO", "dec": int64(-20), "dt": int32(19730)},
	}
	f := fileOf(t, r, sc, spec, rows, "INFO", false)
	cases := []struct {
		src        string
		might, all bool
	}{
		{"id > 100", false, false},
		{"id > 5", true, true},
		{"id >= 50", true, false},
		{"id < 10", false, false},
		{"id = 30", true, false},
		{"id IN (1, 2, 60)", false, false},
		{"id NOT IN (1, 2)", true, true},
		{"id BETWEEN 10 AND 50", true, true},
		{"level = 'INFO'", true, true},
		{"level = 'WARN'", false, false},
		{"lower(level) = 'info'", true, true},
		{"level IN ('WARN', 'ERROR')", false, false},
		{"s LIKE 'ab%'", true, true},
		{"s LIKE 'b%'", false, false},
		{"s LIKE 'abc'", true, false},
		{"s IS NULL", false, false},
		{"s IS NOT NULL", true, true},
		{"st.x IS NULL", true, true},
		{"st.x = 1", false, false},
		{"d > 5", false, false},
		{"dec > 2.0", false, false},
		{"dec >= -0.2", true, true},
		{"dt >= '2024-01-01'", true, true},
		{"year(dt) = 2023", false, false},
		{"i + 1 > 100", true, false}, // arithmetic is not judged
		{"id > 100 OR level = 'INFO'", true, true},
		{"NOT (id > 100)", true, true},
		{"id > 5 AND s LIKE 'x%'", false, false},
		{"i > 5000000000", false, false},
	}
	for _, c := range cases {
		e, err := Compile(c.src, sc)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		// the expectation must agree with the rows themselves
		got, err := truth(t, e, sc, rows)
		if err != nil {
			t.Fatal(err)
		}
		if anyT := got[0] == true || got[1] == true; anyT && !c.might {
			t.Fatalf("%s: bad expectation, rows give %v", c.src, got)
		}
		if m := e.MightMatch(f, spec); m != c.might {
			t.Errorf("%s: MightMatch = %v, want %v", c.src, m, c.might)
		}
		if a := e.MatchesAll(f, spec); a != c.all {
			t.Errorf("%s: MatchesAll = %v, want %v", c.src, a, c.all)
		}
	}
	// a NaN may hide behind bounds when the NaN count is unknown
	b, _ := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData, "f", iceberg.ParquetFile, nil, nil, nil, 3, 10)
	lb, _ := iceberg.NewLiteral(1.0).MarshalBinary()
	ub, _ := iceberg.NewLiteral(3.0).MarshalBinary()
	nf := b.LowerBoundValues(map[int][]byte{3: lb}).UpperBoundValues(map[int][]byte{3: ub}).NullValueCounts(map[int]int64{3: 0}).Build()
	e, _ := Compile("d > 5", sc)
	if !e.MightMatch(nf, spec) {
		t.Error("d > 5 with unknown NaN count must not be pruned (NaN > 5 in Spark)")
	}
	e, _ = Compile("d < 0", sc)
	if e.MightMatch(nf, spec) {
		t.Error("d < 0 with bounds [1, 3] should be pruned")
	}
	// no metrics at all: nothing is decided
	bare := b.LowerBoundValues(nil).UpperBoundValues(nil).NullValueCounts(nil).Build()
	e, _ = Compile("id > 100", sc)
	if !e.MightMatch(bare, spec) || e.MatchesAll(bare, spec) {
		t.Error("a file without metrics must be undecided")
	}
}

func TestResidualDropsSettledParts(t *testing.T) {
	sc := testSchema()
	spec := levelSpec()
	rows := []row{
		{"id": int64(10), "i": int32(1), "s": "abc", "level": "INFO"},
		{"id": int64(50), "i": int32(3), "s": "abd", "level": "INFO"},
	}
	f := fileOf(t, rand.New(rand.NewSource(1)), sc, spec, rows, "INFO", false)
	cases := []struct{ src, want string }{
		// the partition value settles the IN: only i is read
		{"level IN ('INFO', 'WARN') AND i > 2", "i > 2"},
		{"i > 2 AND level = 'INFO'", "i > 2"},
		{"level = 'WARN' OR i > 2", "i > 2"},
		{"NOT (level = 'INFO' AND i > 2)", "NOT (i > 2)"},
		// bounds settle a part too: every id is >= 10
		{"(id >= 10 AND i > 2) OR (s LIKE 'x%' AND i < 0)", "i > 2"},
		// nothing settled: the same expression
		{"i > 2 OR s = 'abd'", "i > 2 OR s = 'abd'"},
	}
	for _, c := range cases {
		e, err := Compile(c.src, sc)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		want, err := Compile(c.want, sc)
		if err != nil {
			t.Fatalf("%s: %v", c.want, err)
		}
		res := e.Residual(f, spec)
		if res.String() != want.String() {
			t.Errorf("%s: residual %s, want %s", c.src, res, want)
		}
		if fmt.Sprint(res.FieldIDs()) != fmt.Sprint(want.FieldIDs()) {
			t.Errorf("%s: residual reads %v, want %v", c.src, res.FieldIDs(), want.FieldIDs())
		}
		got, err := truth(t, e, sc, rows)
		if err != nil {
			t.Fatal(err)
		}
		rgot, err := truth(t, res, sc, rows)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(rgot) {
			t.Errorf("%s: residual gives %v, e gives %v", c.src, rgot, got)
		}
		if c.src == c.want && res != e {
			t.Errorf("%s: nothing simplifies, yet a new expression came back", c.src)
		}
	}
}
