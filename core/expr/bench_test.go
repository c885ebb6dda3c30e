package expr

import (
	"context"
	"math/rand"
	"testing"
)

func BenchmarkEval(b *testing.B) {
	sc := testSchema()
	rec := makeBatch(b, sc, randRows(rand.New(rand.NewSource(1)), 100_000, false))
	defer rec.Release()
	for _, src := range []string{
		"id > 5 AND s LIKE 'a%'",
		"i + id * 2 > 10 OR dt >= '2024-01-01'",
		"level IN ('INFO', 'WARN') AND dec > 1.5",
		"CASE WHEN b THEN i ELSE coalesce(st.x, 0) END",
	} {
		e, err := Compile(src, sc)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(src, func(b *testing.B) {
			for b.Loop() {
				a, err := e.Eval(context.Background(), rec, nil)
				if err != nil {
					b.Fatal(err)
				}
				a.Release()
			}
			b.ReportMetric(float64(rec.NumRows())*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
		})
	}
}
