package gotests

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/expr"
	"github.com/pyiceberg-go/pyiceberg-go/core/ops"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/scan"
	"github.com/pyiceberg-go/pyiceberg-go/core/session"
	"github.com/pyiceberg-go/pyiceberg-go/core/sqlstmt"
)

// TestSQLDMLParsesIntoDocuments: each write statement becomes the builder
// API's document.
func TestSQLDMLParsesIntoDocuments(t *testing.T) {
	for _, c := range []struct{ stmt, doc string }{
		{"DELETE FROM db.t WHERE id = 1", `{"op":"delete","table":"db.t","filter":"id = 1"}`},
		{"DELETE FROM db.t", `{"op":"delete","table":"db.t","filter":"true"}`},
		{"delete from local.db.t AS a where a.id > 3 AND a.s.x IS NULL;", `{"op":"delete","table":"local.db.t","filter":"((id \u003e 3) AND (s.x IS NULL))"}`},
		{"DELETE FROM db.t t WHERE t.id = 1", `{"op":"delete","table":"db.t","filter":"(id = 1)"}`},
		{"UPDATE db.t SET v = v + 1, w = 'x' WHERE id < 3", `{"op":"update","table":"db.t","filter":"id \u003c 3","set":{"v":"v + 1","w":"'x'"}}`},
		{"UPDATE db.t AS u SET u.v = u.v * 2", `{"op":"update","table":"db.t","set":{"v":"(v * 2)"}}`},
		{"UPDATE db.t.branch_audit SET v = 0", `{"op":"update","table":"db.t.branch_audit","set":{"v":"0"}}`},
		{
			"MERGE INTO db.t t USING src s ON t.id = s.id WHEN MATCHED AND s.op = 'D' THEN DELETE WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
			`{"op":"merge","table":"db.t","merge":{"on":"t.id = s.id","source_alias":"s","target_alias":"t","clauses":[{"when":"matched","condition":"s.op = 'D'","action":"delete"},{"when":"matched","action":"update_all"},{"when":"not_matched","action":"insert_all"}]}}`,
		},
		{
			"MERGE INTO db.t USING src ON t.id = src.id WHEN MATCHED THEN UPDATE SET t.v = src.v WHEN NOT MATCHED BY TARGET AND src.v > 0 THEN INSERT (id, v) VALUES (src.id, src.v * 2) WHEN NOT MATCHED BY SOURCE THEN DELETE",
			`{"op":"merge","table":"db.t","merge":{"on":"t.id = src.id","source_alias":"src","clauses":[{"when":"matched","action":"update","set":{"v":"src.v"}},{"when":"not_matched","condition":"src.v \u003e 0","action":"insert","set":{"id":"src.id","v":"src.v * 2"}},{"when":"not_matched_by_source","action":"delete"}]}}`,
		},
		{"INSERT INTO db.t VALUES (1, 'a'), (2, NULL)", `{"op":"append","table":"db.t"}`},
		// One conjunct col IN (SELECT ...): a merge with the subquery's distinct values.
		{
			"DELETE FROM db.t AS d WHERE d.v BETWEEN 1 AND 5 AND d.id IN (SELECT id FROM u WHERE u.x = 'a') AND v > 0",
			`{"op":"merge","table":"db.t","merge":{"on":"d.id = __subquery.__k","source_alias":"__subquery","target_alias":"d","clauses":[{"when":"matched","condition":"(d.v BETWEEN 1 AND 5) AND (v \u003e 0)","action":"delete"}]}}`,
		},
		{
			"UPDATE db.t SET v = v + 1 WHERE id IN (SELECT id FROM u)",
			`{"op":"merge","table":"db.t","merge":{"on":"id = __subquery.__k","source_alias":"__subquery","target_alias":"t","clauses":[{"when":"matched","action":"update","set":{"v":"v + 1"}}]}}`,
		},
		{"INSERT OVERWRITE TABLE db.t PARTITION (p = 'a') SELECT * FROM v", `{"op":"append","table":"db.t"}`},
	} {
		st, err := sqlstmt.Parse(c.stmt, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.stmt, err)
		}
		got, _ := json.Marshal(st.Request)
		if string(got) != c.doc {
			t.Errorf("%s:\n got  %s\n want %s", c.stmt, got, c.doc)
		}
		// Every document is one the decoder accepts (INSERT's op is decided later).
		if _, err := request.Decode(got); err != nil && st.DML == nil {
			t.Errorf("%s: %v", c.stmt, err)
		}
	}
}

