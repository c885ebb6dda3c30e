package expr

import (
	"context"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
)

// keySide is an expression over one input that always reads a column.
func keySide(g gen, t ty) tn {
	c := g.col(t)
	switch g.pick(5) {
	case 0:
		if t == tyInt || t == tyLong {
			return tArith{"+", c, g.lit(t)}
		}
	case 1:
		if t == tyStr {
			return tFunc{[]string{"lower", "upper", "trim"}[g.pick(3)], []tn{c}, tyStr}
		}
	case 2:
		return tCase{kind: "coalesce", thens: []tn{c, g.lit(t)}}
	}
	return c
}

// keyTypes are pairs of types an equality may join (converted to a common type).
var keyTypes = [][2]ty{
	{tyInt, tyInt}, {tyLong, tyLong}, {tyInt, tyLong}, {tyLong, tyInt}, {tyDec, tyInt}, {tyInt, tyDec},
	{tyDouble, tyDouble}, {tyDouble, tyInt}, {tyStr, tyStr}, {tyDate, tyDate}, {tyTs, tyTs}, {tyDate, tyTs},
	{tyBool, tyBool}, {tyDec, tyDec},
}

// flattenAnd lists the top-level AND operands of a reference expression.
func flattenAnd(x tn) []tn {
	if l, ok := x.(tLogic); ok && l.and {
		return append(flattenAnd(l.l), flattenAnd(l.r)...)
	}
	return []tn{x}
}

// isKeyConjunct is the reference rule for EquiJoin: an equality between an
// expression over exactly the target and one over exactly the source.
func isKeyConjunct(x tn) bool {
	c, ok := x.(tCmp)
	if !ok || c.op != "=" && c.op != "<=>" {
		return false
	}
	l, r := keysOf(tnScopes(c.l, nil)), keysOf(tnScopes(c.r, nil))
	return slices.Equal(l, []int{0}) && slices.Equal(r, []int{1}) || slices.Equal(l, []int{1}) && slices.Equal(r, []int{0})
}

// andTree combines conjuncts into a random tree of ANDs.
func andTree(r *rand.Rand, cs []tn) tn {
	if len(cs) == 1 {
		return cs[0]
	}
	k := 1 + r.Intn(len(cs)-1)
	return tLogic{true, andTree(r, cs[:k]), andTree(r, cs[k:])}
}

// tri is a three-valued outcome: 0 FALSE, 1 TRUE, 2 NULL.
func triOf(t *testing.T, arr arrow.Array, i int) int {
	if arr.IsNull(i) {
		return 2
	}
	if arr.(*array.Boolean).Value(i) {
		return 1
	}
	return 0
}

// keyEqual compares two valid key cells of the same Arrow type as SQL's = does.
func keyEqual(dt arrow.DataType, a, b tv) bool {
	switch dt.ID() {
	case arrow.FLOAT64:
		return sparkCmpF(a.f, b.f) == 0
	case arrow.DECIMAL128:
		return a.r.Cmp(b.r) == 0
	case arrow.STRING:
		return a.s == b.s
	case arrow.BOOL:
		return a.b == b.b
	}
	return a.i == b.i
}

// keyOutcome is the three-valued outcome of one key on row i.
func keyOutcome(t *testing.T, k Key, ta, sa arrow.Array, i int) int {
	return keyCells(k, ta.DataType(), cell(t, ta, i), cell(t, sa, i))
}

// keyCells is the outcome of a key on a target and a source key value.
func keyCells(k Key, dt arrow.DataType, a, b tv) int {
	switch {
	case a.null || b.null:
		if !k.NullSafe {
			return 2
		}
		if a.null && b.null {
			return 1
		}
		return 0
	case keyEqual(dt, a, b):
		return 1
	}
	return 0
}

