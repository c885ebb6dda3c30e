package maintenance

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

func TestParseLocationEquivalences(t *testing.T) {
	same := [][]string{
		{"/w/t/a.parquet", "file:/w/t/a.parquet", "file:///w/t/a.parquet", "file://localhost/w/t/a.parquet", "file:///w//t/./a.parquet"},
		{"s3://b/t/a.parquet", "s3a://b/t/a.parquet", "s3n://b/t/a.parquet", "s3://b/t//a.parquet"},
	}
	for _, group := range same {
		first := ParseLocation(group[0])
		for _, loc := range group[1:] {
			l := ParseLocation(loc)
			if l.Path != first.Path || !compatible(l, first) {
				t.Errorf("%s (%+v) and %s (%+v) should name one file", group[0], first, loc, l)
			}
		}
	}
	if compatible(ParseLocation("s3://b1/t/a"), ParseLocation("s3://b2/t/a")) {
		t.Error("buckets b1 and b2 are different authorities")
	}
	if compatible(ParseLocation("file:///t/a"), ParseLocation("s3://b/t/a")) {
		t.Error("file and s3 are different schemes")
	}
}

func TestOrphans(t *testing.T) {
	cut := time.UnixMilli(10 * day)
	old, young := cut.Add(-time.Hour), cut
	listed := []Listed{
		{"file:///w/t/data/kept.parquet", old},
		{"file:///w/t/data/orphan.parquet", old},
		{"file:///w/t/data/new-orphan.parquet", young}, // not older than the cutoff
		{"file:///w/t/metadata/v1.metadata.json", old},
		{"file:///w/t/metadata/v0.metadata.json", old}, // dropped from the metadata log
	}
	valid := []string{"/w/t/data/kept.parquet", "file:/w/t/metadata/v1.metadata.json", "file:///w/t/data/missing.parquet"}
	got, err := Orphans(listed, valid, cut)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"file:///w/t/data/orphan.parquet", "file:///w/t/metadata/v0.metadata.json"}
	if !slices.Equal(got, want) {
		t.Fatalf("orphans %v, want %v", got, want)
	}
	// A listed file whose path the metadata names in another bucket is
	// neither kept nor deleted: the call fails.
	_, err = Orphans([]Listed{{"s3://b1/t/a", old}}, []string{"s3://b2/t/a"}, cut)
	if !errors.Is(err, errs.ErrValidation) {
		t.Fatalf("authority mismatch: got %v", err)
	}
	if got, err := Orphans([]Listed{{"s3a://b/t/a", old}}, []string{"s3://b/t/a"}, cut); err != nil || len(got) != 0 {
		t.Fatalf("s3a vs s3: %v %v", got, err)
	}
}

func TestHidden(t *testing.T) {
	parts := []string{"_p"}
	for name, want := range map[string]bool{
		"a.parquet": false, ".a.parquet.crc": true, "_SUCCESS": true, "_p=1": false, "_q=1": true, "x=_1": false,
	} {
		if got := hidden(name, parts); got != want {
			t.Errorf("hidden(%q) = %v, want %v", name, got, want)
		}
	}
}
