package rowlevel

import (
	"math"
	"slices"
	"testing"
)

// Java's defaults for position deletes: the target from
// write.delete.target-file-size-bytes (64 MiB without it), min 75% and max
// 180% of it, 5 input files, 100 GB and unlimited files per group, 10
// commits and 5 concurrent groups.
func TestPosDeleteOptionDefaults(t *testing.T) {
	o, err := parsePosDeleteOptions(nil, map[string]string{"write.target-file-size-bytes": "1000"})
	if err != nil {
		t.Fatal(err)
	}
	if o.target != 64<<20 || o.minSize != 48<<20 || o.maxSize != int64(float64(o.target)*1.8) || o.minInputFiles != 5 ||
		o.maxGroupSize != 100<<30 || o.maxGroupFiles != math.MaxInt64 || o.rewriteAll || o.partialProgress ||
		o.maxCommits != 10 || o.maxConcurrent != 5 || o.jobOrder != "none" {
		t.Fatalf("defaults %+v", o)
	}
	o, err = parsePosDeleteOptions(map[string]string{"rewrite-job-order": "BYTES-ASC"}, map[string]string{"write.delete.target-file-size-bytes": "1000"})
	if err != nil || o.target != 1000 || o.minSize != 750 || o.maxSize != 1800 || o.writeMaxFileSize() != 1400 || o.jobOrder != "bytes-asc" {
		t.Fatalf("%+v %v", o, err)
	}
}

type item int64

func (i item) size() int64 { return int64(i) }

// ListPacker with lookback 1: an item that does not fit closes the open
// bin, even when a later, smaller one would have fitted; an item larger
// than a bin gets a bin of its own.
func TestPackGroups(t *testing.T) {
	got := packGroups([]item{4, 4, 3, 1, 12, 2, 2, 2}, 10, math.MaxInt64)
	want := [][]item{{4, 4}, {3, 1}, {12}, {2, 2, 2}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("by size: %v", got)
	}
	got = packGroups([]item{1, 1, 1, 1, 1}, 100, 2)
	want = [][]item{{1, 1}, {1, 1}, {1}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("by count: %v", got)
	}
}

// The planner's file and group filters (SizeBasedFileRewritePlanner):
// files within [min, max] stay; a group is rewritten with enough files,
// with two or more files over the target, or over the max alone.
func TestPlanSizedGroups(t *testing.T) {
	o := posDeleteOptions{target: 100, minSize: 75, maxSize: 180, minInputFiles: 3, maxGroupSize: 1000, maxGroupFiles: math.MaxInt64}
	cases := []struct {
		in   []item
		want [][]item
	}{
		{[]item{10, 10}, nil},                        // two small files: too few, too little
		{[]item{10, 10, 10}, [][]item{{10, 10, 10}}}, // min-input-files
		{[]item{60, 50}, [][]item{{60, 50}}},         // more than the target
		{[]item{90, 10, 10}, nil},                    // 90 is in range; two small files left
		{[]item{200}, [][]item{{200}}},               // over the max alone
		{[]item{50}, nil},                            // one small file
		{[]item{100, 120, 150}, nil},                 // all well sized
	}
	for _, c := range cases {
		if got := planSizedGroups(c.in, o); !slices.EqualFunc(got, c.want, slices.Equal) {
			t.Errorf("%v: %v, want %v", c.in, got, c.want)
		}
	}
	o.rewriteAll = true
	if got := planSizedGroups([]item{100}, o); len(got) != 1 {
		t.Errorf("rewrite-all: %v", got)
	}
}