// EquiJoin splits exactly the target=source equalities of an AND chain
// into keys, and keys plus residual evaluate like the whole condition.
func TestEquiJoinSplit(t *testing.T) {
	r := rand.New(rand.NewSource(17))
	scopes := mergeScopes()
	tg := gen{r: r, quals: tQuals}
	sg := gen{r: r, quals: sQuals, op: true}
	mg := gen{r: r, quals: allQuals, op: true}
	ctx := context.Background()
	conds, withKeys, nullSafe, compared, skipped := 0, 0, 0, 0, 0
	for round := 0; round < 25; round++ {
		trows, srows := randRows(r, 40, false), sourceRows(r, 40, false)
		for i := range srows {
			if r.Intn(2) == 0 { // matching rows: the source row repeats the target's values
				for c, v := range trows[i] {
					srows[i][c] = v
				}
			}
		}
		trec, srec := makeBatch(t, scopes[0].Schema, trows), makeBatch(t, scopes[1].Schema, srows)
		recs := []arrow.RecordBatch{trec, srec}
		for k := 0; k < 30; k++ {
			var cs []tn
			for range 1 + r.Intn(5) {
				switch r.Intn(4) {
				case 0, 1:
					p := keyTypes[r.Intn(len(keyTypes))]
					l, rr := keySide(tg, p[0]), keySide(sg, p[1])
					if r.Intn(2) == 0 {
						l, rr = rr, l
					}
					cs = append(cs, tCmp{[]string{"=", "<=>"}[r.Intn(2)], l, rr})
				case 2:
					p := keyTypes[r.Intn(len(keyTypes))]
					g := []gen{tg, sg}[r.Intn(2)]
					cs = append(cs, tCmp{"=", keySide(g, p[0]), keySide(g, p[1])}) // one input only
				default:
					cs = append(cs, mg.pred(1+r.Intn(2)))
				}
			}
			x := andTree(r, cs)
			if r.Intn(8) == 0 {
				x = tLogic{false, x, mg.pred(1)} // an OR has no keys
			}
			var wantKeys, wantRest int
			for _, c := range flattenAnd(x) {
				if isKeyConjunct(c) {
					wantKeys++
				} else {
					wantRest++
				}
			}
			e, err := CompileScopes(x.sql(), scopes)
			if err != nil {
				t.Fatalf("%s: %v", x.sql(), err)
			}
			conds++
			keys, residual := e.EquiJoin()
			if len(keys) != wantKeys {
				t.Fatalf("%s: %d keys, want %d", e, len(keys), wantKeys)
			}
			if wantKeys > 0 && (residual == nil) != (wantRest == 0) {
				t.Fatalf("%s: residual %v, want %d conjuncts", e, residual, wantRest)
			}
			if wantKeys == 0 && residual != e {
				t.Fatalf("%s: without keys the residual must be the condition", e)
			}
			if len(keys) > 0 {
				withKeys++
			}
			for _, key := range keys {
				if !key.Target.Type().Equals(key.Source.Type()) {
					t.Fatalf("%s: key types %s and %s differ", e, key.Target.Type(), key.Source.Type())
				}
				for side, want := range map[*Expr]*iceberg.Schema{key.Target: scopes[0].Schema, key.Source: scopes[1].Schema} {
					if !slices.Equal(side.Scopes(), []int{0}) {
						t.Fatalf("%s: key side %s reads scopes %v", e, side, side.Scopes())
					}
					again, err := Compile(side.String(), want)
					if err != nil || again.String() != side.String() {
						t.Fatalf("%s: key side %s does not rebind to its own schema: %v", e, side, err)
					}
				}
				if key.NullSafe {
					nullSafe++
				}
			}
			orig, err := e.EvalScopes(ctx, recs, nil)
			if err != nil {
				skipped++
				continue
			}
			// combine: keys on their own batches, the residual on both
			outcome := make([]int, len(trows))
			for i := range outcome {
				outcome[i] = 1
			}
			and := func(i, v int) {
				switch {
				case outcome[i] == 0 || v == 0:
					outcome[i] = 0
				case v == 2:
					outcome[i] = 2
				}
			}
			failed := false
			for _, key := range keys {
				ta, err1 := key.Target.Eval(ctx, trec, nil)
				sa, err2 := key.Source.Eval(ctx, srec, nil)
				if err1 != nil || err2 != nil {
					failed = true // evaluated over all rows, a side may fail where the AND skipped it
					break
				}
				for i := range outcome {
					and(i, keyOutcome(t, key, ta, sa, i))
				}
				ta.Release()
				sa.Release()
			}
			if residual != nil && !failed {
				ra, err := residual.EvalScopes(ctx, recs, nil)
				if err != nil {
					failed = true
				} else {
					for i := range outcome {
						and(i, triOf(t, ra, i))
					}
					ra.Release()
				}
			}
			if failed {
				skipped++
				continue
			}
			for i := range outcome {
				if got := triOf(t, orig, i); got != outcome[i] {
					t.Fatalf("%s: row %d is %d, keys and residual give %d (keys %d)", e, i, got, outcome[i], len(keys))
				}
			}
			orig.Release()
			compared++
		}
		trec.Release()
		srec.Release()
	}
	t.Logf("%d conditions (%d with keys, %d null-safe keys): %d compared, %d skipped for errors", conds, withKeys, nullSafe, compared, skipped)
	if withKeys < conds/3 || nullSafe < 50 || compared < conds*3/4 {
		t.Errorf("too little coverage: %d conditions, %d with keys, %d null-safe, %d compared", conds, withKeys, nullSafe, compared)
	}
}

