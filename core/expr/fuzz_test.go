package expr

import (
	"context"
	"errors"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// checkExprErr fails unless err is an *Error of one of the two kinds, with
// a position inside the text (or 0), and no recovered panic behind it.
func checkExprErr(t *testing.T, src string, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		// Evaluation errors that are not about the text (a cancelled
		// context) do not occur here.
		t.Fatalf("%q: error %v (%T) is not an *expr.Error", src, err, err)
	}
	if !errors.Is(err, errs.ErrInvalidArgument) && !errors.Is(err, errs.ErrValidation) {
		t.Fatalf("%q: error %v has no kind", src, err)
	}
	if strings.Contains(err.Error(), "internal error") {
		t.Fatalf("%q: a panic was recovered: %v", src, err)
	}
	if e.Pos < 0 || e.Pos > utf8.RuneCountInString(src)+1 {
		t.Fatalf("%q: position %d outside the text", src, e.Pos)
	}
}

// checkEvalErr fails on a recovered panic; evaluation errors (overflow,
// division by zero, bad casts) are expected and typed.
func checkEvalErr(t *testing.T, src string, err error) {
	t.Helper()
	if !errors.Is(err, errs.ErrValidation) && !errors.Is(err, errs.ErrInvalidArgument) {
		t.Fatalf("%q: evaluation error %v has no kind", src, err)
	}
	if strings.Contains(err.Error(), "internal error") {
		t.Fatalf("%q: a panic was recovered during evaluation: %v", src, err)
	}
}

// FuzzCompile feeds any text to the parser and the binder, as a request's
// filter, update value, merge condition or merge value reaches them: no
// panic (also none recovered by Bind or Eval), errors are *Error with a
// position in the text, an accepted expression's canonical text compiles
// to the same canonical text and type, and evaluating it, converting it
// to an Iceberg filter, splitting it into join keys and assigning it to
// each column either work or fail with a typed error.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{
		"level = 'INFO' AND ts >= DATE '2024-01-01'", "id IN (1, 2, 3)", "s LIKE 'a%c'", "NOT b",
		"CASE WHEN i > 0 THEN 'p' ELSE 'n' END", "cast(d AS DECIMAL(10, 2))", "coalesce(i, 0) + 1",
		"`my col` IS NOT NULL", "st.x BETWEEN -1 AND 1", "lower(s) = upper(s)", "id % 0 = 1",
		"X'0aff' = X'0A'", "TIMESTAMP '2024-01-01 00:00:00+02:00' < ts", "1e308 * 10 > d",
		"t.id = s.id AND s.op <> 'D'", "target.level = source.level", "abs(-9223372036854775808) > 0",
		"date_trunc('month', ts) = ts", "dec / 0.001 > 1", "((((((((((i))))))))))",
	} {
		f.Add(s)
	}
	g := gen{r: rand.New(rand.NewSource(5))}
	for range 40 {
		f.Add(g.pred(3).sql())
	}
	sc := testSchema()
	rows := randRows(rand.New(rand.NewSource(6)), 16, true)
	batch := makeBatch(f, sc, rows)
	f.Cleanup(batch.Release)
	scopes := mergeScopes()
	srcBatch := makeBatch(f, sourceSchema(), sourceRows(rand.New(rand.NewSource(7)), 16, true))
	f.Cleanup(srcBatch.Release)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, src string) {
		if _, err := Parse(src); err != nil {
			checkExprErr(t, src, err)
		}
		e, err := Compile(src, sc)
		if err != nil {
			checkExprErr(t, src, err)
		} else {
			canon := e.String()
			e2, err := Compile(canon, sc)
			if err != nil {
				t.Fatalf("%q: its canonical text %q does not compile: %v", src, canon, err)
			}
			if again := e2.String(); again != canon {
				t.Fatalf("%q: canonical text %q compiles to %q", src, canon, again)
			}
			if !e2.Type().Equals(e.Type()) {
				t.Fatalf("%q: type %s, of its canonical text %s", src, e.Type(), e2.Type())
			}
			for _, fld := range sc.Fields() {
				if _, err := e.AssignTo(fld.Name, fld.Type); err != nil {
					checkExprErr(t, src, err)
				}
			}
			if e.IsPredicate() {
				_ = e.Iceberg()
			}
			if out, err := e.Eval(ctx, batch, memory.DefaultAllocator); err != nil {
				checkEvalErr(t, src, err)
			} else {
				if out.Len() != int(batch.NumRows()) || !arrow.TypeEqual(out.DataType(), arrowType(e.Type())) {
					t.Fatalf("%q: %d values of %s for %d rows of %s", src, out.Len(), out.DataType(), batch.NumRows(), e.Type())
				}
				out.Release()
			}
		}
		m, err := CompileScopes(src, scopes)
		if err != nil {
			checkExprErr(t, src, err)
			return
		}
		if m.IsPredicate() {
			keys, resid := m.EquiJoin()
			_ = resid
			for _, k := range keys {
				_ = k
			}
		}
		if out, err := m.EvalScopes(ctx, []arrow.RecordBatch{batch, srcBatch}, memory.DefaultAllocator); err != nil {
			checkEvalErr(t, src, err)
		} else {
			out.Release()
		}
	})
}