// TestSQLDMLSources: where an INSERT's or a MERGE's rows come from.
func TestSQLDMLSources(t *testing.T) {
	for _, c := range []struct{ stmt, kind, name, query string }{
		{"INSERT INTO db.t SELECT * FROM updates", sqlstmt.SourceView, "updates", ""},
		{"INSERT INTO db.t TABLE updates;", sqlstmt.SourceView, "updates", ""},
		{"INSERT INTO db.t (a, b) SELECT * FROM `my view`", sqlstmt.SourceView, "my view", ""},
		{"INSERT INTO db.t SELECT * FROM local.db.u", sqlstmt.SourceTable, "local.db.u", ""},
		{"INSERT INTO db.t SELECT id, v FROM updates WHERE v > 'it''s'", sqlstmt.SourceQuery, "", "SELECT id, v FROM updates WHERE v > 'it''s'"},
		{"INSERT INTO db.t (SELECT * FROM u);", sqlstmt.SourceQuery, "", "(SELECT * FROM u)"},
		{"MERGE INTO db.t USING (SELECT id FROM u) s ON t.id = s.id WHEN MATCHED THEN DELETE", sqlstmt.SourceQuery, "", "SELECT id FROM u"},
		{"MERGE INTO db.t USING db.u ON t.id = u.id WHEN MATCHED THEN DELETE", sqlstmt.SourceTable, "db.u", ""},
		{"INSERT INTO db.t VALUES 1, 2", sqlstmt.SourceValues, "", ""},
		{"DELETE FROM db.t WHERE id IN (SELECT id FROM u)", sqlstmt.SourceQuery, "", "SELECT DISTINCT __k FROM (SELECT id FROM u) AS __subquery_in(__k)"},
		// Time travel on a source table; a view has none, so it is an engine's query.
		{"INSERT INTO db.t SELECT * FROM local.db.u VERSION AS OF 'v1'", sqlstmt.SourceTable, "local.db.u", ""},
		{"INSERT INTO db.t SELECT * FROM u VERSION AS OF 3", sqlstmt.SourceQuery, "", "SELECT * FROM u VERSION AS OF 3"},
	} {
		st, err := sqlstmt.Parse(c.stmt, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.stmt, err)
		}
		s := st.DML.Source
		if s.Kind != c.kind || s.Name != c.name || s.Query != c.query {
			t.Errorf("%s: got %+v", c.stmt, s)
		}
	}
}

