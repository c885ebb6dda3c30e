// Package stream holds the exactly-once rule of streaming writes: the
// snapshot summary keys Spark's streaming sink records (the query id and
// the epoch, here the batch id) and the check that a batch was already
// committed by its query on a branch. The table is the checkpoint: the
// last committed batch of a query is read back from the branch's history.
//
// It neither writes nor commits: core/write and core/rowlevel call Check
// inside every commit attempt, so a batch a concurrent writer of the same
// query committed first is skipped rather than committed twice.
package stream

import (
	"errors"
	"fmt"
	"maps"
	"strconv"

	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// The snapshot summary keys of Iceberg's Spark streaming sink
// (SparkWrite.BaseStreamingWrite: QUERY_ID_PROPERTY, EPOCH_ID_PROPERTY).
const (
	QueryIDKey = "spark.sql.streaming.queryId"
	EpochIDKey = "spark.sql.streaming.epochId"
)

// Batch identifies one micro-batch of a streaming query.
type Batch struct {
	QueryID string
	ID      int64
}

// Props are the summary properties a commit of b carries.
func (b Batch) Props() map[string]string {
	return map[string]string{QueryIDKey: b.QueryID, EpochIDKey: strconv.FormatInt(b.ID, 10)}
}

// Committed is the last batch a query committed on a branch.
type Committed struct {
	QueryID     string            `json:"query_id"`
	BatchID     int64             `json:"batch_id"`
	SnapshotID  int64             `json:"snapshot_id"`
	TimestampMs int64             `json:"timestamp_ms"`
	Summary     map[string]string `json:"summary"`
}

// Last returns the newest snapshot in head's ancestry that queryID
// committed (nil: none), walking parents as Java's
// findLastCommittedEpochId does. head nil is an empty branch.
func Last(m table.Metadata, head *table.Snapshot, queryID string) (*Committed, error) {
	return last(m.SnapshotByID, head, queryID)
}

func last(byID func(int64) *table.Snapshot, head *table.Snapshot, queryID string) (*Committed, error) {
	for sn := head; sn != nil; {
		if sn.Summary != nil && sn.Summary.Properties[QueryIDKey] == queryID {
			v := sn.Summary.Properties[EpochIDKey]
			id, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%w: snapshot %d of query %s has %s=%q, not a batch id", errs.ErrValidation, sn.SnapshotID, queryID, EpochIDKey, v)
			}
			return &Committed{QueryID: queryID, BatchID: id, SnapshotID: sn.SnapshotID, TimestampMs: sn.TimestampMs,
				Summary: maps.Clone(map[string]string(sn.Summary.Properties))}, nil
		}
		if sn.ParentSnapshotID == nil {
			break
		}
		sn = byID(*sn.ParentSnapshotID)
	}
	return nil, nil
}

// AlreadyCommitted is the outcome of a batch at or below its query's last
// committed batch: nothing is committed. It is an error so that it ends
// the commit loop; the operation reports it as a skipped write.
type AlreadyCommitted struct {
	Batch Batch
	Last  Committed
}

func (a *AlreadyCommitted) Error() string {
	return fmt.Sprintf("batch %d of query %s was already committed (last committed batch %d, snapshot %d)",
		a.Batch.ID, a.Batch.QueryID, a.Last.BatchID, a.Last.SnapshotID)
}

// Check returns an *AlreadyCommitted when b's query committed b or a
// later batch in head's ancestry, nil when b may be committed.
func Check(m table.Metadata, head *table.Snapshot, b Batch) error {
	return check(m.SnapshotByID, head, b)
}

func check(byID func(int64) *table.Snapshot, head *table.Snapshot, b Batch) error {
	l, err := last(byID, head, b.QueryID)
	if err != nil || l == nil || b.ID > l.BatchID {
		return err
	}
	return &AlreadyCommitted{Batch: b, Last: *l}
}

// Skipped returns the AlreadyCommitted err carries, if any.
func Skipped(err error) (*AlreadyCommitted, bool) {
	var a *AlreadyCommitted
	ok := errors.As(err, &a)
	return a, ok
}