func TestEquiJoinShapes(t *testing.T) {
	scopes := mergeScopes()
	cases := []struct {
		src      string
		keys     []string // target side | source side | null-safe
		residual string
	}{
		{"t.id = s.id", []string{"id|id|false"}, ""},
		{"s.id = t.id AND s.op = 'D'", []string{"id|id|false"}, "(source.op = 'D')"},
		{"t.i <=> s.id AND t.s = s.s", []string{"CAST(i AS bigint)|id|true", "s|s|false"}, ""},
		{"t.id = s.id OR t.i = s.i", nil, "((target.id = source.id) OR (target.i = source.i))"},
		{"t.id = t.i AND s.i = 1", nil, "((target.id = CAST(target.i AS bigint)) AND (source.i = 1))"},
		{"t.dt BETWEEN s.dt AND s.dt AND t.ts = s.dt", []string{"ts|CAST(dt AS timestamp)|false"}, "((target.dt >= source.dt) AND (target.dt <= source.dt))"},
		{"t.id = s.id + t.id", nil, "(target.id = (source.id + target.id))"},
		{"t.id = 1", nil, "(target.id = 1L)"},
	}
	for _, c := range cases {
		e, err := CompileScopes(c.src, scopes)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		keys, residual := e.EquiJoin()
		var got []string
		for _, k := range keys {
			got = append(got, k.Target.String()+"|"+k.Source.String()+"|"+map[bool]string{true: "true", false: "false"}[k.NullSafe])
		}
		if !slices.Equal(got, c.keys) {
			t.Errorf("%s: keys %v, want %v", c.src, got, c.keys)
		}
		res := ""
		if residual != nil {
			res = residual.String()
		}
		if res != c.residual {
			t.Errorf("%s: residual %s, want %s", c.src, res, c.residual)
		}
	}
	// a one-scope expression has no keys
	one, _ := Compile("id = 1", testSchema())
	if keys, res := one.EquiJoin(); keys != nil || res != one {
		t.Error("a one-scope expression must not be split")
	}
}

