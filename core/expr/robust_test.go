package expr

import (
	"errors"
	"math/rand"
	"strings"
	"testing"
)

// Mangled expressions fail with a positioned *Error, never a panic or an
// internal error.
func TestMangledInputs(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	sc := testSchema()
	g := gen{r: r}
	pieces := []string{"(", ")", "'", "`", ",", " AND ", " NOT ", "CASE", "END", "1.", "X'", "-", ".", "IN (", "NULL", "\\"}
	failures := 0
	for k := 0; k < 4000; k++ {
		src := []rune(g.pred(3).sql())
		for m := 0; m < 1+r.Intn(3); m++ {
			i := r.Intn(len(src))
			switch r.Intn(3) {
			case 0:
				src = append(src[:i], src[i+1:]...)
			case 1:
				src = append(src[:i], append([]rune(pieces[r.Intn(len(pieces))]), src[i:]...)...)
			default:
				j := min(len(src), i+1+r.Intn(5))
				src = append(src[:i], src[j:]...)
			}
			if len(src) == 0 {
				src = []rune("(")
			}
		}
		_, err := Compile(string(src), sc)
		if err == nil {
			continue
		}
		failures++
		var e *Error
		if !errors.As(err, &e) || strings.Contains(e.Msg, "internal error") {
			t.Fatalf("%q: %v", string(src), err)
		}
		if e.Pos < 0 || e.Pos > len([]rune(string(src)))+1 {
			t.Fatalf("%q: position %d out of range", string(src), e.Pos)
		}
	}
	if failures < 1000 {
		t.Errorf("only %d of the mangled inputs failed", failures)
	}
}
