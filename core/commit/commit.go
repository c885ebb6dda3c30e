// Package commit runs optimistic commits with refresh, re-validation and
// retry on every catalog, honouring commit.retry.* with Java's defaults.
// iceberg-go retries only on REST; on the SQL and directory catalogs a stale
// base fails with a plain "requirement failed" error, so the loop lives here.
package commit

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// Retry is the commit.retry.* configuration.
type Retry struct {
	NumRetries   int
	MinWait      time.Duration
	MaxWait      time.Duration
	TotalTimeout time.Duration
	// Serialize, when set, is held around every attempt: committers of one
	// table queue on it instead of racing (and retrying) each other. It is
	// given the time left of TotalTimeout.
	Serialize func(ctx context.Context) (release func(), err error)
}

// RetryFromProperties reads commit.retry.* from table properties, with
// Java's defaults (4 retries, 100 ms to 60 s, 30 min in total).
func RetryFromProperties(props map[string]string) (Retry, error) {
	r := Retry{NumRetries: 4, MinWait: 100 * time.Millisecond, MaxWait: 60 * time.Second, TotalTimeout: 30 * time.Minute}
	for key, dst := range map[string]*time.Duration{
		"commit.retry.min-wait-ms": &r.MinWait, "commit.retry.max-wait-ms": &r.MaxWait, "commit.retry.total-timeout-ms": &r.TotalTimeout,
	} {
		if v, ok := props[key]; ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return r, fmt.Errorf("%w: table property %s=%q is not a non-negative integer", errs.ErrInvalidArgument, key, v)
			}
			*dst = time.Duration(n) * time.Millisecond
		}
	}
	if v, ok := props["commit.retry.num-retries"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return r, fmt.Errorf("%w: table property commit.retry.num-retries=%q is not a non-negative integer", errs.ErrInvalidArgument, v)
		}
		r.NumRetries = n
	}
	return r, nil
}

// finalError is a conflict that no retry can resolve.
type finalError struct{ error }

func (f finalError) Unwrap() error { return f.error }

// Final marks err as not worth retrying: a failed isolation check fails
// the operation at once: a validation failure is final.
func Final(err error) error { return finalError{err} }

// IsConflict reports whether err means the base was stale: a refresh and a
// new attempt may succeed.
func IsConflict(err error) bool {
	var f finalError
	if errors.As(err, &f) {
		return false
	}
	if errors.Is(err, table.ErrCommitFailed) || errors.Is(err, errs.ErrCommitConflict) {
		return true
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "requirement failed") && !strings.Contains(msg, "table already exists") &&
		!strings.Contains(msg, "metadata does not exist")
}

// Classify maps iceberg-go's commit errors to this project's kinds.
func Classify(err error) error {
	if err == nil || errs.StatusOf(err) != errs.StatusUnknown {
		return err
	}
	msg := strings.ToLower(err.Error())
	switch {
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%w: %v", errs.ErrCancelled, err)
	case strings.Contains(msg, "table already exists"):
		return fmt.Errorf("%w: %v", errs.ErrTableAlreadyExists, err)
	case strings.Contains(msg, "metadata does not exist"):
		return fmt.Errorf("%w: %v", errs.ErrNoSuchTable, err)
	case IsConflict(err):
		return fmt.Errorf("%w: %v", errs.ErrCommitConflict, err)
	}
	return err
}

// Do calls attempt until it succeeds, fails with an error that is not a
// conflict, or the retry budget is spent. attempt must refresh its base
// itself and re-validate on every call.
func Do(ctx context.Context, r Retry, attempt func(ctx context.Context) error) error {
	start := time.Now()
	wait := r.MinWait
	for i := 0; ; i++ {
		err := r.serialized(ctx, start, attempt)
		if err == nil || !IsConflict(err) {
			return Classify(err)
		}
		if i >= r.NumRetries || time.Since(start) > r.TotalTimeout {
			return fmt.Errorf("%w: gave up after %d attempts: %v", errs.ErrCommitConflict, i+1, err)
		}
		// Exponential backoff with jitter: between half the wait and one and
		// a half times it, so writers that collided once spread out.
		d := wait/2 + time.Duration(rand.Int64N(int64(wait)+1))
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %v", errs.ErrCancelled, ctx.Err())
		case <-time.After(d):
		}
		wait = min(wait*2, r.MaxWait)
	}
}

// serialized runs attempt while holding r.Serialize, if set.
func (r Retry) serialized(ctx context.Context, start time.Time, attempt func(ctx context.Context) error) error {
	if r.Serialize == nil {
		return attempt(ctx)
	}
	wctx, cancel := context.WithDeadline(ctx, start.Add(r.TotalTimeout))
	release, err := r.Serialize(wctx)
	cancel()
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return fmt.Errorf("%w: waiting for the table's commit lock: %v", errs.ErrCancelled, ctx.Err())
	case errors.Is(err, context.DeadlineExceeded):
		return Final(fmt.Errorf("%w: gave up waiting for the table's commit lock after %s (commit.retry.total-timeout-ms)", errs.ErrCommitConflict, r.TotalTimeout))
	default:
		return Final(fmt.Errorf("%w: taking the table's commit lock: %v", errs.ErrIO, err))
	}
	defer release()
	return attempt(ctx)
}
