package commit

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

func fast(n int) Retry {
	return Retry{NumRetries: n, MinWait: time.Millisecond, MaxWait: 2 * time.Millisecond, TotalTimeout: time.Minute}
}

func TestRetriesConflictsUntilSuccess(t *testing.T) {
	calls := 0
	err := Do(context.Background(), fast(4), func(context.Context) error {
		calls++
		if calls < 3 {
			return errors.New("requirement failed: branch main has changed: expected id 1, found 2")
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("err=%v calls=%d", err, calls)
	}
}

func TestGivesUpAfterNumRetries(t *testing.T) {
	calls := 0
	err := Do(context.Background(), fast(2), func(context.Context) error {
		calls++
		return fmt.Errorf("wrapped: %w", table.ErrCommitFailed)
	})
	if !errors.Is(err, errs.ErrCommitConflict) || calls != 3 {
		t.Fatalf("err=%v calls=%d", err, calls)
	}
}

func TestOtherErrorsAreFinal(t *testing.T) {
	calls := 0
	err := Do(context.Background(), fast(5), func(context.Context) error {
		calls++
		return errors.New("Requirement failed: table already exists")
	})
	if !errors.Is(err, errs.ErrTableAlreadyExists) || calls != 1 {
		t.Fatalf("err=%v calls=%d", err, calls)
	}
}

func TestRetryFromProperties(t *testing.T) {
	r, err := RetryFromProperties(map[string]string{})
	if err != nil || r.NumRetries != 4 || r.MinWait != 100*time.Millisecond || r.MaxWait != time.Minute || r.TotalTimeout != 30*time.Minute {
		t.Fatalf("defaults: %+v %v", r, err)
	}
	r, err = RetryFromProperties(map[string]string{"commit.retry.num-retries": "9", "commit.retry.min-wait-ms": "5"})
	if err != nil || r.NumRetries != 9 || r.MinWait != 5*time.Millisecond {
		t.Fatalf("%+v %v", r, err)
	}
	if _, err := RetryFromProperties(map[string]string{"commit.retry.num-retries": "-1"}); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Fatalf("err = %v", err)
	}
}

// Every attempt runs inside Serialize, released after it, retries included.
func TestEveryAttemptHoldsTheSerializer(t *testing.T) {
	held, takes, calls := false, 0, 0
	r := fast(4)
	r.Serialize = func(context.Context) (func(), error) {
		if held {
			t.Fatal("taken twice without a release")
		}
		held, takes = true, takes+1
		return func() { held = false }, nil
	}
	err := Do(context.Background(), r, func(context.Context) error {
		calls++
		if !held {
			t.Fatal("attempt ran without the serializer")
		}
		if calls < 3 {
			return table.ErrCommitFailed
		}
		return nil
	})
	if err != nil || calls != 3 || takes != 3 || held {
		t.Fatalf("err=%v calls=%d takes=%d held=%v", err, calls, takes, held)
	}
}

func TestSerializerFailuresAreTypedAndFinal(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"timeout", context.DeadlineExceeded, errs.ErrCommitConflict},
		{"io", errors.New("opening lock file: permission denied"), errs.ErrIO},
	} {
		calls := 0
		r := fast(4)
		r.Serialize = func(context.Context) (func(), error) { return nil, tc.err }
		err := Do(context.Background(), r, func(context.Context) error { calls++; return nil })
		if !errors.Is(err, tc.want) || calls != 0 {
			t.Errorf("%s: err=%v calls=%d", tc.name, err, calls)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := fast(4)
	r.Serialize = func(ctx context.Context) (func(), error) { return nil, ctx.Err() }
	if err := Do(ctx, r, func(context.Context) error { return nil }); !errors.Is(err, errs.ErrCancelled) {
		t.Errorf("cancelled: %v", err)
	}
}
