package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/pyiceberg-go/pyiceberg-go/core/commit"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// fakeREST is a minimal REST catalog: config, namespace HEAD, create
// (staged or not) and commit, answering commits with commitStatus.
type fakeREST struct {
	t            *testing.T
	mu           sync.Mutex
	commitStatus int
	requests     []string
	createBodies []map[string]any
	commitBodies []map[string]any
	headers      []http.Header
	meta         table.Metadata
	location     string // of created tables; /tmp/wh/ns.db/t if empty
	missingNS    bool   // namespace ns does not exist until created
}

func (f *fakeREST) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	f.requests = append(f.requests, r.Method+" "+r.URL.Path)
	f.headers = append(f.headers, r.Header.Clone())
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.URL.Path == "/v1/config":
		_, _ = w.Write([]byte(`{"defaults":{},"overrides":{}}`))
	case r.Method == http.MethodPost && r.URL.Path == "/v1/namespaces":
		f.missingNS = false
		_, _ = w.Write([]byte(`{"namespace":["ns"],"properties":{}}`))
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/namespaces/ns/tables"):
		var doc map[string]any
		_ = json.Unmarshal(body, &doc)
		f.createBodies = append(f.createBodies, doc)
		if f.missingNS {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":{"message":"no namespace ns","type":"NoSuchNamespaceException","code":404}}`))
			return
		}
		loc := f.location
		if loc == "" {
			loc = "/tmp/wh/ns.db/t"
		}
		if l, ok := doc["location"].(string); ok && l != "" {
			loc = l
		}
		sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64})
		md, err := table.NewMetadataWithUUID(sc, iceberg.UnpartitionedSpec, table.UnsortedSortOrder, loc, nil, uuid.New())
		if err != nil {
			f.t.Error(err)
		}
		f.meta = md
		writeLoad(w, md)
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/namespaces/ns/tables/t") && f.meta != nil:
		writeLoad(w, f.meta)
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/namespaces/ns/tables/t"):
		var doc map[string]any
		_ = json.Unmarshal(body, &doc)
		f.commitBodies = append(f.commitBodies, doc)
		if f.commitStatus != http.StatusOK {
			w.WriteHeader(f.commitStatus)
			_, _ = w.Write([]byte(`{"error":{"message":"nope","type":"CommitFailedException","code":409}}`))
			return
		}
		writeLoad(w, f.meta)
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":{"message":"not found","type":"NoSuchTableException","code":404}}`))
	}
}

func writeLoad(w http.ResponseWriter, md table.Metadata) {
	raw, _ := json.Marshal(md)
	_ = json.NewEncoder(w).Encode(map[string]any{"metadata-location": "/tmp/wh/ns.db/t/metadata/00000.metadata.json", "metadata": json.RawMessage(raw)})
}

func openFake(t *testing.T, f *fakeREST, extra map[string]string) *Catalog {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	props := map[string]string{"type": "rest", "uri": srv.URL, "warehouse": "/tmp/wh"}
	for k, v := range extra {
		props[k] = v
	}
	c, err := Open(context.Background(), "r", props)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// createUpdates are the updates a create-by-commit carries, as core/write
// builds them: uuid, format version, schema, removal of the placeholder
// schema, spec, sort order, location, properties, and the first snapshot
// (without manifests).
func createUpdates() []table.Update {
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64})
	return []table.Update{
		table.NewAssignUUIDUpdate(uuid.New()),
		table.NewUpgradeFormatVersionUpdate(2),
		table.NewAddSchemaUpdate(sc),
		table.NewSetCurrentSchemaUpdate(-1),
		table.NewRemoveSchemasUpdate([]int{0}),
		table.NewAddPartitionSpecUpdate(iceberg.UnpartitionedSpec, true),
		table.NewSetDefaultSpecUpdate(-1),
		table.NewAddSortOrderUpdate(&table.UnsortedSortOrder),
		table.NewSetDefaultSortOrderUpdate(-1),
		table.NewSetLocationUpdate("/tmp/wh/ns.db/t"),
		table.NewSetPropertiesUpdate(iceberg.Properties{"k": "v"}),
		table.NewAddSnapshotUpdate(&table.Snapshot{SnapshotID: 7, SequenceNumber: 1, TimestampMs: 1, Summary: &table.Summary{Operation: table.OpAppend}}),
		table.NewSetSnapshotRefUpdate(table.MainBranch, 7, table.BranchRef, -1, -1, -1),
	}
}

