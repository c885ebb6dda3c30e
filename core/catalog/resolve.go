package catalog

import (
	"context"
	"encoding/json"
	"reflect"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// lastAddedRefs resolves "the last added" (-1) in set-current-schema and
// set-default-sort-order updates to concrete ids where the preceding add
// re-adds a schema or sort order the table already has.
//
// iceberg-go's metadata builder, which planned the commit, takes -1 as the
// id the add resolved to, existing or new; Java's (the REST server's)
// takes a re-added one as nothing added and rejects the -1 ("Cannot set
// last added sort order: no sort order has been added"). A REPLACE keeping
// the table's sort order (unsorted, often) or its schema does exactly that.
func (r *restCatalog) lastAddedRefs(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) []table.Update {
	needs := false
	for _, u := range updates {
		if a := u.Action(); a == table.UpdateAddSchema || a == table.UpdateAddSortOrder {
			needs = true
		}
	}
	if !needs {
		return updates
	}
	t, err := r.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return updates // the commit reports what is wrong
	}
	md := t.Metadata()
	for _, q := range reqs {
		if q.Validate(md) != nil {
			return updates // stale: the server refuses the commit anyway
		}
	}
	out := make([]table.Update, 0, len(updates))
	schemaID, orderID := -1, -1
	for _, u := range updates {
		switch u.Action() {
		case table.UpdateAddSchema:
			schemaID = -1
			var doc struct {
				Schema *iceberg.Schema `json:"schema"`
			}
			if DecodeUpdate(u, &doc) == nil && doc.Schema != nil {
				for _, s := range md.Schemas() {
					if s.Equals(doc.Schema) {
						schemaID = s.ID
					}
				}
			}
		case table.UpdateSetCurrentSchema:
			var doc struct {
				ID int `json:"schema-id"`
			}
			if DecodeUpdate(u, &doc) == nil && doc.ID == -1 && schemaID >= 0 {
				u = table.NewSetCurrentSchemaUpdate(schemaID)
			}
		case table.UpdateAddSortOrder:
			orderID = -1
			var doc struct {
				Order struct {
					Fields any `json:"fields"`
				} `json:"sort-order"`
			}
			if DecodeUpdate(u, &doc) == nil {
				for _, o := range md.SortOrders() {
					var have struct {
						Fields any `json:"fields"`
					}
					if b, err := json.Marshal(o); err == nil && json.Unmarshal(b, &have) == nil && sameFields(have.Fields, doc.Order.Fields) {
						orderID = o.OrderID()
					}
				}
			}
		case table.UpdateSetDefaultSortOrder:
			var doc struct {
				ID int `json:"sort-order-id"`
			}
			if DecodeUpdate(u, &doc) == nil && doc.ID == -1 && orderID >= 0 {
				u = table.NewSetDefaultSortOrderUpdate(orderID)
			}
		}
		out = append(out, u)
	}
	return out
}

// sameFields compares two decoded JSON field lists; no field and an empty
// list are the same.
func sameFields(a, b any) bool {
	empty := func(v any) bool {
		l, ok := v.([]any)
		return v == nil || (ok && len(l) == 0)
	}
	if empty(a) || empty(b) {
		return empty(a) && empty(b)
	}
	return reflect.DeepEqual(a, b)
}
