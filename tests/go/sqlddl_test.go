package gotests

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/expr"
	"github.com/pyiceberg-go/pyiceberg-go/core/ops"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/session"
	"github.com/pyiceberg-go/pyiceberg-go/core/sqlstmt"
)

func runSQL(t testing.TB, s *session.Session, stmt string) (map[string]any, error) {
	t.Helper()
	doc, _ := json.Marshal(map[string]string{"op": "sql", "sql": stmt})
	req, err := request.Decode(doc)
	if err != nil {
		return nil, err
	}
	res, err := ops.Execute(ctxT(t), s, req, nil, nil)
	if err != nil {
		return nil, err
	}
	return res.(map[string]any), nil
}

func mustSQL(t testing.TB, s *session.Session, stmt string) map[string]any {
	t.Helper()
	res, err := runSQL(t, s, stmt)
	if err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
	return res
}

func loadMeta(t testing.TB, s *session.Session, name string) table.Metadata {
	t.Helper()
	tb, err := ops.LoadTable(ctxT(t), s, name)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return tb.Metadata()
}

func TestSQLCreateTableMatchesSparksSchemaAndSpec(t *testing.T) {
	s := newEnv(t).session(t)
	mustSQL(t, s, `CREATE TABLE local.db.t (
		id bigint NOT NULL COMMENT 'the key',
		ts timestamp,
		name string,
		point struct<x: double, y double NOT NULL>,
		tags array<string>,
		attrs map<string, int>,
		price decimal(12, 2),
		items array<struct<a: int, b: string NOT NULL>>
	) USING iceberg PARTITIONED BY (days(ts), bucket(16, id), truncate(name, 4))
	COMMENT 'sales' TBLPROPERTIES ('format-version' = '2', 'write.target-file-size-bytes' = 1024, owner.team = 'ops')`)
	m := loadMeta(t, s, "local.db.t")
	if m.CurrentSnapshot() != nil {
		t.Fatalf("CREATE TABLE made a snapshot")
	}
	sc := m.CurrentSchema()
	// Java's TypeUtil.assignFreshIds: top-level fields first, then nested;
	// partition fields named as Java's PartitionSpec.Builder names them.
	want := map[string]int{"id": 1, "ts": 2, "name": 3, "point": 4, "tags": 5, "attrs": 6, "price": 7, "items": 8, "point.x": 9, "point.y": 10,
		"tags.element": 11, "attrs.key": 12, "attrs.value": 13, "items.element": 14, "items.element.a": 15, "items.element.b": 16}
	for name, id := range want {
		if f := fieldOf(t, sc, name); f.ID != id {
			t.Errorf("%s has id %d, want %d (schema %s)", name, f.ID, id, sc)
		}
	}
	if f := fieldOf(t, sc, "id"); !f.Required || f.Doc != "the key" || !f.Type.Equals(iceberg.PrimitiveTypes.Int64) {
		t.Errorf("id is %+v", f)
	}
	if f := fieldOf(t, sc, "ts"); !f.Type.Equals(iceberg.PrimitiveTypes.TimestampTz) {
		t.Errorf("Spark's timestamp is timestamptz, got %s", f.Type)
	}
	if f := fieldOf(t, sc, "point.y"); !f.Required {
		t.Errorf("point.y should be required")
	}
	spec := m.PartitionSpec()
	var got []string
	for _, pf := range spec.Fields() {
		got = append(got, pf.Name+"="+pf.Transform.String())
	}
	if strings.Join(got, ",") != "ts_day=day,id_bucket=bucket[16],name_trunc=truncate[4]" {
		t.Errorf("spec %v", got)
	}
	if m.Properties()["comment"] != "sales" || m.Properties()["write.target-file-size-bytes"] != "1024" || m.Properties()["owner.team"] != "ops" {
		t.Errorf("properties %v", m.Properties())
	}
	// CREATE again fails typed; IF NOT EXISTS does nothing.
	if _, err := runSQL(t, s, "CREATE TABLE local.db.t (a int)"); !errors.Is(err, errs.ErrTableAlreadyExists) {
		t.Fatalf("second CREATE: %v", err)
	}
	res := mustSQL(t, s, "CREATE TABLE IF NOT EXISTS local.db.t (a int) USING iceberg")
	if res["result"].(map[string]any)["created"] != false {
		t.Fatalf("IF NOT EXISTS result %v", res)
	}
	if len(loadMeta(t, s, "local.db.t").CurrentSchema().Fields()) != 8 {
		t.Fatalf("IF NOT EXISTS changed the table")
	}
}