func TestCreateByCommitIsAStagedCreate(t *testing.T) {
	f := &fakeREST{t: t, commitStatus: http.StatusOK}
	c := openFake(t, f, map[string]string{"header.X-Trace": "abc"})
	_, _, err := c.CommitTable(context.Background(), table.Identifier{"ns", "t"}, []table.Requirement{table.AssertCreate()}, createUpdates())
	if err != nil {
		t.Fatal(err)
	}
	if len(f.createBodies) != 1 || f.createBodies[0]["stage-create"] != true {
		t.Fatalf("want one stage-create request, got %v", f.createBodies)
	}
	if got := f.createBodies[0]["location"]; got != "/tmp/wh/ns.db/t" {
		t.Errorf("staged location %v", got)
	}
	props, _ := f.createBodies[0]["properties"].(map[string]any)
	if props["k"] != "v" || props["format-version"] != "2" {
		t.Errorf("staged properties %v", props)
	}
	if len(f.commitBodies) != 1 {
		t.Fatalf("want one commit, got %d", len(f.commitBodies))
	}
	reqs, _ := json.Marshal(f.commitBodies[0]["requirements"])
	if !strings.Contains(string(reqs), `"assert-create"`) {
		t.Errorf("commit requirements %s", reqs)
	}
	ups, _ := json.Marshal(f.commitBodies[0]["updates"])
	if strings.Contains(string(ups), "remove-schemas") {
		t.Errorf("the placeholder schema removal must not reach the server: %s", ups)
	}
	for _, h := range f.headers {
		if h.Get("X-Trace") != "abc" {
			t.Errorf("custom header missing: %v", h)
		}
	}
}

// actions lists the actions of a commit body's updates.
func actions(t *testing.T, body map[string]any) []string {
	t.Helper()
	ups, _ := body["updates"].([]any)
	var out []string
	for _, u := range ups {
		m, _ := u.(map[string]any)
		a, _ := m["action"].(string)
		out = append(out, a)
	}
	return out
}

func count(xs []string, x string) int {
	n := 0
	for _, y := range xs {
		if y == x {
			n++
		}
	}
	return n
}

// The staged create's commit names the schema, spec and sort order once
// each (iceberg-go repeats the staged ones) and its add-schema carries
// last-column-id; a sorted create stages its order.
func TestStagedCreateAddsEachShapeOnceWithLastColumnID(t *testing.T) {
	f := &fakeREST{t: t, commitStatus: http.StatusOK}
	c := openFake(t, f, nil)
	ups := createUpdates()
	order, err := table.NewSortOrder(1, []table.SortField{{SourceIDs: []int{1}, Transform: iceberg.IdentityTransform{}, Direction: table.SortDESC, NullOrder: table.NullsLast}})
	if err != nil {
		t.Fatal(err)
	}
	ups[7] = table.NewAddSortOrderUpdate(&order)
	if _, _, err := c.CommitTable(context.Background(), table.Identifier{"ns", "t"}, []table.Requirement{table.AssertCreate()}, ups); err != nil {
		t.Fatal(err)
	}
	if len(f.commitBodies) != 1 {
		t.Fatalf("want one commit, got %d", len(f.commitBodies))
	}
	acts := actions(t, f.commitBodies[0])
	for _, a := range []string{"add-schema", "set-current-schema", "add-spec", "set-default-spec", "add-sort-order", "set-default-sort-order"} {
		if count(acts, a) != 1 {
			t.Errorf("%s %d times in %v", a, count(acts, a), acts)
		}
	}
	for _, u := range f.commitBodies[0]["updates"].([]any) {
		m := u.(map[string]any)
		if m["action"] == "add-schema" && m["last-column-id"] != float64(1) {
			t.Errorf("add-schema without last-column-id 1: %v", m)
		}
	}
	wo, _ := f.createBodies[0]["write-order"].(map[string]any)
	if fs, _ := wo["fields"].([]any); len(fs) != 1 {
		t.Errorf("the sort order is not staged: %v", f.createBodies[0]["write-order"])
	}
}

