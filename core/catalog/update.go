package catalog

import (
	"encoding/json"
	"slices"

	"github.com/apache/iceberg-go/table"
)

// DecodeUpdate reads the JSON form of u into doc. iceberg-go's table.Update
// values keep their data unexported; their JSON (the REST wire form) is the
// one way to read it back, so every reader of an update goes through here.
func DecodeUpdate(u table.Update, doc any) error {
	b, err := json.Marshal(u)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, doc)
}

// AddedSnapshot returns the snapshot an AddSnapshot update carries.
func AddedSnapshot(u table.Update) (*table.Snapshot, bool) {
	if u.Action() != table.UpdateAddSnapshot {
		return nil, false
	}
	var doc struct {
		Snapshot *table.Snapshot `json:"snapshot"`
	}
	if DecodeUpdate(u, &doc) != nil || doc.Snapshot == nil {
		return nil, false
	}
	return doc.Snapshot, true
}

// detachedSnapshots returns updates with each AddSnapshot update replaced by
// one carrying a copy of its snapshot, or updates itself when none needs it.
//
// iceberg-go's snapshot producer points the new snapshot's schema-id at a
// field of its transaction's metadata builder, which holds the metadata the
// transaction started from. The metadata a commit builds keeps that pointer,
// so each version kept the one before it reachable: with the committed
// metadata cached for the next write (metacache.go), a session appending to
// one table held every version it ever committed, memory growing with the
// square of the commits (700 MB live after 600 small appends). The copy's
// fields are the update's own.
func detachedSnapshots(updates []table.Update) []table.Update {
	var out []table.Update
	for i, u := range updates {
		sn, ok := AddedSnapshot(u)
		if !ok {
			continue
		}
		if out == nil {
			out = slices.Clone(updates)
		}
		out[i] = table.NewAddSnapshotUpdate(sn)
	}
	if out == nil {
		return updates
	}
	return out
}