func TestSQLAlterTableEvolvesSchemaSpecOrderAndProperties(t *testing.T) {
	s := newEnv(t).session(t)
	mustSQL(t, s, "CREATE TABLE local.db.t (id bigint NOT NULL, ts timestamp, cat string, v int) USING iceberg PARTITIONED BY (cat)")
	for _, stmt := range []string{
		"ALTER TABLE local.db.t ADD COLUMN channel string COMMENT 'where' AFTER id",
		"ALTER TABLE local.db.t ADD COLUMNS (geo struct<lat: double, lon: double>, n int FIRST)",
		"ALTER TABLE local.db.t ADD COLUMN geo.alt double",
		"ALTER TABLE local.db.t RENAME COLUMN cat TO category",
		"ALTER TABLE local.db.t ALTER COLUMN v TYPE bigint",
		"ALTER TABLE local.db.t ALTER COLUMN id COMMENT 'key'",
		"ALTER TABLE local.db.t ALTER COLUMN ts AFTER n",
		"ALTER TABLE local.db.t SET TBLPROPERTIES ('a' = 'x', 'b' = 'y')",
		"ALTER TABLE local.db.t UNSET TBLPROPERTIES ('b')",
		"ALTER TABLE local.db.t ADD PARTITION FIELD bucket(8, id) AS shard",
		"ALTER TABLE local.db.t REPLACE PARTITION FIELD category WITH days(ts)",
		"ALTER TABLE local.db.t DROP PARTITION FIELD shard",
		"ALTER TABLE local.db.t WRITE ORDERED BY category DESC NULLS LAST, id",
		"ALTER TABLE local.db.t SET IDENTIFIER FIELDS id",
		"ALTER TABLE local.db.t DROP COLUMN channel",
	} {
		mustSQL(t, s, stmt)
	}
	m := loadMeta(t, s, "local.db.t")
	sc := m.CurrentSchema()
	var names []string
	for _, f := range sc.Fields() {
		names = append(names, f.Name)
	}
	if strings.Join(names, ",") != "n,ts,id,category,v,geo" {
		t.Errorf("columns %v", names)
	}
	if f := fieldOf(t, sc, "v"); !f.Type.Equals(iceberg.PrimitiveTypes.Int64) {
		t.Errorf("v is %s", f.Type)
	}
	if f := fieldOf(t, sc, "id"); f.Doc != "key" {
		t.Errorf("id doc %q", f.Doc)
	}
	fieldOf(t, sc, "geo.alt")
	if len(sc.IdentifierFieldIDs) != 1 || sc.IdentifierFieldIDs[0] != fieldOf(t, sc, "id").ID {
		t.Errorf("identifier fields %v", sc.IdentifierFieldIDs)
	}
	var spec []string
	cur := m.PartitionSpec()
	for _, pf := range cur.Fields() {
		spec = append(spec, pf.Name+"="+pf.Transform.String())
	}
	// Format v2 keeps removed fields as void transforms.
	if !strings.Contains(strings.Join(spec, ","), "ts_day=day") || strings.Contains(strings.Join(spec, ","), "shard=bucket") {
		t.Errorf("spec %v", spec)
	}
	if p := m.Properties(); p["a"] != "x" || p["b"] != "" || p["write.distribution-mode"] != "range" {
		t.Errorf("properties %v", p)
	}
	if so := m.SortOrder(); so.Len() != 2 || so.Field(0).Direction != table.SortDESC || so.Field(0).NullOrder != table.NullsLast {
		t.Errorf("sort order %v", so)
	}
	mustSQL(t, s, "ALTER TABLE local.db.t DROP IDENTIFIER FIELDS id")
	if ids := loadMeta(t, s, "local.db.t").CurrentSchema().IdentifierFieldIDs; len(ids) != 0 {
		t.Errorf("identifier fields after DROP: %v", ids)
	}
	mustSQL(t, s, "ALTER TABLE local.db.t WRITE LOCALLY ORDERED BY id")
	if p := loadMeta(t, s, "local.db.t").Properties(); p["write.distribution-mode"] != "range" {
		t.Errorf("LOCALLY ORDERED BY changed the distribution mode: %v", p)
	}
	mustSQL(t, s, "ALTER TABLE local.db.t WRITE DISTRIBUTED BY PARTITION")
	if m := loadMeta(t, s, "local.db.t"); m.Properties()["write.distribution-mode"] != "hash" || m.SortOrder().Len() != 0 {
		t.Errorf("DISTRIBUTED BY PARTITION: %v %v", m.Properties(), m.SortOrder())
	}
	mustSQL(t, s, "ALTER TABLE local.db.t WRITE UNORDERED")
	if p := loadMeta(t, s, "local.db.t").Properties(); p["write.distribution-mode"] != "none" {
		t.Errorf("UNORDERED: %v", p)
	}
}