func TestLastColumnIDIsTheHighestNestedID(t *testing.T) {
	body := `{"requirements":[],"updates":[{"action":"add-schema","schema":{"type":"struct","schema-id":3,"fields":[
		{"id":1,"name":"a","required":false,"type":"long"},
		{"id":2,"name":"m","required":false,"type":{"type":"map","key-id":7,"key":"string","value-id":9,"value":{"type":"list","element-id":12,"element":"int","element-required":false}}},
		{"id":4,"name":"s","required":false,"type":{"type":"struct","fields":[{"id":5,"name":"x","required":false,"type":"int"}]}}]}},
		{"action":"add-schema","last-column-id":40,"schema":{"type":"struct","schema-id":4,"fields":[]}},
		{"action":"set-current-schema","schema-id":-1}]}`
	out, ok := withLastColumnIDs([]byte(body))
	if !ok {
		t.Fatal("nothing changed")
	}
	var doc struct {
		Updates []map[string]any `json:"updates"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Updates[0]["last-column-id"] != float64(12) || doc.Updates[1]["last-column-id"] != float64(40) || doc.Updates[2]["schema-id"] != float64(-1) {
		t.Errorf("got %s", out)
	}
	// A dropped highest column: the table's asserted last id stands.
	out, ok = withLastColumnIDs([]byte(`{"requirements":[{"type":"assert-last-assigned-field-id","last-assigned-field-id":7}],
		"updates":[{"action":"add-schema","schema":{"type":"struct","schema-id":2,"fields":[{"id":1,"name":"a","required":false,"type":"long"}]}}]}`))
	if !ok || !strings.Contains(string(out), `"last-column-id":7`) {
		t.Errorf("a dropped column's id was not kept: %s", out)
	}
	if _, ok := withLastColumnIDs([]byte(`{"updates":[{"action":"set-properties","updates":{}}]}`)); ok {
		t.Error("a body without add-schema changed")
	}
}

func TestCommitErrorsAreTyped(t *testing.T) {
	ident := table.Identifier{"ns", "t"}
	reqs := []table.Requirement{table.AssertTableUUID(uuid.New())}
	for _, tc := range []struct {
		status int
		kind   error
	}{
		{http.StatusConflict, errs.ErrCommitConflict},
		{http.StatusInternalServerError, errs.ErrCommitStateUnknown},
		{http.StatusBadGateway, errs.ErrCommitStateUnknown},
		{http.StatusUnauthorized, errs.ErrInvalidArgument},
	} {
		f := &fakeREST{t: t, commitStatus: tc.status}
		c := openFake(t, f, nil)
		_, _, err := c.CommitTable(context.Background(), ident, reqs, nil)
		if !errors.Is(err, tc.kind) {
			t.Errorf("status %d: got %v, want %v", tc.status, err, tc.kind)
		}
		if conflict := commit.IsConflict(err); conflict != (tc.status == http.StatusConflict) {
			t.Errorf("status %d: commit.IsConflict=%v", tc.status, conflict)
		}
	}
}

func TestServerGoneIsIOErrorWithoutSecrets(t *testing.T) {
	f := &fakeREST{t: t, commitStatus: http.StatusOK}
	srv := httptest.NewServer(f)
	props := map[string]string{"type": "rest", "uri": srv.URL, "token": "tok-very-secret-123", "s3.secret-access-key": "sk-hush-456"}
	c, err := Open(context.Background(), "r", props)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	srv.Close()
	_, err = c.LoadTable(context.Background(), table.Identifier{"ns", "t"})
	if !errors.Is(err, errs.ErrIO) {
		t.Fatalf("got %v, want an i/o error", err)
	}
	var oe *net.OpError
	if !errors.As(err, &oe) {
		t.Errorf("the cause is lost: %v", err)
	}
	// A refused connection never reached the server: the commit surely did not happen.
	_, _, err = c.CommitTable(context.Background(), table.Identifier{"ns", "t"}, nil, nil)
	if !errors.Is(err, errs.ErrIO) || errors.Is(err, errs.ErrCommitStateUnknown) {
		t.Fatalf("commit to a stopped server: %v", err)
	}
	// Opening fails typed, and the token given does not show.
	props["uri"] = srv.URL
	_, err = Open(context.Background(), "r", props)
	if !errors.Is(err, errs.ErrIO) {
		t.Fatalf("open against a stopped server: %v", err)
	}
	for _, s := range []string{"tok-very-secret-123", "sk-hush-456"} {
		if strings.Contains(err.Error(), s) || strings.Contains(Redact("x "+s), s) {
			t.Errorf("secret %q not scrubbed: %v", s, err)
		}
	}
}

func TestOpenRejectsBadRESTConfig(t *testing.T) {
	for _, props := range []map[string]string{
		{"type": "rest", "uri": "ftp://x"},
		{"type": "rest", "uri": "http://user:pw-secret@127.0.0.1:1"},
		{"type": "rest", "uri": "http://127.0.0.1:1", "oauth2-server-uri": "no-scheme"},
		{"type": "rest", "uri": "http://127.0.0.1:1", "s3.path-style-access": "maybe"},
	} {
		_, err := Open(context.Background(), "r", props)
		if !errors.Is(err, errs.ErrInvalidArgument) {
			t.Errorf("%v: got %v, want invalid argument", props, err)
		}
		if err != nil && strings.Contains(err.Error(), "pw-secret") {
			t.Errorf("password in the uri leaked: %v", err)
		}
	}
}

func TestDefaultLocationFromTheServer(t *testing.T) {
	ident := table.Identifier{"ns", "t"}
	for _, tc := range []struct {
		warehouse string
		missingNS bool
	}{{"", false}, {"prod_warehouse", false}, {"", true}} {
		f := &fakeREST{t: t, commitStatus: http.StatusOK, location: "s3://server-bucket/chosen/" + uuid.NewString() + "/", missingNS: tc.missingNS}
		c := openFake(t, f, map[string]string{"warehouse": tc.warehouse})
		loc, ok, err := c.DefaultLocation(context.Background(), ident)
		if err != nil || !ok {
			t.Fatalf("%+v: got %q %v %v", tc, loc, ok, err)
		}
		if want := strings.TrimSuffix(f.location, "/"); loc != want {
			t.Errorf("%+v: location %q, want the server's %q", tc, loc, want)
		}
		want := 1
		if tc.missingNS {
			want = 2 // refused, then planned after the namespace was made
		}
		if len(f.createBodies) != want || f.createBodies[want-1]["stage-create"] != true {
			t.Errorf("%+v: want %d stage-create requests, got %v", tc, want, f.createBodies)
		}
		if len(f.commitBodies) != 0 {
			t.Errorf("%+v: a location probe must publish nothing, got commits %v", tc, f.commitBodies)
		}
		if tc.missingNS && f.missingNS {
			t.Errorf("the namespace was not created")
		}
	}
}

func TestDefaultLocationLeftToAWarehousePath(t *testing.T) {
	for _, wh := range []string{"/tmp/wh", "s3://bucket/wh", "file:///tmp/wh"} {
		f := &fakeREST{t: t, commitStatus: http.StatusOK}
		c := openFake(t, f, map[string]string{"warehouse": wh})
		before := len(f.requests)
		_, ok, err := c.DefaultLocation(context.Background(), table.Identifier{"ns", "t"})
		if err != nil || ok {
			t.Errorf("%s: got ok=%v err=%v, want the client's layout", wh, ok, err)
		}
		if len(f.requests) != before {
			t.Errorf("%s: asked the server: %v", wh, f.requests[before:])
		}
	}
	// The SQL catalog always uses its warehouse layout.
	c, err := Open(context.Background(), "s", map[string]string{"type": "sql", "uri": "sqlite:///" + t.TempDir() + "/c.db", "warehouse": t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok, err := c.DefaultLocation(context.Background(), table.Identifier{"ns", "t"}); ok || err != nil {
		t.Errorf("sql: ok=%v err=%v", ok, err)
	}
}

func TestDefaultLocationErrorsAreTyped(t *testing.T) {
	f := &fakeREST{t: t, commitStatus: http.StatusOK}
	c := openFake(t, f, map[string]string{"warehouse": ""})
	_, _, err := c.DefaultLocation(context.Background(), table.Identifier{"other", "t"})
	if !errors.Is(err, errs.ErrNoSuchNamespace) {
		t.Fatalf("got %v, want a no-such-namespace error", err)
	}
	if !strings.Contains(err.Error(), "other.t") {
		t.Errorf("the error does not name the table: %v", err)
	}
}

func TestReaddedSchemaAndOrderAreNamedByID(t *testing.T) {
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	md, err := table.NewMetadataWithUUID(sc, iceberg.UnpartitionedSpec, table.UnsortedSortOrder, "/tmp/wh/ns.db/t", nil, uuid.New())
	if err != nil {
		t.Fatal(err)
	}
	wider := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "v", Type: iceberg.PrimitiveTypes.String})
	for _, tc := range []struct {
		schema     *iceberg.Schema
		wantSchema float64
	}{{sc, 0}, {wider, -1}} {
		f := &fakeREST{t: t, commitStatus: http.StatusOK, meta: md}
		c := openFake(t, f, nil)
		updates := []table.Update{
			table.NewAddSchemaUpdate(tc.schema), table.NewSetCurrentSchemaUpdate(-1),
			table.NewAddSortOrderUpdate(&table.UnsortedSortOrder), table.NewSetDefaultSortOrderUpdate(-1),
		}
		reqs := []table.Requirement{table.AssertTableUUID(md.TableUUID())}
		if _, _, err := c.CommitTable(context.Background(), table.Identifier{"ns", "t"}, reqs, updates); err != nil {
			t.Fatal(err)
		}
		if len(f.commitBodies) != 1 {
			t.Fatalf("want one commit, got %d", len(f.commitBodies))
		}
		got := map[string]float64{}
		for _, u := range f.commitBodies[0]["updates"].([]any) {
			m := u.(map[string]any)
			switch m["action"] {
			case "set-current-schema":
				got["schema"] = m["schema-id"].(float64)
			case "set-default-sort-order":
				got["order"] = m["sort-order-id"].(float64)
			}
		}
		// A re-added schema or order is named by its id; a new schema stays "the last added".
		if got["schema"] != tc.wantSchema || got["order"] != 0 {
			t.Errorf("schema %v: sent %v", tc.schema, got)
		}
	}
}
