// Package errs holds the error kinds every layer agrees on. Each kind maps to
// one stable status code of the C ABI (include/pyiceberg_go.h) and to one
// Python exception class. Errors are values: wrap a kind with context using
// fmt.Errorf("...: %w", errs.ErrValidation) and test it with errors.Is.
package errs

import (
	"context"
	"errors"
)

var (
	ErrInvalidArgument    = errors.New("invalid argument")
	ErrNoSuchTable        = errors.New("no such table")
	ErrTableAlreadyExists = errors.New("table already exists")
	ErrNoSuchNamespace    = errors.New("no such namespace")
	ErrValidation         = errors.New("validation failed")
	ErrCommitConflict     = errors.New("commit conflict")
	ErrCancelled          = errors.New("operation cancelled")
	ErrIO                 = errors.New("i/o error")
	ErrNotSupported       = errors.New("not supported")
	ErrCommitStateUnknown = errors.New("commit state unknown")
)

// Status is the C ABI status code of an error kind. Values are only ever
// appended; they must match PIG_STATUS_* in include/pyiceberg_go.h.
type Status int32

const (
	StatusOK                 Status = 0
	StatusUnknown            Status = 1
	StatusInvalidArgument    Status = 2
	StatusNoSuchTable        Status = 3
	StatusTableAlreadyExists Status = 4
	StatusNoSuchNamespace    Status = 5
	StatusValidation         Status = 6
	StatusCommitConflict     Status = 7
	StatusCancelled          Status = 8
	StatusIO                 Status = 9
	StatusNotSupported       Status = 10
	StatusCommitStateUnknown Status = 11
	StatusInternal           Status = 12 // a recovered panic
	StatusPoisoned           Status = 13 // the library refused the call after an earlier panic
)

var kinds = []struct {
	err    error
	status Status
}{
	{ErrCancelled, StatusCancelled},
	{context.Canceled, StatusCancelled},
	{ErrCommitStateUnknown, StatusCommitStateUnknown},
	{ErrCommitConflict, StatusCommitConflict},
	{ErrTableAlreadyExists, StatusTableAlreadyExists},
	{ErrNoSuchTable, StatusNoSuchTable},
	{ErrNoSuchNamespace, StatusNoSuchNamespace},
	{ErrValidation, StatusValidation},
	{ErrInvalidArgument, StatusInvalidArgument},
	{ErrNotSupported, StatusNotSupported},
	{ErrIO, StatusIO},
}

// StatusOf returns the status code for err: the first kind err wraps, or
// StatusUnknown.
func StatusOf(err error) Status {
	if err == nil {
		return StatusOK
	}
	for _, k := range kinds {
		if errors.Is(err, k.err) {
			return k.status
		}
	}
	return StatusUnknown
}