func TestSQLBranchesTagsRenameDropAndNamespaces(t *testing.T) {
	s := newEnv(t).session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "local.db.t"}, rowsReader(t, 0, 10, 1))
	first := loadMeta(t, s, "local.db.t").CurrentSnapshot().SnapshotID
	mustWrite(t, s, request.Request{Op: request.OpAppend, Table: "local.db.t"}, rowsReader(t, 10, 10, 1))
	mustSQL(t, s, "ALTER TABLE local.db.t CREATE BRANCH audit RETAIN 7 DAYS WITH SNAPSHOT RETENTION 3 SNAPSHOTS 2 DAYS")
	mustSQL(t, s, "ALTER TABLE local.db.t CREATE TAG v1 AS OF VERSION "+itoa(first)+" RETAIN 365 DAYS")
	refs := loadMeta(t, s, "local.db.t").Refs()
	got := map[string]table.SnapshotRef{}
	for name, r := range refs {
		got[name] = r
	}
	a := got["audit"]
	if a.MaxRefAgeMs == nil || *a.MaxRefAgeMs != 7*86_400_000 || a.MinSnapshotsToKeep == nil || *a.MinSnapshotsToKeep != 3 ||
		a.MaxSnapshotAgeMs == nil || *a.MaxSnapshotAgeMs != 2*86_400_000 {
		t.Errorf("branch audit %+v", a)
	}
	if v := got["v1"]; v.SnapshotID != first || v.MaxRefAgeMs == nil || *v.MaxRefAgeMs != 365*86_400_000 {
		t.Errorf("tag v1 %+v", v)
	}
	if _, err := runSQL(t, s, "ALTER TABLE local.db.t CREATE BRANCH audit"); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Errorf("second CREATE BRANCH: %v", err)
	}
	mustSQL(t, s, "ALTER TABLE local.db.t CREATE BRANCH IF NOT EXISTS audit")
	// REPLACE keeps the retention it does not set.
	mustSQL(t, s, "ALTER TABLE local.db.t REPLACE BRANCH audit AS OF VERSION "+itoa(first))
	if r := refOf(t, s, "local.db.t", "audit"); r.SnapshotID != first || r.MinSnapshotsToKeep == nil || *r.MinSnapshotsToKeep != 3 {
		t.Errorf("replaced branch %+v", r)
	}
	if _, err := runSQL(t, s, "ALTER TABLE local.db.t REPLACE TAG nope AS OF VERSION "+itoa(first)); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Errorf("REPLACE of a missing tag: %v", err)
	}
	mustSQL(t, s, "ALTER TABLE local.db.t CREATE OR REPLACE TAG nope AS OF VERSION "+itoa(first))
	mustSQL(t, s, "ALTER TABLE local.db.t DROP TAG nope")
	mustSQL(t, s, "ALTER TABLE local.db.t DROP TAG IF EXISTS nope")
	if _, err := runSQL(t, s, "ALTER TABLE local.db.t DROP BRANCH nope"); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Errorf("DROP of a missing branch: %v", err)
	}

	mustSQL(t, s, "CREATE NAMESPACE IF NOT EXISTS local.other COMMENT 'x'")
	if _, err := runSQL(t, s, "CREATE NAMESPACE local.other"); err == nil {
		t.Errorf("second CREATE NAMESPACE succeeded")
	}
	mustSQL(t, s, "ALTER TABLE local.db.t RENAME TO local.other.u")
	if _, err := ops.LoadTable(ctxT(t), s, "local.db.t"); !errors.Is(err, errs.ErrNoSuchTable) {
		t.Errorf("old name still loads: %v", err)
	}
	dir := loadMeta(t, s, "local.other.u").Location()
	res := mustSQL(t, s, "DROP TABLE local.other.u PURGE")
	if n := res["result"]; n == nil {
		t.Fatalf("no purge result")
	}
	if files := listFiles(t, dir); len(files) != 0 {
		t.Errorf("PURGE left %d files: %v", len(files), files)
	}
	if _, err := runSQL(t, s, "DROP TABLE local.other.u"); !errors.Is(err, errs.ErrNoSuchTable) {
		t.Errorf("DROP of a dropped table: %v", err)
	}
	mustSQL(t, s, "DROP TABLE IF EXISTS local.other.u")
}