// TestSQLDMLSubqueryConditions: DELETE and UPDATE conditions with
// subqueries other than one col IN (SELECT ...) become a merge with a
// source the engine evaluates over the target's rows, keyed by every
// target column the subqueries name (struct fields as far as named; a
// struct used whole by its fields and its NULL-ness), joined null-safely.
func TestSQLDMLSubqueryConditions(t *testing.T) {
	schema := iceberg.NewSchema(1,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "Cat", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "s", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 5, Name: "x", Type: iceberg.PrimitiveTypes.Int32},
			{ID: 6, Name: "y", Type: iceberg.PrimitiveTypes.String},
		}}},
		iceberg.NestedField{ID: 4, Name: "tags", Type: &iceberg.ListType{ElementID: 7, Element: iceberg.PrimitiveTypes.String}},
	)
	for _, c := range []struct{ stmt, query, on, filter, cond string }{
		{
			"DELETE FROM db.t WHERE id NOT IN (SELECT id FROM v)",
			`SELECT DISTINCT "t"."id" AS "__k0" FROM __pig_target AS "t" WHERE (id NOT IN (SELECT id FROM v))`,
			"target.id <=> __subquery.__k0", "", "",
		},
		{
			// Qualified and unqualified names, a struct field, the other
			// conjuncts kept for the merge (and as the read's filter).
			"UPDATE db.t AS a SET id = 0 WHERE a.id > 2 AND EXISTS (SELECT 1 FROM v WHERE v.k = a.s.x AND v.c = cat) AND a.Cat <> 'z'",
			`SELECT DISTINCT "a"."s"."x" AS "__k0", "a"."Cat" AS "__k1" FROM __pig_target AS "a" WHERE (EXISTS (SELECT 1 FROM v WHERE v.k = a.s.x AND v.c = cat))`,
			"target.s.x <=> __subquery.__k0 AND target.Cat <=> __subquery.__k1", "((id > 2)) AND ((Cat != 'z'))", "(a.id > 2) AND (a.Cat <> 'z')",
		},
		{
			// A struct used whole; a subquery under OR.
			"DELETE FROM db.t WHERE s IN (SELECT s FROM v) OR id IS NULL",
			`SELECT DISTINCT ("t"."s" IS NULL) AS "__k0", "t"."s"."x" AS "__k1", "t"."s"."y" AS "__k2", "t"."id" AS "__k3" FROM __pig_target AS "t" WHERE (s IN (SELECT s FROM v) OR id IS NULL)`,
			"(target.s IS NULL) <=> __subquery.__k0 AND target.s.x <=> __subquery.__k1 AND target.s.y <=> __subquery.__k2 AND target.id <=> __subquery.__k3", "", "",
		},
		{
			// No target column named: the first primitive column keys the rows.
			"DELETE FROM db.t WHERE EXISTS (SELECT 1 FROM v WHERE v.n > 3)",
			`SELECT DISTINCT "t"."id" AS "__k0" FROM __pig_target AS "t" WHERE (EXISTS (SELECT 1 FROM v WHERE v.n > 3))`,
			"target.id <=> __subquery.__k0", "", "",
		},
		{
			// Two IN subqueries: not the one-conjunct form.
			"DELETE FROM db.t WHERE id IN (SELECT a FROM v) AND id IN (SELECT b FROM w)",
			`SELECT DISTINCT "t"."id" AS "__k0" FROM __pig_target AS "t" WHERE (id IN (SELECT a FROM v)) AND (id IN (SELECT b FROM w))`,
			"target.id <=> __subquery.__k0", "", "",
		},
	} {
		st, err := sqlstmt.Parse(c.stmt, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.stmt, err)
		}
		if err := st.BindTarget(schema); err != nil {
			t.Fatalf("%s: %v", c.stmt, err)
		}
		src, m := st.DML.Source, st.Request.Merge
		if src.Kind != sqlstmt.SourceQuery || src.Query != c.query {
			t.Errorf("%s: query\n got  %s\n want %s", c.stmt, src.Query, c.query)
		}
		if m.On != c.on {
			t.Errorf("%s: on\n got  %s\n want %s", c.stmt, m.On, c.on)
		}
		read := src.Tables["__pig_target"]
		if read.Table != "db.t" || read.Filter != c.filter || len(read.Columns) == 0 {
			t.Errorf("%s: read %+v, want filter %q", c.stmt, read, c.filter)
		}
		if got := m.Clauses[0].Condition; got != c.cond {
			t.Errorf("%s: condition %q, want %q", c.stmt, got, c.cond)
		}
		// The merge document is one the decoder accepts.
		doc, _ := json.Marshal(st.Request)
		if _, err := request.Decode(doc); err != nil {
			t.Errorf("%s: %v", c.stmt, err)
		}
	}
	// A list column used whole cannot be a key: a typed error.
	st, err := sqlstmt.Parse("DELETE FROM db.t t WHERE EXISTS (SELECT 1 FROM v WHERE v.tags = t.tags)", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.BindTarget(schema); !errors.Is(err, errs.ErrNotSupported) || !strings.Contains(err.Error(), "tags") {
		t.Errorf("list key: %v", err)
	}
}

