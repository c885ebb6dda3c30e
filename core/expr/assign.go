package expr

import (
	"errors"

	"github.com/apache/iceberg-go"
)

// AssignTo returns e converted for storing into a column of type t (UPDATE
// SET, MERGE), following Spark's ANSI store-assignment policy: numeric to
// numeric (overflow is an eval-time error), NULL to anything, any of date,
// timestamp and timestamptz to another (converted in the session time
// zone), binary/fixed to binary/fixed (the length checked per row), string
// <-> uuid (parsed per row); any other type change is a bind error naming
// the column.
func (e *Expr) AssignTo(column string, t iceberg.Type) (*Expr, error) {
	from := e.root.typ
	if from.Equals(t) {
		return e, nil
	}
	fk, tk := kindOf(from), kindOf(t)
	ok := fk == kNull && tk != kOther ||
		isNumeric(fk) && isNumeric(tk) ||
		isTime(fk) && isTime(tk) ||
		(fk == kBinary || fk == kFixed) && (tk == kBinary || tk == kFixed) ||
		// Spark sees Iceberg fixed as binary and uuid as string: a binary
		// value of another length, or a string that is no UUID, fails when
		// the row is written.
		fk == kString && tk == kUUID || fk == kUUID && tk == kString
	if !ok {
		return nil, bindErr(e.src, e.root.pos, "cannot assign %s to column %q of type %s", describe(e.root), column, sqlType(t))
	}
	b := &binder{src: e.src, zone: e.zone}
	root, err := b.castTo(e.root, t)
	if err != nil {
		var inner *Error
		if errors.As(err, &inner) {
			return nil, bindErr(e.src, e.root.pos, "cannot assign %s to column %q of type %s: %s", describe(e.root), column, sqlType(t), inner.Msg)
		}
		return nil, err
	}
	out := *e
	out.root = root
	return &out, nil
}
