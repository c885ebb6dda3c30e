package rowlevel

import (
	"errors"
	"strings"
	"testing"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// Java's defaults: the target from write.target-file-size-bytes (512 MiB
// without it), min 75% and max 180% of it, 5 input files, 100 GB groups,
// the starting sequence number kept.
func TestRewriteOptionDefaults(t *testing.T) {
	o, err := parseRewriteOptions(nil, nil, "binpack")
	if err != nil {
		t.Fatal(err)
	}
	if o.target != 512<<20 || o.minSize != 384<<20 || o.maxSize != 966367641 || o.minInputFiles != 5 ||
		o.maxGroupSize != 100<<30 || !o.useStartingSeq || o.rewriteAll || o.partialProgress || o.maxCommits != 10 || o.deleteRatioThreshold != 0.3 {
		t.Fatalf("defaults %+v", o)
	}
	if got, want := o.writeMaxFileSize(), o.target+(o.maxSize-o.target)/2; got != want {
		t.Fatalf("write max %d, want %d", got, want)
	}
	o, err = parseRewriteOptions(map[string]string{"min-file-size-bytes": "10"}, map[string]string{"write.target-file-size-bytes": "1000"}, "binpack")
	if err != nil || o.target != 1000 || o.minSize != 10 || o.maxSize != 1800 {
		t.Fatalf("%+v %v", o, err)
	}
	for opts, text := range map[string]string{
		"compression-factor": "Cannot use options [compression-factor], they are not supported by the action or the rewriter binpack",
		"rewrite-all":        "true or false",
	} {
		_, err := parseRewriteOptions(map[string]string{opts: "x"}, nil, "binpack")
		if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), text) {
			t.Errorf("%s=x: %v", opts, err)
		}
	}
	if _, err := parseRewriteOptions(map[string]string{"compression-factor": "2"}, nil, "sort"); err != nil {
		t.Errorf("sort takes compression-factor: %v", err)
	}
}

func TestSplitSortTerms(t *testing.T) {
	got := splitTerms("region ASC NULLS FIRST, bucket(4, id) DESC,`a,b`")
	want := []string{"region ASC NULLS FIRST", " bucket(4, id) DESC", "`a,b`"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("%q", got)
	}
}