func TestSQLErrorsNamePositionsAndCommitNothing(t *testing.T) {
	s := newEnv(t).session(t)
	mustSQL(t, s, "CREATE TABLE local.db.t (id bigint, ts timestamp) USING iceberg PARTITIONED BY (days(ts))")
	before := loadMeta(t, s, "local.db.t").LastUpdatedMillis()
	for _, c := range []struct {
		stmt string
		kind error
		pos  int // 0: not a syntax error
		msg  string
	}{
		{"ALTER TABLE local.db.t ADD COLUMN x intt", errs.ErrInvalidArgument, 37, "unknown type"},
		{"ALTER TABLE local.db.t ADD COLUMN", errs.ErrInvalidArgument, 34, "expected a column"},
		{"CREATE TABLE local.db.u (a int,)", errs.ErrInvalidArgument, 32, "expected a field name"},
		{"CREATE TABLE local.db.u (a int) USING parquet", errs.ErrNotSupported, 0, "only iceberg"},
		{"CREATE TABLE local.db.u (a int, A string)", errs.ErrInvalidArgument, 0, "duplicate column"},
		{"CREATE TABLE local.db.u (a int) PARTITIONED BY (bucket(a))", errs.ErrInvalidArgument, 49, "not a partition transform"},
		{"CREATE TABLE local.db.u (a int) PARTITIONED BY (b)", errs.ErrValidation, 0, ""},
		{"ALTER TABLE local.db.t RENAME COLUMN nope TO x", errs.ErrInvalidArgument, 0, "nope"},
		{"ALTER TABLE local.db.t ALTER COLUMN id TYPE int", errs.ErrInvalidArgument, 0, ""},
		{"ALTER TABLE local.db.t DROP COLUMN ts", errs.ErrInvalidArgument, 0, "partition field"},
		{"ALTER TABLE local.db.t DROP PARTITION FIELD bucket(4, id)", errs.ErrInvalidArgument, 0, "Cannot find partition field"},
		{"ALTER TABLE local.db.t DROP IDENTIFIER FIELDS id", errs.ErrInvalidArgument, 0, "not found"},
		{"ALTER TABLE local.db.t WRITE", errs.ErrInvalidArgument, 24, "missing distribution and ordering"},
		{"ALTER TABLE local.db.t CREATE BRANCH b RETAIN 3 WEEKS", errs.ErrInvalidArgument, 49, "DAYS, HOURS or MINUTES"},
		{"ALTER TABLE local.db.t SET TBLPROPERTIES ('a' = )", errs.ErrInvalidArgument, 49, "value of property"},
		{"SELECT 1", errs.ErrNotSupported, 0, "SELECT of expressions"},
		{"TRUNCATE TABLE local.db.t", errs.ErrNotSupported, 0, "statement"},
		{"DROP TABLE t", errs.ErrInvalidArgument, 0, "needs a namespace"},
		{"ALTER TABLE local.db.t ADD COLUMN x int; DROP TABLE local.db.t", errs.ErrInvalidArgument, 40, "after the end"},
		{"ALTER TABLE local.db.nope ADD COLUMN x int", errs.ErrNoSuchTable, 0, ""},
	} {
		_, err := runSQL(t, s, c.stmt)
		if !errors.Is(err, c.kind) {
			t.Errorf("%s: got %v, want %v", c.stmt, err, c.kind)
			continue
		}
		if c.msg != "" && !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v does not mention %q", c.stmt, err, c.msg)
		}
		if c.pos > 0 {
			var e *expr.Error
			if !errors.As(err, &e) || e.Pos != c.pos || !strings.Contains(err.Error(), "invalid statement") {
				t.Errorf("%s: %v is not a statement error at position %d", c.stmt, err, c.pos)
			}
		}
	}
	m := loadMeta(t, s, "local.db.t")
	if m.LastUpdatedMillis() != before || len(m.CurrentSchema().Fields()) != 2 {
		t.Errorf("a failed statement changed the table")
	}
	if _, err := ops.LoadTable(ctxT(t), s, "local.db.u"); !errors.Is(err, errs.ErrNoSuchTable) {
		t.Errorf("a failed CREATE left a table: %v", err)
	}
}

