package expr

import (
	"strings"
	"unicode"
)

type tokKind int

const (
	tkEOF tokKind = iota
	tkIdent
	tkQuoted // backtick-quoted identifier
	tkNumber
	tkString
	tkOp // operators and punctuation
)

type token struct {
	kind tokKind
	text string // identifier/op text, literal body (unescaped for strings), number text
	pos  int    // 1-based rune position
}

func (t token) describe() string {
	switch t.kind {
	case tkEOF:
		return "end of input"
	case tkString:
		return "'" + t.text + "'"
	case tkQuoted:
		return "`" + t.text + "`"
	}
	return `"` + t.text + `"`
}

// isKeyword reports whether t is the (case-insensitive) keyword kw.
func (t token) is(kw string) bool {
	return t.kind == tkIdent && strings.EqualFold(t.text, kw)
}

func (t token) op(o string) bool { return t.kind == tkOp && t.text == o }

func lex(src string) ([]token, error) {
	rs := []rune(src)
	var toks []token
	i := 0
	for i < len(rs) {
		c := rs[i]
		pos := i + 1
		switch {
		case unicode.IsSpace(c):
			i++
		case c == '`':
			var b strings.Builder
			j := i + 1
			for {
				if j >= len(rs) {
					return nil, syntaxErr(src, pos, "unterminated quoted identifier")
				}
				if rs[j] == '`' {
					if j+1 < len(rs) && rs[j+1] == '`' {
						b.WriteRune('`')
						j += 2
						continue
					}
					break
				}
				b.WriteRune(rs[j])
				j++
			}
			toks = append(toks, token{tkQuoted, b.String(), pos})
			i = j + 1
		case c == '\'' || c == '"':
			q := c
			var b strings.Builder
			j := i + 1
			for {
				if j >= len(rs) {
					return nil, syntaxErr(src, pos, "unterminated string literal")
				}
				if rs[j] == '\\' && j+1 < len(rs) {
					switch e := rs[j+1]; e {
					case 'n':
						b.WriteRune('\n')
					case 't':
						b.WriteRune('\t')
					case 'r':
						b.WriteRune('\r')
					case '0':
						b.WriteRune(0)
					case '%', '_':
						// kept escaped, as in Spark, for LIKE patterns
						b.WriteRune('\\')
						b.WriteRune(e)
					default:
						b.WriteRune(e)
					}
					j += 2
					continue
				}
				if rs[j] == q {
					if j+1 < len(rs) && rs[j+1] == q {
						b.WriteRune(q)
						j += 2
						continue
					}
					break
				}
				b.WriteRune(rs[j])
				j++
			}
			toks = append(toks, token{tkString, b.String(), pos})
			i = j + 1
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(rs) && rs[i+1] >= '0' && rs[i+1] <= '9':
			j := i
			for j < len(rs) && (rs[j] >= '0' && rs[j] <= '9' || rs[j] == '.') {
				j++
			}
			if j < len(rs) && (rs[j] == 'e' || rs[j] == 'E') {
				k := j + 1
				if k < len(rs) && (rs[k] == '+' || rs[k] == '-') {
					k++
				}
				if k < len(rs) && rs[k] >= '0' && rs[k] <= '9' {
					for k < len(rs) && rs[k] >= '0' && rs[k] <= '9' {
						k++
					}
					j = k
				}
			}
			// optional type suffix: L S Y D F BD
			if j+1 < len(rs) && (rs[j] == 'B' || rs[j] == 'b') && (rs[j+1] == 'D' || rs[j+1] == 'd') {
				j += 2
			} else if j < len(rs) && strings.ContainsRune("LSYDFlsydf", rs[j]) {
				j++
			}
			if j < len(rs) && (unicode.IsLetter(rs[j]) || rs[j] == '_') {
				return nil, syntaxErr(src, j+1, "unexpected %q", string(rs[j]))
			}
			toks = append(toks, token{tkNumber, string(rs[i:j]), pos})
			i = j
		case unicode.IsLetter(c) || c == '_':
			j := i
			for j < len(rs) && (unicode.IsLetter(rs[j]) || unicode.IsDigit(rs[j]) || rs[j] == '_') {
				j++
			}
			toks = append(toks, token{tkIdent, string(rs[i:j]), pos})
			i = j
		default:
			two := ""
			if i+1 < len(rs) {
				two = string(rs[i : i+2])
			}
			if i+2 < len(rs) && string(rs[i:i+3]) == "<=>" {
				toks = append(toks, token{tkOp, "<=>", pos})
				i += 3
				continue
			}
			switch two {
			case "==", "!=", "<>", "<=", ">=":
				toks = append(toks, token{tkOp, two, pos})
				i += 2
				continue
			}
			if strings.ContainsRune("=<>+-*/%(),.:;", c) {
				toks = append(toks, token{tkOp, string(c), pos})
				i++
				continue
			}
			return nil, syntaxErr(src, pos, "unexpected %q", string(c))
		}
	}
	toks = append(toks, token{tkEOF, "", len(rs) + 1})
	return toks, nil
}