// TestSQLDMLSourceTimeTravel: Spark's VERSION AS OF / TIMESTAMP AS OF on a
// table a statement reads, kept in the source for the caller's read.
func TestSQLDMLSourceTimeTravel(t *testing.T) {
	for _, c := range []struct{ stmt, want string }{
		{"INSERT INTO db.t SELECT * FROM db.u VERSION AS OF 42", `"snapshot_id":42`},
		{"INSERT INTO db.t TABLE db.u FOR SYSTEM_VERSION AS OF 'audit'", `"ref":"audit"`},
		{"MERGE INTO db.t t USING db.u TIMESTAMP AS OF '2024-01-01 00:00:01' s ON t.id = s.id WHEN MATCHED THEN DELETE", `"as_of_timestamp_ms":1704067201000`},
		{"MERGE INTO db.t t USING db.u FOR SYSTEM_TIME AS OF 1704067200 AS s ON t.id = s.id WHEN MATCHED THEN DELETE", `"as_of_timestamp_ms":1704067200000`},
		// Spark's own spelling: MERGE's USING takes time travel only inside a query.
		{"MERGE INTO db.t t USING (SELECT * FROM db.u VERSION AS OF 'v1') s ON t.id = s.id WHEN MATCHED THEN DELETE", `"ref":"v1"`},
	} {
		st, err := sqlstmt.Parse(c.stmt, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.stmt, err)
		}
		doc, _ := json.Marshal(st.DML.Source)
		if st.DML.Source.Kind != sqlstmt.SourceTable || !strings.Contains(string(doc), c.want) {
			t.Errorf("%s: source %s, want %s", c.stmt, doc, c.want)
		}
		if st.Request.Merge != nil && st.Request.Merge.SourceAlias != "s" {
			t.Errorf("%s: source alias %q", c.stmt, st.Request.Merge.SourceAlias)
		}
	}
	_, err := sqlstmt.Parse("MERGE INTO db.t USING v VERSION AS OF 1 ON t.id = v.id WHEN MATCHED THEN DELETE", nil)
	if !errors.Is(err, errs.ErrNotSupported) || !strings.Contains(err.Error(), "position 25") {
		t.Errorf("time travel on a view: %v", err)
	}
}

// TestSQLDMLErrors: syntax errors name the position; what ig.sql cannot
// run is ErrNotSupported.
func TestSQLDMLErrors(t *testing.T) {
	for _, c := range []struct {
		stmt string
		pos  int
		kind error
	}{
		{"DELETE FROM db.t WHERE", 23, nil},
		{"DELETE FROM db.t WHERE id = 1 AND a = AND EXISTS (SELECT 1 FROM v)", 35, nil},
		{"MERGE INTO db.t USING v ON t.id = v.id WHEN MATCHED AND v.id IN (SELECT 1) THEN DELETE", 65, errs.ErrNotSupported},
		{"UPDATE db.t SET = 1", 17, nil},
		{"UPDATE db.t SET a = 1, A = 2", 24, nil},
		{"MERGE INTO db.t USING v ON t.id = v.id", 39, nil},
		{"MERGE INTO db.t USING v ON t.id = v.id WHEN MATCHED THEN INSERT *", 58, nil},
		{"MERGE INTO db.t USING v ON t.id = v.id WHEN NOT MATCHED THEN DELETE", 62, nil},
		{"INSERT INTO db.t (a, a) VALUES (1, 2)", 22, nil},
		{"INSERT INTO db.t", 17, nil},
		{"MERGE INTO db.t USING v ON a = b WHEN NOT MATCHED THEN INSERT (a, b) VALUES (1)", 63, nil},
		{"TRUNCATE TABLE db.t", 1, errs.ErrNotSupported},
	} {
		_, err := sqlstmt.Parse(c.stmt, nil)
		if err == nil {
			t.Errorf("%s: no error", c.stmt)
			continue
		}
		if c.kind != nil {
			if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), fmt.Sprintf("position %d", c.pos)) {
				t.Errorf("%s: got %v, want %v at %d", c.stmt, err, c.kind, c.pos)
			}
			continue
		}
		var e *expr.Error
		if !errors.As(err, &e) || e.Pos != c.pos || e.What != "statement" {
			t.Errorf("%s: got %v (want a statement error at %d)", c.stmt, err, c.pos)
		}
	}
}