func TestSQLStatementsBecomeTheDocumentsTheyName(t *testing.T) {
	// Each statement is the request a caller would send: checked by the
	// same decoder, so the document and the statement cannot drift.
	for stmt, op := range map[string]string{
		"create table a.b (x int)":                    request.OpCreateTable,
		"REPLACE TABLE a.b (x int) USING iceberg;":    request.OpCreateTable,
		"create database if not exists a":             request.OpCreateNamespace,
		"ALTER TABLE a.b CHANGE COLUMN x TYPE bigint": request.OpUpdateTable,
		"ALTER TABLE a.b ALTER x DROP NOT NULL":       request.OpUpdateTable,
		"alter table `a`.`b c` drop columns (x, y)":   request.OpUpdateTable,
		"ALTER TABLE a.b DROP BRANCH IF EXISTS x":     request.OpRemoveBranch,
	} {
		st, err := sqlstmt.Parse(stmt, nil)
		if err != nil {
			t.Errorf("%s: %v", stmt, err)
			continue
		}
		doc, _ := json.Marshal(st.Request)
		r, err := request.Decode(doc)
		if err != nil || r.Op != op {
			t.Errorf("%s: %s -> %v %v", stmt, doc, r, err)
		}
	}
}

func itoa(v int64) string { b, _ := json.Marshal(v); return string(b) }

func refOf(t testing.TB, s *session.Session, name, ref string) table.SnapshotRef {
	t.Helper()
	for n, r := range loadMeta(t, s, name).Refs() {
		if n == ref {
			return r
		}
	}
	t.Fatalf("no ref %s", ref)
	return table.SnapshotRef{}
}

// listFiles lists the regular files under a table location (none when the
// folder is gone).
func listFiles(t testing.TB, loc string) []string {
	t.Helper()
	dir := strings.TrimPrefix(loc, "file://")
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return diskFiles(t, dir)
}