// KeyRange admits every target row equal to some source key, and prunes.
func TestKeyRangeSound(t *testing.T) {
	r := rand.New(rand.NewSource(23))
	scopes := mergeScopes()
	sc := scopes[0].Schema
	ctx := context.Background()
	conds := map[string]bool{ // condition: whether the target side is a column
		"t.id = s.id": true, "t.i = s.id": true, "t.id = s.i": true, "t.d = s.d": true, "t.d = s.i": true,
		"t.i = s.d": true, "t.dec = s.i": true, "t.dec = s.dec": true, "t.s = s.s": true, "t.dt = s.ts": true,
		"t.ts = s.dt": true, "t.st.x = s.i": true, "t.level <=> s.level": true, "t.i <=> s.i": true,
		"t.b = s.b": true, "t.ntz = s.ts": true,
		"lower(t.s) = s.s": false, "coalesce(t.i, 0) = s.i": false,
	}
	rejected := 0
	for round := 0; round < 12; round++ {
		trows := randRows(r, 60, true)
		srows := sourceRows(r, 1+r.Intn(30), true)
		for i := range srows {
			if r.Intn(3) == 0 {
				for c, v := range trows[r.Intn(len(trows))] {
					srows[i][c] = v
				}
			}
		}
		trec, srec := makeBatch(t, sc, trows), makeBatch(t, scopes[1].Schema, srows)
		for src, isCol := range conds {
			e, err := CompileScopes(src, scopes)
			if err != nil {
				t.Fatal(err)
			}
			keys, _ := e.EquiJoin()
			if len(keys) != 1 {
				t.Fatalf("%s: %d keys", src, len(keys))
			}
			k := keys[0]
			ta, err1 := k.Target.Eval(ctx, trec, nil)
			sa, err2 := k.Source.Eval(ctx, srec, nil)
			if err1 != nil || err2 != nil {
				t.Fatalf("%s: %v %v", src, err1, err2)
			}
			ice := KeyRange(k.Target, sa)
			if _, all := ice.(iceberg.AlwaysTrue); all == isCol {
				t.Fatalf("%s: KeyRange %s", src, ice)
			}
			eval, err := iceberg.ExpressionEvaluator(sc, ice, true)
			if err != nil {
				t.Fatalf("%s: %s does not bind: %v", src, ice, err)
			}
			for i, rw := range trows {
				ok, err := eval(toStruct(sc.Fields(), rw))
				if err != nil {
					t.Fatalf("%s: evaluating %s: %v", src, ice, err)
				}
				if !ok {
					rejected++
				}
				for j := 0; j < sa.Len() && !ok; j++ {
					if keyCells(k, ta.DataType(), cell(t, ta, i), cell(t, sa, j)) == 1 {
						t.Fatalf("%s: target row %v matches source key %d but %s rejects it", src, rw, j, ice)
					}
				}
			}
			ta.Release()
			sa.Release()
		}
		trec.Release()
		srec.Release()
	}
	if rejected < 2000 {
		t.Errorf("KeyRange prunes too little: %d rejections", rejected)
	}

	// many distinct keys: a range; no non-null key: nothing
	e, _ := CompileScopes("t.id = s.id", scopes)
	keys, _ := e.EquiJoin()
	b := array.NewInt64Builder(memory.DefaultAllocator)
	for i := range 1500 {
		b.Append(int64(i * 2))
	}
	b.AppendNull()
	many := b.NewArray()
	defer many.Release()
	if got := KeyRange(keys[0].Target, many).String(); !strings.Contains(got, "GreaterThanEqual") || !strings.Contains(got, "2998") {
		t.Errorf("1500 keys: %s", got)
	}
	b.AppendNull()
	nulls := b.NewArray()
	defer nulls.Release()
	if got := KeyRange(keys[0].Target, nulls); got != (iceberg.AlwaysFalse{}) {
		t.Errorf("only NULL keys: %s", got)
	}
	e, _ = CompileScopes("t.id <=> s.id", scopes)
	keys, _ = e.EquiJoin()
	if got := KeyRange(keys[0].Target, nulls).String(); !strings.Contains(got, "IsNull") {
		t.Errorf("only NULL keys, null-safe: %s", got)
	}
}
