package rowlevel

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/parquet"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
)

// rewriteOptions are rewrite_data_files' options, as Iceberg Java's
// SizeBasedFileRewritePlanner, BinPackRewriteFilePlanner and
// RewriteDataFilesSparkAction read them (names, defaults and checks).
type rewriteOptions struct {
	target, minSize, maxSize int64
	minInputFiles            int
	rewriteAll               bool
	maxGroupSize             int64
	deleteFileThreshold      int
	deleteRatioThreshold     float64
	jobOrder                 string
	maxFilesToRewrite        int // 0: no limit
	maxBytesToRewrite        int64
	partialProgress          bool
	maxCommits               int
	maxFailedCommits         int
	maxConcurrent            int
	useStartingSeq           bool
	removeDanglingDeletes    bool
	outputSpecID             *int
}

// Option names and defaults (Java's constants of the same meaning).
const (
	optTarget            = "target-file-size-bytes"
	optMinSize           = "min-file-size-bytes"
	optMaxSize           = "max-file-size-bytes"
	optMinInputFiles     = "min-input-files"
	optRewriteAll        = "rewrite-all"
	optMaxGroupSize      = "max-file-group-size-bytes"
	optDeleteThreshold   = "delete-file-threshold"
	optDeleteRatio       = "delete-ratio-threshold"
	optJobOrder          = "rewrite-job-order"
	optMaxFiles          = "max-files-to-rewrite"
	optMaxBytes          = "max-bytes-to-rewrite"
	optPartial           = "partial-progress.enabled"
	optPartialCommits    = "partial-progress.max-commits"
	optPartialFailed     = "partial-progress.max-failed-commits"
	optMaxConcurrent     = "max-concurrent-file-group-rewrites"
	optUseStartingSeq    = "use-starting-sequence-number"
	optRemoveDangling    = "remove-dangling-deletes"
	optOutputSpecID      = "output-spec-id"
	optCompressionFactor = "compression-factor"
	optShufflePerFile    = "shuffle-partitions-per-file"
	optZVarLength        = "var-length-contribution"
	optZMaxOutput        = "max-output-size"

	defaultMinInputFiles = 5
	defaultMaxGroupSize  = 100 << 30
	defaultMaxCommits    = 10
	defaultMaxConcurrent = 5
	defaultDeleteRatio   = 0.3
)

var jobOrders = []string{"none", "bytes-asc", "bytes-desc", "files-asc", "files-desc"}