// A SELECT answers with the read document (not run here); a snapshot id
// keeps every digit (a map of any would have rounded it through float64).
func TestSQLSelectAnswersWithTheReadDocument(t *testing.T) {
	s := newEnv(t).session(t)
	mustWrite(t, s, request.Request{Op: request.OpCreate, Table: "local.db.t"}, rowsReader(t, 0, 10, 1))
	res := mustSQL(t, s, "SELECT id FROM local.db.t VERSION AS OF 1748168267040618241 WHERE id > 3")
	read, _ := json.Marshal(res["read"])
	if res["op"] != "scan" || string(read) != `{"op":"scan","table":"local.db.t","snapshot_id":1748168267040618241,"columns":["id"],"filter":"id \u003e 3"}` {
		t.Fatalf("SELECT: %v %s", res, read)
	}
	res = mustSQL(t, s, "SELECT * FROM local.db.t.files")
	if read, _ = json.Marshal(res["read"]); res["op"] != "inspect" || !strings.Contains(string(read), `"metadata_table":"files"`) {
		t.Fatalf("metadata table: %v %s", res, read)
	}
	for stmt, kind := range map[string]error{
		"SELECT id FROM local.db.t GROUP BY id":                errs.ErrNotSupported,
		"SELECT id + 1 FROM local.db.t":                        errs.ErrNotSupported,
		"SELECT * FROM local.db.t VERSION AS OF 1.5":           errs.ErrInvalidArgument,
		"SELECT * FROM local.db.t TIMESTAMP AS OF 'yesterday'": errs.ErrInvalidArgument,
		"SELECT * FROM local.db.t.files WHERE file_size > 1":   errs.ErrNotSupported,
		"SELECT * FROM local.db.t WHERE nope > 1":              nil, // bound when read, not here
	} {
		_, err := runSQL(t, s, stmt)
		if kind == nil && err != nil || kind != nil && !errors.Is(err, kind) {
			t.Errorf("%s: got %v, want %v", stmt, err, kind)
		}
	}
}

// A v1 table is created empty through the catalog (a create by commit
// starts from iceberg-go's v2 placeholder); with data, the writer says how.
func TestSQLCreatesV1TablesAndUpgradesThem(t *testing.T) {
	s := newEnv(t).session(t)
	mustSQL(t, s, "CREATE TABLE local.db.v1 (id bigint, name string, ts timestamp, cat string) USING iceberg PARTITIONED BY (days(ts)) TBLPROPERTIES ('format-version' = '1')")
	if m := loadMeta(t, s, "local.db.v1"); m.Version() != 1 || m.CurrentSchema().ID != 0 {
		t.Fatalf("v1 create: version %d, schema %d", m.Version(), m.CurrentSchema().ID)
	}
	mustWrite(t, s, request.Request{Op: request.OpAppend, Table: "local.db.v1"}, rowsReader(t, 0, 10, 1))
	mustSQL(t, s, "ALTER TABLE local.db.v1 SET TBLPROPERTIES ('format-version' = '2', 'k' = 'v')")
	if m := loadMeta(t, s, "local.db.v1"); m.Version() != 2 || m.Properties()["k"] != "v" || m.Properties()["format-version"] != "" {
		t.Fatalf("upgrade: version %d, properties %v", m.Version(), m.Properties())
	}
	if _, err := runSQL(t, s, "ALTER TABLE local.db.v1 SET TBLPROPERTIES ('format-version' = '1')"); !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), "Cannot downgrade v2 table to v1") {
		t.Fatalf("downgrade: %v", err)
	}
	_, err := write(ctxT(t), s, request.Request{Op: request.OpCreate, Table: "local.db.v1data", Properties: map[string]string{"format-version": "1"}}, rowsReader(t, 0, 10, 1))
	if !errors.Is(err, errs.ErrNotSupported) || !strings.Contains(err.Error(), "create it empty first") {
		t.Fatalf("v1 create with data: %v", err)
	}
}
