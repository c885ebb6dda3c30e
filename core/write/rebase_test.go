package write

import (
	"testing"

	"github.com/apache/iceberg-go"
)

// A retried append keeps its own additions and takes the new parent's
// totals: total = own - old parent + new parent, for every total key it has.
func TestRebaseTotalsFollowTheNewParent(t *testing.T) {
	own := iceberg.Properties{"added-records": "5", "total-records": "15", "total-data-files": "3", "total-files-size": "300", "engine-name": "x"}
	oldParent := iceberg.Properties{"total-records": "10", "total-data-files": "2", "total-files-size": "200"}
	newParent := iceberg.Properties{"total-records": "40", "total-data-files": "7", "total-files-size": "900", "total-delete-files": "1"}
	got := rebaseTotals(own, oldParent, newParent)
	want := iceberg.Properties{"added-records": "5", "total-records": "45", "total-data-files": "8", "total-files-size": "1000", "engine-name": "x"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	// From no parent (the first snapshot) onto one.
	if got := rebaseTotals(iceberg.Properties{"total-records": "5"}, nil, newParent); got["total-records"] != "45" {
		t.Errorf("from no parent: %v", got)
	}
}
