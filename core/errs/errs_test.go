package errs

import (
	"context"
	"fmt"
	"testing"
)

func TestStatusOfWrappedKinds(t *testing.T) {
	cases := map[error]Status{
		nil:                                   StatusOK,
		fmt.Errorf("x: %w", ErrNoSuchTable):   StatusNoSuchTable,
		fmt.Errorf("y: %w", ErrValidation):    StatusValidation,
		fmt.Errorf("z: %w", context.Canceled): StatusCancelled,
		fmt.Errorf("plain"):                   StatusUnknown,
		// The more specific kind wins when an error wraps two.
		fmt.Errorf("%w: %w", ErrInvalidArgument, ErrCommitConflict): StatusCommitConflict,
	}
	for err, want := range cases {
		if got := StatusOf(err); got != want {
			t.Errorf("StatusOf(%v) = %d, want %d", err, got, want)
		}
	}
}