// parseRewriteOptions checks opts for strategy; tableProps give the
// default target file size (write.target-file-size-bytes, 512 MiB).
func parseRewriteOptions(opts, tableProps map[string]string, strategy string) (rewriteOptions, error) {
	valid := map[string]bool{
		optTarget: true, optMinSize: true, optMaxSize: true, optMinInputFiles: true, optRewriteAll: true,
		optMaxGroupSize: true, optDeleteThreshold: true, optDeleteRatio: true, optJobOrder: true,
		optMaxFiles: true, optMaxBytes: true, optPartial: true, optPartialCommits: true, optPartialFailed: true,
		optMaxConcurrent: true, optUseStartingSeq: true, optRemoveDangling: true, optOutputSpecID: true,
	}
	if strategy == request.StrategySort {
		valid[optCompressionFactor], valid[optShufflePerFile] = true, true
		valid[optZVarLength], valid[optZMaxOutput] = true, true
	}
	var unknown []string
	for k := range opts {
		if !valid[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return rewriteOptions{}, fmt.Errorf("%w: Cannot use options [%s], they are not supported by the action or the rewriter %s",
			errs.ErrInvalidArgument, strings.Join(unknown, ", "), strategy)
	}
	p := optionParser{opts: opts}
	o := rewriteOptions{}
	defTarget := parquet.DefaultTargetFileSize
	if v, ok := tableProps[parquet.PropTargetFileSize]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return o, fmt.Errorf("%w: table property %s=%q is not a number", errs.ErrInvalidArgument, parquet.PropTargetFileSize, v)
		}
		defTarget = n
	}
	o.target = p.long(optTarget, defTarget)
	o.minSize = p.long(optMinSize, int64(float64(o.target)*0.75))
	o.maxSize = p.long(optMaxSize, int64(float64(o.target)*1.80))
	o.minInputFiles = p.int(optMinInputFiles, defaultMinInputFiles)
	o.rewriteAll = p.bool(optRewriteAll, false)
	o.maxGroupSize = p.long(optMaxGroupSize, defaultMaxGroupSize)
	o.deleteFileThreshold = p.int(optDeleteThreshold, math.MaxInt32)
	o.deleteRatioThreshold = p.float(optDeleteRatio, defaultDeleteRatio)
	o.jobOrder = strings.ToLower(p.str(optJobOrder, "none"))
	o.maxFilesToRewrite = p.int(optMaxFiles, 0)
	o.maxBytesToRewrite = p.long(optMaxBytes, math.MaxInt64)
	o.partialProgress = p.bool(optPartial, false)
	o.maxCommits = p.int(optPartialCommits, defaultMaxCommits)
	o.maxFailedCommits = p.int(optPartialFailed, o.maxCommits)
	o.maxConcurrent = p.int(optMaxConcurrent, defaultMaxConcurrent)
	o.useStartingSeq = p.bool(optUseStartingSeq, true)
	o.removeDanglingDeletes = p.bool(optRemoveDangling, false)
	if _, ok := opts[optOutputSpecID]; ok {
		id := p.int(optOutputSpecID, 0)
		o.outputSpecID = &id
	}
	if strategy == request.StrategySort {
		p.float(optCompressionFactor, 1)
		p.int(optShufflePerFile, 1)
		// Only the z-order defaults (8 bytes per string, no cap) are built in.
		if v := p.int(optZVarLength, 8); v != 8 && p.err == nil {
			return o, fmt.Errorf("%w: option %s=%d: only the default 8 is supported", errs.ErrNotSupported, optZVarLength, v)
		}
		if v := p.int(optZMaxOutput, math.MaxInt32); v != math.MaxInt32 && p.err == nil {
			return o, fmt.Errorf("%w: option %s=%d: only the default (no limit) is supported", errs.ErrNotSupported, optZMaxOutput, v)
		}
	}
	if p.err != nil {
		return o, p.err
	}
	// Java's checks, with its messages.
	checks := []struct {
		ok  bool
		msg string
	}{
		{o.target > 0, fmt.Sprintf("'%s' is set to %d but must be > 0", optTarget, o.target)},
		{o.minSize >= 0, fmt.Sprintf("'%s' is set to %d but must be >= 0", optMinSize, o.minSize)},
		{o.target > o.minSize, fmt.Sprintf("'%s' (%d) must be > '%s' (%d), all new files will be smaller than the min threshold", optTarget, o.target, optMinSize, o.minSize)},
		{o.target < o.maxSize, fmt.Sprintf("'%s' (%d) must be < '%s' (%d), all new files will be larger than the max threshold", optTarget, o.target, optMaxSize, o.maxSize)},
		{o.minInputFiles > 0, fmt.Sprintf("'%s' is set to %d but must be > 0", optMinInputFiles, o.minInputFiles)},
		{o.maxGroupSize > 0, fmt.Sprintf("'%s' is set to %d but must be > 0", optMaxGroupSize, o.maxGroupSize)},
		{o.deleteFileThreshold >= 0, fmt.Sprintf("'%s' is set to %d but must be >= 0", optDeleteThreshold, o.deleteFileThreshold)},
		{o.deleteRatioThreshold > 0 && o.deleteRatioThreshold <= 1, fmt.Sprintf("'%s' is set to %v but must be > 0 and <= 1", optDeleteRatio, o.deleteRatioThreshold)},
		{slices.Contains(jobOrders, o.jobOrder), fmt.Sprintf("Invalid rewrite job order name: %s", opts[optJobOrder])},
		{o.maxFilesToRewrite >= 0 && (opts[optMaxFiles] == "" || o.maxFilesToRewrite > 0), fmt.Sprintf("Cannot set %s to %d, the value must be positive integer.", optMaxFiles, o.maxFilesToRewrite)},
		{o.maxBytesToRewrite > 0, fmt.Sprintf("Cannot set %s to %d, the value must be positive integer.", optMaxBytes, o.maxBytesToRewrite)},
		{o.maxCommits > 0, fmt.Sprintf("Cannot set %s to %d, the value must be positive.", optPartialCommits, o.maxCommits)},
		{o.maxFailedCommits >= 0, fmt.Sprintf("Cannot set %s to %d, the value must be non-negative.", optPartialFailed, o.maxFailedCommits)},
		{o.maxConcurrent >= 1, fmt.Sprintf("Cannot set %s to %d, the value must be positive.", optMaxConcurrent, o.maxConcurrent)},
	}
	for _, c := range checks {
		if !c.ok {
			return o, fmt.Errorf("%w: %s", errs.ErrInvalidArgument, c.msg)
		}
	}
	return o, nil
}

// writeMaxFileSize is the size the rewrite's files roll at: the target
// plus half the distance to the max (Java's writeMaxFileSize), so a group
// a little over the target is not split into a full file and a sliver.
func (o rewriteOptions) writeMaxFileSize() int64 {
	return o.target + int64(float64(o.maxSize-o.target)*0.5)
}

// optionParser reads typed option values, keeping the first error.
type optionParser struct {
	opts map[string]string
	err  error
}

func (p *optionParser) str(k, def string) string {
	if v, ok := p.opts[k]; ok {
		return strings.TrimSpace(v)
	}
	return def
}

func (p *optionParser) fail(k, v, what string) {
	if p.err == nil {
		p.err = fmt.Errorf("%w: option %s=%q is not %s", errs.ErrInvalidArgument, k, v, what)
	}
}

func (p *optionParser) long(k string, def int64) int64 {
	v, ok := p.opts[k]
	if !ok {
		return def
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		p.fail(k, v, "a long integer")
	}
	return n
}

func (p *optionParser) int(k string, def int) int {
	v, ok := p.opts[k]
	if !ok {
		return def
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
	if err != nil {
		p.fail(k, v, "an integer")
	}
	return int(n)
}

func (p *optionParser) float(k string, def float64) float64 {
	v, ok := p.opts[k]
	if !ok {
		return def
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		p.fail(k, v, "a number")
	}
	return f
}

// bool reads a boolean as Java's Boolean.parseBoolean would not: anything
// but true or false (any case) is an error rather than false.
func (p *optionParser) bool(k string, def bool) bool {
	v, ok := p.opts[k]
	if !ok {
		return def
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true
	case "false":
		return false
	}
	p.fail(k, v, "true or false")
	return def
}
