package expr

import (
	"fmt"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// Error is a syntax, binding or evaluation error in an expression. It wraps
// errs.ErrInvalidArgument for syntax errors and errs.ErrValidation for
// binding, typing and evaluation errors.
type Error struct {
	Src  string // the expression text
	Pos  int    // 1-based character position in Src; 0 when unknown
	Msg  string
	Hint string // extra context appended after the position, e.g. the known columns
	What string // what Src is: "expression" (when empty) or "statement"
	kind error
}

func (e *Error) Error() string {
	what := e.What
	if what == "" {
		what = "expression"
	}
	s := fmt.Sprintf("invalid %s %q: %s", what, e.Src, e.Msg)
	if e.Pos > 0 {
		s += fmt.Sprintf(" at position %d", e.Pos)
	}
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// Unwrap returns the error kind (errs.ErrInvalidArgument or errs.ErrValidation).
func (e *Error) Unwrap() error { return e.kind }

func syntaxErr(src string, pos int, format string, args ...any) *Error {
	return &Error{Src: src, Pos: pos, Msg: fmt.Sprintf(format, args...), kind: errs.ErrInvalidArgument}
}

func bindErr(src string, pos int, format string, args ...any) *Error {
	return &Error{Src: src, Pos: pos, Msg: fmt.Sprintf(format, args...), kind: errs.ErrValidation}
}
