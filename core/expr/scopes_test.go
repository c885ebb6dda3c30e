package expr

import (
	"context"
	"errors"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// The two-scope tests bind MERGE-like expressions over a target (the test
// schema) and a source (the test schema plus a source-only column "op").
var (
	tQuals   = []string{"t", "target"}
	sQuals   = []string{"s", "source"}
	allQuals = []string{"t", "target", "s", "source"}
)

func sourceSchema() *iceberg.Schema {
	fields := slices.Clone(testSchema().Fields())
	fields = append(fields, iceberg.NestedField{ID: 15, Name: "op", Type: iceberg.PrimitiveTypes.String})
	return iceberg.NewSchema(0, fields...)
}

func mergeScopes() []Scope {
	return []Scope{
		{Names: []string{"target", "t"}, Schema: testSchema()},
		{Names: []string{"source", "s"}, Schema: sourceSchema()},
	}
}

func sourceRows(r *rand.Rand, n int, extremes bool) []row {
	rows := randRows(r, n, extremes)
	for _, rw := range rows {
		if r.Intn(6) != 0 {
			rw["op"] = []string{"D", "U", "I"}[r.Intn(3)]
		}
	}
	return rows
}

// joinRows pairs rows i of the inputs as the reference sees them: each
// input's row under its qualifiers, and the source-only column unqualified.
func joinRows(trows, srows []row) []row {
	out := make([]row, len(trows))
	for i := range trows {
		out[i] = row{"t": trows[i], "target": trows[i], "s": srows[i], "source": srows[i], "op": srows[i]["op"]}
	}
	return out
}

// tnScopes collects the scopes a reference expression reads.
func tnScopes(x tn, out map[int]bool) map[int]bool {
	if out == nil {
		out = map[int]bool{}
	}
	all := func(ns ...tn) {
		for _, n := range ns {
			if n != nil {
				tnScopes(n, out)
			}
		}
	}
	switch x := x.(type) {
	case tCol:
		if slices.Contains(tQuals, x.path[0]) {
			out[0] = true
		} else {
			out[1] = true
		}
	case tCmp:
		all(x.l, x.r)
	case tLogic:
		all(x.l, x.r)
	case tNot:
		all(x.x)
	case tIs:
		all(x.x)
	case tIn:
		all(append([]tn{x.x}, x.list...)...)
	case tBetween:
		all(x.x, x.lo, x.hi)
	case tLike:
		all(x.x)
	case tArith:
		all(x.l, x.r)
	case tNeg:
		all(x.x)
	case tCase:
		all(append(append(slices.Clone(x.whens), x.thens...), x.els)...)
	case tFunc:
		all(x.args...)
	}
	return out
}

func keysOf(m map[int]bool) []int {
	var ks []int
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// sameArrays compares two evaluation results cell by cell.
func sameArrays(t *testing.T, x ty, a, b arrow.Array) bool {
	if a.Len() != b.Len() {
		return false
	}
	for i := 0; i < a.Len(); i++ {
		var va, vb tv
		if _, isNull := a.(*array.Null); isNull {
			va = tnull
		} else {
			va = cell(t, a, i)
		}
		if _, isNull := b.(*array.Null); isNull {
			vb = tnull
		} else {
			vb = cell(t, b, i)
		}
		if !sameValue(x, va, vb) {
			return false
		}
	}
	return true
}

// Two-scope expressions evaluate like the row-by-row reference over
// joined rows, name both inputs in their canonical text, and report the
// scopes they read.
func TestEvalScopesDifferential(t *testing.T) {
	r := rand.New(rand.NewSource(31))
	scopes := mergeScopes()
	g := gen{r: r, quals: allQuals, op: true}
	ctx := context.Background()
	checked, errored, single := 0, 0, 0
	for batch := 0; batch < 16; batch++ {
		trows, srows := randRows(r, 40, batch%3 == 0), sourceRows(r, 40, batch%3 == 0)
		rows := joinRows(trows, srows)
		trec, srec := makeBatch(t, scopes[0].Schema, trows), makeBatch(t, scopes[1].Schema, srows)
		recs := []arrow.RecordBatch{trec, srec}
		for k := 0; k < 50; k++ {
			var x tn
			if k%2 == 0 {
				x = g.pred(1 + r.Intn(4))
			} else {
				x = g.value([]ty{tyInt, tyLong, tyDouble, tyDec, tyStr, tyTs}[r.Intn(6)], 1+r.Intn(3))
			}
			src := x.sql()
			e, err := CompileScopes(src, scopes)
			if err != nil {
				t.Fatalf("%s: %v", src, err)
			}
			if again, err := CompileScopes(e.String(), scopes); err != nil || again.String() != e.String() {
				t.Fatalf("%s: canonical text %s does not round trip: %v", src, e, err)
			}
			if got, want := e.Scopes(), keysOf(tnScopes(x, nil)); !slices.Equal(got, want) {
				t.Fatalf("%s: Scopes() = %v, want %v", src, got, want)
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
			arr, err := e.EvalScopes(ctx, recs, memory.DefaultAllocator)
			if (err != nil) != (refErr != nil) {
				t.Fatalf("%s: EvalScopes error %v, reference error %v", src, err, refErr)
			}
			if err != nil {
				if !errors.Is(err, errs.ErrValidation) {
					t.Fatalf("%s: eval error kind: %v", src, err)
				}
				errored++
				continue
			}
			for i := range rows {
				got := tnull
				if _, isNull := arr.(*array.Null); !isNull {
					got = cell(t, arr, i)
				}
				if !sameValue(x.ty(), want[i], got) {
					t.Fatalf("%s (bound %s): row %d = %+v, want %+v", src, e, i, got, want[i])
				}
			}
			// an expression over one input needs only that input's batch
			if sc := e.Scopes(); len(sc) == 1 {
				only := make([]arrow.RecordBatch, sc[0]+1)
				only[sc[0]] = recs[sc[0]]
				one, err := e.EvalScopes(ctx, only, nil)
				if err != nil || !sameArrays(t, x.ty(), arr, one) {
					t.Fatalf("%s: evaluation over scope %d alone differs: %v", src, sc[0], err)
				}
				one.Release()
				single++
			}
			arr.Release()
			checked++
		}
		trec.Release()
		srec.Release()
	}
	t.Logf("%d expressions compared (%d over one input), %d raised errors in both", checked, single, errored)
	if errored == 0 || checked < 600 || single < 50 {
		t.Errorf("too little coverage: %d checked, %d errors, %d single-input", checked, errored, single)
	}
}

func TestBindScopesResolution(t *testing.T) {
	target := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "v", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 3, Name: "s", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 4, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
			{ID: 5, Name: "zz", Type: iceberg.PrimitiveTypes.Int32},
		}}},
		iceberg.NestedField{ID: 6, Name: "only_t", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 7, Name: "Dup", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 8, Name: "dup", Type: iceberg.PrimitiveTypes.Int32},
	)
	source := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "ID", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "v", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 3, Name: "op", Type: iceberg.PrimitiveTypes.String},
	)
	scopes := []Scope{{Names: []string{"t", "target", "db.tgt"}, Schema: target}, {Names: []string{"s", "source"}, Schema: source}}
	ok := []struct {
		src   string
		scope int
		ids   []int // field ids of that scope
		text  string
	}{
		{"t.id", 0, []int{1}, "t.id"},
		{"S.ID", 1, []int{1}, "s.ID"},
		{"TARGET.v", 0, []int{2}, "t.v"},
		{"db.tgt.v", 0, []int{2}, "t.v"},
		{"op", 1, []int{3}, "s.op"},
		{"only_t", 0, []int{6}, "t.only_t"},
		{"s.id", 1, []int{1}, "s.ID"},     // the qualifier wins over the struct column t.s
		{"s.zz", 0, []int{5}, "t.s.zz"},   // the source has no zz: the struct field is used
		{"t.s.id", 0, []int{4}, "t.s.id"}, // struct field through the qualifier
		{"source.v", 1, []int{2}, "s.v"},
	}
	for _, c := range ok {
		e, err := CompileScopes(c.src, scopes)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		if got := e.Scopes(); !slices.Equal(got, []int{c.scope}) {
			t.Errorf("%s: scopes %v, want [%d]", c.src, got, c.scope)
		}
		if got := e.FieldIDsOf(c.scope); !slices.Equal(got, c.ids) {
			t.Errorf("%s: field ids %v, want %v", c.src, got, c.ids)
		}
		if other := e.FieldIDsOf(1 - c.scope); len(other) != 0 {
			t.Errorf("%s: field ids of the other scope %v", c.src, other)
		}
		if e.String() != c.text {
			t.Errorf("%s: canonical text %s, want %s", c.src, e.String(), c.text)
		}
	}
	e, err := CompileScopes("t.v + s.v > 1 AND op = 'D'", scopes)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(e.Scopes(), []int{0, 1}) || !slices.Equal(e.FieldIDs(), []int{2}) || !slices.Equal(e.FieldIDsOf(1), []int{2, 3}) {
		t.Errorf("scopes %v, ids %v / %v", e.Scopes(), e.FieldIDs(), e.FieldIDsOf(1))
	}
	if !e.IsPredicate() {
		t.Error("not a predicate")
	}
	if sum, _ := CompileScopes("t.v + s.v", scopes); !sum.Type().Equals(iceberg.PrimitiveTypes.Int64) {
		t.Errorf("int + bigint across scopes: %s", sum.Type())
	}

	bad := []struct {
		src  string
		pos  int
		want []string
	}{
		{"id = 1", 1, []string{`ambiguous column "id"`, "t.id", "s.ID"}},
		{"t.v + v > 0", 7, []string{`ambiguous column "v"`, "t.v", "s.v"}},
		{"s.nope", 1, []string{`unknown column "nope" in s`}},
		{"t.op = 'D'", 1, []string{`unknown column "op" in t`}},
		{"1 = 1 AND x.id = 2", 11, []string{`unknown column "x.id"`, "columns: t.id"}},
		{"t.id.x", 1, []string{`column "id" is not a struct in t`}},
		{"dup = 1", 1, []string{`ambiguous column "dup"`, `"Dup"`, `"dup"`, "in t"}},
		{"s.v = 'a'", 5, []string{`column "s.v" (bigint)`}},
	}
	for _, c := range bad {
		_, err := CompileScopes(c.src, scopes)
		var xe *Error
		if !errors.As(err, &xe) || !errors.Is(err, errs.ErrValidation) {
			t.Fatalf("%s: want a validation *Error, got %v", c.src, err)
		}
		if xe.Pos != c.pos {
			t.Errorf("%s: position %d, want %d (%v)", c.src, xe.Pos, c.pos, err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v does not mention %s", c.src, err, w)
			}
		}
	}
	for _, sc := range [][]Scope{
		nil,
		{{Names: []string{"t"}, Schema: target}, {Names: []string{"T"}, Schema: source}},
		{{Names: []string{"t"}, Schema: target}, {Names: []string{"s"}}},
	} {
		if _, err := CompileScopes("1 = 1", sc); !errors.Is(err, errs.ErrValidation) {
			t.Errorf("scopes %v: want an error, got %v", sc, err)
		}
	}
	// an unnamed scope is reached unqualified only; its columns print bare
	unnamed := []Scope{{Schema: target}, {Names: []string{"s"}, Schema: source}}
	e, err = CompileScopes("only_t = s.op", unnamed)
	if err != nil || e.String() != "(only_t = s.op)" {
		t.Fatalf("unnamed scope: %v %v", e, err)
	}
	if _, err := CompileScopes("v = 1", unnamed); err == nil || !strings.Contains(err.Error(), "input 1.v or s.v") {
		t.Errorf("unnamed scope ambiguity: %v", err)
	}
}

