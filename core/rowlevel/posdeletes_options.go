package rowlevel

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// posDeleteOptions are rewrite_position_delete_files' options, as Iceberg
// Java 1.12's RewritePositionDeleteFilesSparkAction and
// BinPackRewritePositionDeletePlanner (a SizeBasedFileRewritePlanner) read
// them: names, defaults and checks.
type posDeleteOptions struct {
	target, minSize, maxSize int64
	minInputFiles            int
	rewriteAll               bool
	maxGroupSize             int64
	maxGroupFiles            int64
	jobOrder                 string
	partialProgress          bool
	maxCommits               int
	maxConcurrent            int
}

// Option names of rewrite_position_delete_files beyond rewrite_data_files'
// (compact_options.go) and the table properties it reads.
const (
	optMaxGroupFiles = "max-file-group-input-files"

	// PropDeleteTargetFileSize is the default target of rewritten delete
	// files (Java's TableProperties.DELETE_TARGET_FILE_SIZE_BYTES).
	PropDeleteTargetFileSize    = "write.delete.target-file-size-bytes"
	defaultDeleteTargetFileSize = 64 << 20
	// PropDeleteGranularity is file (a delete file per data file, Java's
	// default) or partition.
	PropDeleteGranularity = "write.delete.granularity"
)

// posDeleteRunner is the rewriter's name in Java's unknown-option message.
const posDeleteRunner = "BIN-PACK"

// parsePosDeleteOptions checks opts; tableProps give the default target
// size (write.delete.target-file-size-bytes, 64 MiB).
func parsePosDeleteOptions(opts, tableProps map[string]string) (posDeleteOptions, error) {
	valid := map[string]bool{
		optTarget: true, optMinSize: true, optMaxSize: true, optMinInputFiles: true, optRewriteAll: true,
		optMaxGroupSize: true, optMaxGroupFiles: true, optJobOrder: true,
		optPartial: true, optPartialCommits: true, optMaxConcurrent: true,
	}
	var unknown []string
	for k := range opts {
		if !valid[k] {
			unknown = append(unknown, k)
		}
	}
	o := posDeleteOptions{}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return o, fmt.Errorf("%w: Cannot use options [%s], they are not supported by the action or the rewriter %s",
			errs.ErrInvalidArgument, strings.Join(unknown, ", "), posDeleteRunner)
	}
	defTarget := int64(defaultDeleteTargetFileSize)
	if v, ok := tableProps[PropDeleteTargetFileSize]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return o, fmt.Errorf("%w: table property %s=%q is not a number", errs.ErrInvalidArgument, PropDeleteTargetFileSize, v)
		}
		defTarget = n
	}
	p := optionParser{opts: opts}
	o.target = p.long(optTarget, defTarget)
	o.minSize = p.long(optMinSize, int64(float64(o.target)*0.75))
	o.maxSize = p.long(optMaxSize, int64(float64(o.target)*1.80))
	o.minInputFiles = p.int(optMinInputFiles, defaultMinInputFiles)
	o.rewriteAll = p.bool(optRewriteAll, false)
	o.maxGroupSize = p.long(optMaxGroupSize, defaultMaxGroupSize)
	o.maxGroupFiles = p.long(optMaxGroupFiles, math.MaxInt64)
	o.jobOrder = strings.ToLower(p.str(optJobOrder, "none"))
	o.partialProgress = p.bool(optPartial, false)
	o.maxCommits = p.int(optPartialCommits, defaultMaxCommits)
	o.maxConcurrent = p.int(optMaxConcurrent, defaultMaxConcurrent)
	if p.err != nil {
		return o, p.err
	}
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
		{o.maxGroupFiles > 0, fmt.Sprintf("'%s' is set to %d but must be > 0", optMaxGroupFiles, o.maxGroupFiles)},
		{slices.Contains(jobOrders, o.jobOrder), fmt.Sprintf("Invalid rewrite job order name: %s", opts[optJobOrder])},
		{o.maxConcurrent >= 1, fmt.Sprintf("Cannot set %s to %d, the value must be positive.", optMaxConcurrent, o.maxConcurrent)},
		{!o.partialProgress || o.maxCommits > 0, fmt.Sprintf("Cannot set %s to %d, the value must be positive when %s is true", optPartialCommits, o.maxCommits, optPartial)},
	}
	for _, c := range checks {
		if !c.ok {
			return o, fmt.Errorf("%w: %s", errs.ErrInvalidArgument, c.msg)
		}
	}
	return o, nil
}

// writeMaxFileSize is the size the new delete files roll at (Java's
// writeMaxFileSize: the target plus half the distance to the max).
func (o posDeleteOptions) writeMaxFileSize() int64 {
	return o.target + int64(float64(o.maxSize-o.target)*0.5)
}

// sizedItem is one file the planner packs: its size in bytes.
type sizedItem interface{ size() int64 }

// packGroups is Java's BinPacking.ListPacker with lookback 1 over items in
// order: one open bin; an item that would take it past maxBytes or
// maxFiles closes it and opens the next.
func packGroups[T sizedItem](items []T, maxBytes, maxFiles int64) [][]T {
	var out [][]T
	var open []T
	var bytes int64
	for _, it := range items {
		if len(open) > 0 && (bytes+it.size() > maxBytes || int64(len(open)) >= maxFiles) {
			out = append(out, open)
			open, bytes = nil, 0
		}
		open = append(open, it)
		bytes += it.size()
	}
	if len(open) > 0 {
		out = append(out, open)
	}
	return out
}

// planSizedGroups is SizeBasedFileRewritePlanner.planFileGroups as the
// position-delete planner uses it for the files of one partition: the
// files outside [min-file-size-bytes, max-file-size-bytes] (every file
// with rewrite-all), packed, and the groups worth rewriting: at least
// min-input-files (and two) files, or two or more files over the target,
// or more than the max in bytes (every group with rewrite-all).
func planSizedGroups[T sizedItem](items []T, o posDeleteOptions) [][]T {
	var pick []T
	for _, it := range items {
		if o.rewriteAll || it.size() < o.minSize || it.size() > o.maxSize {
			pick = append(pick, it)
		}
	}
	groups := packGroups(pick, o.maxGroupSize, o.maxGroupFiles)
	if o.rewriteAll {
		return groups
	}
	var out [][]T
	for _, g := range groups {
		var bytes int64
		for _, it := range g {
			bytes += it.size()
		}
		n := len(g)
		if n > 1 && n >= o.minInputFiles || n > 1 && bytes > o.target || bytes > o.maxSize {
			out = append(out, g)
		}
	}
	return out
}
