package rowlevel

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestKeyIndexFindsEveryRowOfAKeyInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n := 5000
	keys := make([]string, n)
	valid := make([]bool, n)
	want := map[string][]int32{}
	for i := range n {
		keys[i] = fmt.Sprint(rng.IntN(900)) // many duplicates
		valid[i] = rng.IntN(10) != 0
		if valid[i] {
			want[keys[i]] = append(want[keys[i]], int32(i))
		}
	}
	x := buildKeyIndex(n, func(i int, buf []byte) ([]byte, bool) { return append(buf, keys[i]...), valid[i] })
	for k := 0; k < 1000; k++ {
		key := []byte(fmt.Sprint(k))
		var got []int32
		for r := x.first(key); r >= 0; r = x.nextOf(r, key) {
			got = append(got, r)
		}
		if !slices.Equal(got, want[string(key)]) {
			t.Fatalf("key %s: rows %v, want %v", key, got, want[string(key)])
		}
	}
	empty := buildKeyIndex(3, func(_ int, buf []byte) ([]byte, bool) { return buf, true })
	var all []int32
	for r := empty.first(nil); r >= 0; r = empty.nextOf(r, nil) {
		all = append(all, r)
	}
	if !slices.Equal(all, []int32{0, 1, 2}) {
		t.Errorf("empty keys: %v", all)
	}
}