func TestEvalScopesInputs(t *testing.T) {
	scopes := mergeScopes()
	r := rand.New(rand.NewSource(4))
	trows, srows := randRows(r, 10, false), sourceRows(r, 10, false)
	trec, srec := makeBatch(t, scopes[0].Schema, trows), makeBatch(t, scopes[1].Schema, srows)
	defer trec.Release()
	defer srec.Release()
	short := makeBatch(t, scopes[1].Schema, srows[:4])
	defer short.Release()
	ctx := context.Background()
	e, err := CompileScopes("t.i + s.i", scopes)
	if err != nil {
		t.Fatal(err)
	}
	for name, recs := range map[string][]arrow.RecordBatch{
		"missing source": {trec},
		"nil source":     {trec, nil},
		"row mismatch":   {trec, short},
	} {
		if _, err := e.EvalScopes(ctx, recs, nil); !errors.Is(err, errs.ErrValidation) {
			t.Errorf("%s: want a validation error, got %v", name, err)
		}
	}
	if _, err := e.Eval(ctx, trec, nil); err == nil || !strings.Contains(err.Error(), "no batch for s") {
		t.Errorf("Eval of a two-scope expression: %v", err)
	}
	// store assignment keeps the scopes: int + int stored into a bigint column
	wide, err := e.AssignTo("v", iceberg.PrimitiveTypes.Int64)
	if err != nil {
		t.Fatal(err)
	}
	arr, err := wide.EvalScopes(ctx, []arrow.RecordBatch{trec, srec}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer arr.Release()
	x := tArith{"+", tCol{[]string{"t", "i"}, tyInt}, tCol{[]string{"s", "i"}, tyInt}}
	for i, rw := range joinRows(trows, srows) {
		want, _ := x.eval(rw)
		if got := cell(t, arr, i); !sameValue(tyLong, want, got) {
			t.Fatalf("row %d: %v, want %v", i, got, want)
		}
	}
	if wide.String() != "CAST((target.i + source.i) AS bigint)" { // the first name of each scope
		t.Errorf("assigned text %s", wide)
	}
}

// Pruning a target by a two-scope condition stays sound: Iceberg() holds
// on every target row of a TRUE joined row, MightMatch never rejects a file
// with such a row, and MatchesAll only files where every joined row is TRUE
// (whatever the source row).
func TestScopedPruningSound(t *testing.T) {
	r := rand.New(rand.NewSource(13))
	scopes := mergeScopes()
	sc := scopes[0].Schema
	spec := levelSpec()
	g := gen{r: r, quals: allQuals, op: true}
	ctx := context.Background()
	converted, rejected, pruned, whole, judged := 0, 0, 0, 0, 0
	for round := 0; round < 30; round++ {
		var level any
		if r.Intn(5) != 0 {
			level = levelPool[r.Intn(len(levelPool))]
		}
		base := randRows(r, 4, round%4 == 0)
		srcs := sourceRows(r, 6, round%4 == 0)
		// every target row of the file joined with every source row
		var trows, srows []row
		for _, tr := range base {
			tr["level"] = level
			for _, sr := range srcs {
				trows, srows = append(trows, tr), append(srows, sr)
			}
		}
		df := fileOf(t, r, sc, spec, base, level, r.Intn(2) == 0)
		trec, srec := makeBatch(t, sc, trows), makeBatch(t, scopes[1].Schema, srows)
		for k := 0; k < 40; k++ {
			x := g.pred(1 + r.Intn(3))
			e, err := CompileScopes(x.sql(), scopes)
			if err != nil {
				t.Fatalf("%s: %v", x.sql(), err)
			}
			ice := e.Iceberg()
			if _, all := ice.(iceberg.AlwaysTrue); !all {
				converted++
			}
			eval, err := iceberg.ExpressionEvaluator(sc, ice, true)
			if err != nil {
				t.Fatalf("%s: %s does not bind to the target: %v", e, ice, err)
			}
			arr, err := e.EvalScopes(ctx, []arrow.RecordBatch{trec, srec}, nil)
			if err != nil {
				continue
			}
			judged++
			anyTrue, allTrue := false, true
			for i, tr := range trows {
				isTrue := !arr.IsNull(i) && arr.(*array.Boolean).Value(i)
				anyTrue, allTrue = anyTrue || isTrue, allTrue && isTrue
				ok, err := eval(toStruct(sc.Fields(), tr))
				if err != nil {
					t.Fatal(err)
				}
				if isTrue && !ok {
					t.Fatalf("%s is TRUE on target %v, source %v but %s is false", e, tr, srows[i], ice)
				}
				if !ok {
					rejected++
				}
			}
			arr.Release()
			might, every := e.MightMatch(df, spec), e.MatchesAll(df, spec)
			if anyTrue && !might {
				t.Fatalf("%s: MightMatch false but a joined row is TRUE (level %v)", e, level)
			}
			if every && !allTrue {
				t.Fatalf("%s: MatchesAll true but a joined row is not TRUE (level %v)", e, level)
			}
			if !might {
				pruned++
			}
			if every {
				whole++
			}
		}
		trec.Release()
		srec.Release()
	}
	t.Logf("%d converted, %d row rejections; %d judged: %d pruned, %d whole", converted, rejected, judged, pruned, whole)
	if converted < 200 || rejected < 1000 || pruned < judged/20 || whole < judged/50 {
		t.Errorf("pruning too weak: %d converted, %d rejections, %d pruned, %d whole of %d", converted, rejected, pruned, whole, judged)
	}
}

// A condition on the source alone says nothing about the target.
func TestScopedPruningIgnoresSource(t *testing.T) {
	scopes := mergeScopes()
	spec := levelSpec()
	f := fileOf(t, rand.New(rand.NewSource(1)), scopes[0].Schema, spec, []row{{"id": int64(10), "level": "INFO"}}, "INFO", false)
	cases := []struct {
		src        string
		ice        string
		might, all bool
	}{
		{"s.id > 100", "AlwaysTrue()", true, false},
		{"t.id > 100 AND s.id > 100", "GreaterThan(term=Reference(name='id'), literal=100)", false, false},
		{"t.level = 'INFO' AND s.op = 'D'", "Equal(term=Reference(name='level'), literal=INFO)", true, false},
		{"t.level = 'INFO' OR s.op = 'D'", "AlwaysTrue()", true, true},
		{"t.level = 'WARN' OR s.b", "AlwaysTrue()", true, false},
		{"t.id = s.id", "AlwaysTrue()", true, false},
		{"NOT (t.id > 100 OR s.id IS NULL)", "LessThanEqual(term=Reference(name='id'), literal=100)", true, false},
	}
	for _, c := range cases {
		e, err := CompileScopes(c.src, scopes)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.Iceberg().String(); got != c.ice {
			t.Errorf("%s: Iceberg() = %s, want %s", c.src, got, c.ice)
		}
		if m := e.MightMatch(f, spec); m != c.might {
			t.Errorf("%s: MightMatch = %v, want %v", c.src, m, c.might)
		}
		if a := e.MatchesAll(f, spec); a != c.all {
			t.Errorf("%s: MatchesAll = %v, want %v", c.src, a, c.all)
		}
	}
}
