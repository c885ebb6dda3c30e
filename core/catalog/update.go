package catalog

import (
	"encoding/json"

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
