package layout

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// Table properties read by Resolve. The first two are Iceberg's; the
// limits are this project's (Spark bounds memory by spilling its sort).
const (
	PropDistributionMode = "write.distribution-mode"
	PropFanout           = "write.spark.fanout.enabled"
	PropMaxOpenFiles     = "write.pyiceberg-go.max-open-files"
	PropMaxBufferedBytes = "write.pyiceberg-go.max-buffered-bytes"
)

// Defaults of the limits.
const (
	DefaultMaxOpenFiles           = 100
	DefaultMaxBufferedBytes int64 = 1 << 30
)

// Distribution is a write distribution mode.
type Distribution string

// The distribution modes.
const (
	None  Distribution = "none"
	Hash  Distribution = "hash"
	Range Distribution = "range"
)

// Settings is how one write lays out its rows.
type Settings struct {
	// Mode is the distribution mode after Spark's defaults and fallbacks.
	Mode Distribution
	// Fanout keeps a writer open per partition instead of clustering.
	Fanout bool
	// MaxOpenFiles caps the files open at once; reaching it closes the
	// least recently written one.
	MaxOpenFiles int
	// MaxBufferedBytes caps the memory rows wait in before encoding (sort
	// buffers, queued batches, row groups being built); reaching it writes
	// the largest buffer out.
	MaxBufferedBytes int64
}

// Resolve reads the layout settings from a write's merged properties
// (write options and session configuration already laid over the table's).
// Spark's defaults: a sorted table distributes by range, a partitioned one
// by hash, others not at all; range without a sort order or partitioning,
// and hash without partitioning, fall back to none.
func Resolve(props map[string]string, sorted, partitioned bool) (Settings, error) {
	s := Settings{MaxOpenFiles: DefaultMaxOpenFiles, MaxBufferedBytes: DefaultMaxBufferedBytes}
	switch v := strings.ToLower(strings.TrimSpace(props[PropDistributionMode])); v {
	case "":
		switch {
		case sorted:
			s.Mode = Range
		case partitioned:
			s.Mode = Hash
		default:
			s.Mode = None
		}
	case string(None), string(Hash), string(Range):
		s.Mode = Distribution(v)
	default:
		return s, fmt.Errorf("%w: distribution mode %q is not one of none, hash, range (%s / distribution-mode)",
			errs.ErrInvalidArgument, props[PropDistributionMode], PropDistributionMode)
	}
	if s.Mode == Range && !sorted && !partitioned || s.Mode == Hash && !partitioned {
		s.Mode = None
	}
	if v, ok := props[PropFanout]; ok {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return s, fmt.Errorf("%w: %s / fanout-enabled = %q is not a boolean", errs.ErrInvalidArgument, PropFanout, v)
		}
		s.Fanout = b
	}
	if v, ok := props[PropMaxOpenFiles]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			return s, fmt.Errorf("%w: %s / max-open-files = %q is not a positive integer", errs.ErrInvalidArgument, PropMaxOpenFiles, v)
		}
		s.MaxOpenFiles = n
	}
	if v, ok := props[PropMaxBufferedBytes]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 1 {
			return s, fmt.Errorf("%w: %s / max-buffered-bytes = %q is not a positive integer", errs.ErrInvalidArgument, PropMaxBufferedBytes, v)
		}
		s.MaxBufferedBytes = n
	}
	return s, nil
}
