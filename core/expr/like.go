package expr

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// matcher is a compiled LIKE pattern: segments separated by '%', each a
// sequence of literal runes and '_' (any one character).
type matcher struct {
	segs       [][]likeItem
	prefix     string // literal text before the first wildcard
	exact      bool   // no wildcard at all: LIKE is equality with prefix
	prefixOnly bool   // the pattern is prefix followed by a single trailing '%'
}

type likeItem struct {
	r   rune
	any bool
}

// compileLike compiles a LIKE pattern with '\' as the escape character.
func compileLike(pat string) (*matcher, error) {
	m := &matcher{}
	cur := []likeItem{}
	var prefix strings.Builder
	inPrefix := true
	wild := 0
	rs := []rune(pat)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch r {
		case '\\':
			if i+1 >= len(rs) {
				return nil, fmt.Errorf("LIKE pattern %q ends with the escape character", pat)
			}
			n := rs[i+1]
			if n != '%' && n != '_' && n != '\\' {
				return nil, fmt.Errorf("LIKE pattern %q: the escape character may only precede %%, _ or \\", pat)
			}
			i++
			cur = append(cur, likeItem{r: n})
			if inPrefix {
				prefix.WriteRune(n)
			}
		case '%':
			m.segs = append(m.segs, cur)
			cur = []likeItem{}
			inPrefix = false
			wild++
		case '_':
			cur = append(cur, likeItem{any: true})
			inPrefix = false
			wild++
		default:
			cur = append(cur, likeItem{r: r})
			if inPrefix {
				prefix.WriteRune(r)
			}
		}
	}
	m.segs = append(m.segs, cur)
	m.prefix = prefix.String()
	m.exact = wild == 0
	m.prefixOnly = len(m.segs) == 2 && len(m.segs[1]) == 0 && wild == 1
	return m, nil
}

// matchAt matches seg at byte offset pos of s and returns the end offset.
func matchAt(s string, pos int, seg []likeItem) (int, bool) {
	for _, it := range seg {
		if pos >= len(s) {
			return 0, false
		}
		r, size := utf8.DecodeRuneInString(s[pos:])
		if !it.any && r != it.r {
			return 0, false
		}
		pos += size
	}
	return pos, true
}

func (m *matcher) match(s string) bool {
	switch {
	case m.exact:
		return s == m.prefix
	case m.prefixOnly:
		return strings.HasPrefix(s, m.prefix)
	}
	segs := m.segs
	if len(segs) == 1 {
		end, ok := matchAt(s, 0, segs[0])
		return ok && end == len(s)
	}
	pos, ok := matchAt(s, 0, segs[0])
	if !ok {
		return false
	}
	// the last segment is anchored at the end: step back its rune length
	last := segs[len(segs)-1]
	start := len(s)
	for range last {
		if start <= pos {
			return false
		}
		_, size := utf8.DecodeLastRuneInString(s[:start])
		start -= size
	}
	if start < pos {
		return false
	}
	if _, ok := matchAt(s, start, last); !ok {
		return false
	}
	limit := start
	for _, seg := range segs[1 : len(segs)-1] {
		found := false
		for p := pos; p <= limit; {
			if end, ok := matchAt(s[:limit], p, seg); ok {
				pos, found = end, true
				break
			}
			if p == limit {
				break
			}
			_, size := utf8.DecodeRuneInString(s[p:])
			p += size
		}
		if !found {
			return false
		}
	}
	return true
}
