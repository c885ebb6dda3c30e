package evolve

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

var (
	decimalRe = regexp.MustCompile(`^decimal\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)$`)
	fixedRe   = regexp.MustCompile(`^fixed\s*\[\s*(\d+)\s*\]$`)
)

var primitives = map[string]iceberg.Type{
	"boolean": iceberg.PrimitiveTypes.Bool, "int": iceberg.PrimitiveTypes.Int32, "long": iceberg.PrimitiveTypes.Int64,
	"float": iceberg.PrimitiveTypes.Float32, "double": iceberg.PrimitiveTypes.Float64, "date": iceberg.PrimitiveTypes.Date,
	"time": iceberg.PrimitiveTypes.Time, "timestamp": iceberg.PrimitiveTypes.Timestamp,
	"timestamptz": iceberg.PrimitiveTypes.TimestampTz, "string": iceberg.PrimitiveTypes.String,
	"uuid": iceberg.PrimitiveTypes.UUID, "binary": iceberg.PrimitiveTypes.Binary,
}

// ParseType reads an Iceberg type written as text: a primitive by its
// Iceberg name ("long", "decimal(12, 2)", "fixed[16]", "timestamptz"), or
// "struct<name: type, ...>", "list<type>", "map<key type, value type>".
// Nested fields get placeholder ids (the update assigns fresh ones) and
// are optional.
func ParseType(s string) (iceberg.Type, error) {
	p := &typeParser{s: s}
	t, err := p.parse()
	if err == nil && strings.TrimSpace(p.s[p.i:]) != "" {
		err = fmt.Errorf("unexpected %q", p.s[p.i:])
	}
	if err != nil {
		return nil, fmt.Errorf("%w: type %q: %v", errs.ErrInvalidArgument, s, err)
	}
	return t, nil
}

type typeParser struct {
	s string
	i int
}

func (p *typeParser) skip() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

// word reads up to the next delimiter of the nested syntax; a
// parenthesised part (decimal's) is kept whole.
func (p *typeParser) word() string {
	p.skip()
	start, depth := p.i, 0
	for ; p.i < len(p.s); p.i++ {
		c := p.s[p.i]
		switch {
		case c == '(':
			depth++
		case c == ')':
			depth--
		case depth == 0 && (c == '<' || c == '>' || c == ',' || c == ':'):
			return strings.TrimSpace(p.s[start:p.i])
		}
	}
	return strings.TrimSpace(p.s[start:p.i])
}

func (p *typeParser) expect(c byte) error {
	p.skip()
	if p.i >= len(p.s) || p.s[p.i] != c {
		return fmt.Errorf("expected %q at offset %d", c, p.i)
	}
	p.i++
	return nil
}

func (p *typeParser) parse() (iceberg.Type, error) {
	w := strings.ToLower(p.word())
	switch w {
	case "struct":
		if err := p.expect('<'); err != nil {
			return nil, err
		}
		var fields []iceberg.NestedField
		for {
			name := p.word()
			if name == "" {
				return nil, fmt.Errorf("missing field name at offset %d", p.i)
			}
			if err := p.expect(':'); err != nil {
				return nil, err
			}
			t, err := p.parse()
			if err != nil {
				return nil, err
			}
			fields = append(fields, iceberg.NestedField{ID: len(fields) + 1, Name: name, Type: t})
			p.skip()
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
				continue
			}
			return &iceberg.StructType{FieldList: fields}, p.expect('>')
		}
	case "list":
		if err := p.expect('<'); err != nil {
			return nil, err
		}
		t, err := p.parse()
		if err != nil {
			return nil, err
		}
		return &iceberg.ListType{ElementID: 1, Element: t}, p.expect('>')
	case "map":
		if err := p.expect('<'); err != nil {
			return nil, err
		}
		k, err := p.parse()
		if err != nil {
			return nil, err
		}
		if err := p.expect(','); err != nil {
			return nil, err
		}
		v, err := p.parse()
		if err != nil {
			return nil, err
		}
		return &iceberg.MapType{KeyID: 1, KeyType: k, ValueID: 2, ValueType: v}, p.expect('>')
	}
	if t, ok := primitives[w]; ok {
		return t, nil
	}
	if m := decimalRe.FindStringSubmatch(w); m != nil {
		prec, _ := strconv.Atoi(m[1])
		scale, _ := strconv.Atoi(m[2])
		if prec < 1 || prec > 38 || scale > prec {
			return nil, fmt.Errorf("decimal(%d, %d): precision must be 1 to 38 and scale at most the precision", prec, scale)
		}
		return iceberg.DecimalTypeOf(prec, scale), nil
	}
	if m := fixedRe.FindStringSubmatch(w); m != nil {
		n, err := strconv.Atoi(m[1])
		if err != nil || n < 1 {
			return nil, fmt.Errorf("fixed[%s]: length must be positive", m[1])
		}
		return iceberg.FixedTypeOf(n), nil
	}
	if w == "" {
		return nil, fmt.Errorf("missing type at offset %d", p.i)
	}
	return nil, fmt.Errorf("unknown type %q (boolean, int, long, float, double, decimal(P, S), date, time, timestamp, timestamptz, string, uuid, fixed[L], binary, struct<...>, list<...>, map<..., ...>)", w)
}
