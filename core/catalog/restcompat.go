package catalog

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// compatTransport gives every add-schema table update of a commit the
// last-column-id field (the table's last column id after it: the schema's
// highest field id, or the commit's asserted last-assigned-field-id when
// that is higher), as Iceberg Java and PyIceberg send it. The REST spec has deprecated the field, but servers
// built on older Java models require it: Project Nessie 0.99 answers an
// add-schema without it with HTTP 500. iceberg-go builds the update
// without it, in commits we make and in the staged create it commits on its
// own, so the body is completed here, on the way out.
type compatTransport struct{ base http.RoundTripper }

// maxCommitBody bounds the commit body read into memory to be completed; a
// larger body passes unchanged.
const maxCommitBody = 64 << 20

func (t *compatTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || req.Body == nil || !strings.Contains(req.URL.Path, "/tables/") ||
		req.ContentLength <= 0 || req.ContentLength > maxCommitBody {
		return t.base.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	if out, ok := withLastColumnIDs(body); ok {
		body = out
	}
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return t.base.RoundTrip(r)
}

// withLastColumnIDs returns body (a commit request) with last-column-id set
// on each add-schema update that lacks it, and whether it changed anything.
func withLastColumnIDs(body []byte) ([]byte, bool) {
	if !bytes.Contains(body, []byte(`"add-schema"`)) {
		return nil, false
	}
	var doc map[string]json.RawMessage
	if json.Unmarshal(body, &doc) != nil {
		return nil, false
	}
	var updates []map[string]json.RawMessage
	if json.Unmarshal(doc["updates"], &updates) != nil {
		return nil, false
	}
	// The table's last column id may be above the new schema's highest
	// (its highest column was dropped); the commit then asserts it.
	var reqs []struct {
		Type string `json:"type"`
		Last *int   `json:"last-assigned-field-id"`
	}
	last := 0
	if doc["requirements"] != nil && json.Unmarshal(doc["requirements"], &reqs) == nil {
		for _, r := range reqs {
			if r.Type == "assert-last-assigned-field-id" && r.Last != nil {
				last = *r.Last
			}
		}
	}
	changed := false
	for _, u := range updates {
		var action string
		if json.Unmarshal(u["action"], &action) != nil || action != "add-schema" || u["last-column-id"] != nil {
			continue
		}
		var schema any
		if json.Unmarshal(u["schema"], &schema) != nil {
			continue
		}
		id, _ := json.Marshal(max(highestFieldID(schema), last))
		u["last-column-id"] = id
		changed = true
	}
	if !changed {
		return nil, false
	}
	raw, err := json.Marshal(updates)
	if err != nil {
		return nil, false
	}
	doc["updates"] = raw
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, false
	}
	return out, true
}

// highestFieldID is the largest field id anywhere in a schema's JSON form:
// struct fields' "id", and lists' and maps' "element-id", "key-id" and
// "value-id".
func highestFieldID(v any) int {
	best := 0
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if n, ok := e.(float64); ok && (k == "id" || k == "element-id" || k == "key-id" || k == "value-id") {
				best = max(best, int(n))
			}
			best = max(best, highestFieldID(e))
		}
	case []any:
		for _, e := range x {
			best = max(best, highestFieldID(e))
		}
	}
	return best
}