// readAll reads a table as sorted text rows.
func readAll(t testing.TB, s *session.Session, name string) []string {
	t.Helper()
	rdr, err := scan.Read(ctxT(t), s, &request.Request{Op: request.OpScan, Table: name}, memory.DefaultAllocator, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	var out []string
	for rdr.Next() {
		rec := rdr.RecordBatch()
		for i := range int(rec.NumRows()) {
			var parts []string
			for _, col := range rec.Columns() {
				if col.IsNull(i) {
					parts = append(parts, "NULL")
				} else {
					parts = append(parts, col.ValueStr(i))
				}
			}
			out = append(out, strings.Join(parts, "|"))
		}
	}
	if err := rdr.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func runSQLInput(t testing.TB, s *session.Session, stmt string, in array.RecordReader) (map[string]any, error) {
	t.Helper()
	doc, _ := json.Marshal(map[string]string{"op": "sql", "sql": stmt})
	req, err := request.Decode(doc)
	if err != nil {
		return nil, err
	}
	res, err := ops.Execute(ctxT(t), s, req, in, nil)
	if err != nil {
		return nil, err
	}
	return res.(map[string]any), nil
}

func wantRows(t testing.TB, s *session.Session, name string, want ...string) {
	t.Helper()
	got := readAll(t, s, name)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("rows of %s:\n got  %q\n want %q", name, got, want)
	}
}

// TestSQLDMLRuns: the statements run through op sql.
func TestSQLDMLRuns(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	mustSQL(t, s, "CREATE TABLE local.db.t (id bigint, p string, v int, s struct<x: int, y: string>) USING iceberg PARTITIONED BY (p)")
	res := mustSQL(t, s, "INSERT INTO local.db.t VALUES (1, 'a', 10, struct(1, 'one')), (2, 'b', NULL, named_struct('x', 2, 'y', NULL)), (3, 'a', 30, NULL)")
	if res["op"] != request.OpAppend {
		t.Fatalf("INSERT ran %v", res["op"])
	}
	wantRows(t, s, "local.db.t", `1|a|10|{"x":1,"y":"one"}`, `2|b|NULL|{"x":2,"y":null}`, "3|a|30|NULL")
	mustSQL(t, s, "INSERT INTO local.db.t (v, id, p) VALUES (40, 4, 'c')")
	wantRows(t, s, "local.db.t", `1|a|10|{"x":1,"y":"one"}`, `2|b|NULL|{"x":2,"y":null}`, "3|a|30|NULL", "4|c|40|NULL")
	mustSQL(t, s, "UPDATE local.db.t AS x SET x.v = x.v + 1 WHERE x.s.x = 1 OR id = 4")
	mustSQL(t, s, "DELETE FROM local.db.t WHERE p = 'b'")
	wantRows(t, s, "local.db.t", `1|a|11|{"x":1,"y":"one"}`, "3|a|30|NULL", "4|c|41|NULL")
	// Static INSERT OVERWRITE with a PARTITION clause: partition a replaced.
	res = mustSQL(t, s, "INSERT OVERWRITE local.db.t PARTITION (p = 'a') VALUES (5, 50, NULL)")
	if res["op"] != request.OpOverwrite {
		t.Fatalf("INSERT OVERWRITE ran %v", res["op"])
	}
	wantRows(t, s, "local.db.t", "4|c|41|NULL", "5|a|50|NULL")
	// Static without PARTITION: the whole table.
	mustSQL(t, s, "INSERT OVERWRITE local.db.t VALUES (6, 'd', 60, NULL)")
	wantRows(t, s, "local.db.t", "6|d|60|NULL")
	// Dynamic: only the partitions of the rows.
	mustSQL(t, s, "INSERT INTO local.db.t VALUES (7, 'e', 70, NULL)")
	d := e.sessionWithConf(t, map[string]string{sqlstmt.OverwriteModeKey: "dynamic"})
	res = mustSQL(t, d, "INSERT OVERWRITE local.db.t VALUES (8, 'e', 80, NULL)")
	if res["op"] != request.OpOverwritePartitions {
		t.Fatalf("dynamic INSERT OVERWRITE ran %v", res["op"])
	}
	wantRows(t, s, "local.db.t", "6|d|60|NULL", "8|e|80|NULL")

	// Errors: nothing committed.
	before := snapshotCount(t, s, "local.db.t")
	for _, bad := range []string{
		"INSERT INTO local.db.t VALUES (1, 'a')",
		"INSERT INTO local.db.t (id, nope) VALUES (1, 2)",
		"INSERT INTO local.db.t PARTITION (v = 1) VALUES (1, 'a', NULL)",
		"INSERT INTO local.db.t VALUES ('x', 'a', 1, NULL)",
		"INSERT INTO local.db.t VALUES (1, 'a', 1, struct(1))",
		"INSERT INTO local.db.t SELECT * FROM v",
	} {
		if _, err := runSQL(t, s, bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	if got := snapshotCount(t, s, "local.db.t"); got != before {
		t.Fatalf("failed statements committed %d snapshots", got-before)
	}
}

// TestSQLDMLPlanAndInput: sql_plan names the source; sql takes the view's
// rows as its input (by position for INSERT) and refuses a missing one.
func TestSQLDMLPlanAndInput(t *testing.T) {
	s := newEnv(t).session(t)
	doc, _ := json.Marshal(map[string]string{"op": "sql_plan", "sql": "MERGE INTO local.db.t t USING upd u ON t.id = u.id WHEN MATCHED THEN DELETE"})
	req, err := request.Decode(doc)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ops.Execute(ctxT(t), s, req, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	plan := res.(map[string]any)
	if src := plan["source"].(*sqlstmt.Source); plan["op"] != request.OpMerge || src.Kind != sqlstmt.SourceView || src.Name != "upd" {
		t.Fatalf("plan %+v", plan)
	}
	mustSQL(t, s, "CREATE TABLE local.db.t (id bigint, v string) USING iceberg")
	view := func(ids []int64, vs []string) array.RecordReader {
		sc := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}, {Name: "b", Type: arrow.BinaryTypes.String}}, nil)
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		defer b.Release()
		b.Field(0).(*array.Int64Builder).AppendValues(ids, nil)
		b.Field(1).(*array.StringBuilder).AppendValues(vs, nil)
		rec := b.NewRecordBatch()
		defer rec.Release()
		rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
		if err != nil {
			t.Fatal(err)
		}
		return rdr
	}
	if _, err := runSQLInput(t, s, "INSERT INTO local.db.t SELECT * FROM upd", nil); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Fatalf("no input: %v", err)
	}
	// Columns a, b go to id, v by position.
	if _, err := runSQLInput(t, s, "INSERT INTO local.db.t SELECT * FROM upd", view([]int64{1, 2}, []string{"x", "y"})); err != nil {
		t.Fatal(err)
	}
	wantRows(t, s, "local.db.t", "1|x", "2|y")
	// ... and to the column list's columns.
	if _, err := runSQLInput(t, s, "INSERT INTO local.db.t (v, id) TABLE upd", view([]int64{3}, []string{"z"})); err == nil {
		t.Fatal("a string into bigint id was accepted")
	}
	out, err := runSQLInput(t, s, "MERGE INTO local.db.t USING upd u ON t.id = u.a WHEN MATCHED THEN UPDATE SET v = u.b WHEN NOT MATCHED THEN INSERT (id, v) VALUES (u.a, u.b)", view([]int64{2, 5}, []string{"Y", "Z"}))
	if err != nil {
		t.Fatal(err)
	}
	if out["op"] != request.OpMerge {
		t.Fatalf("MERGE ran %v", out["op"])
	}
	wantRows(t, s, "local.db.t", "1|x", "2|Y", "5|Z")
}
