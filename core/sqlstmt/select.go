package sqlstmt

import (
	"strconv"
	"strings"

	"github.com/pyiceberg-go/pyiceberg-go/core/expr"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
)

// selectRead reads SELECT * | col, ... FROM t [time travel] [WHERE cond]:
// a read of one table (no expressions, joins or aggregates), with Spark's
// time travel: VERSION AS OF <snapshot id> or '<branch or tag>',
// TIMESTAMP AS OF '<time>' | TIMESTAMP '<time>' | <epoch seconds> (also
// spelled FOR SYSTEM_VERSION / FOR SYSTEM_TIME AS OF). A t that ends in a
// metadata table's name is resolved by core/ops (Spark's db.t.files).
func (p *stmtParser) selectRead() (*Statement, error) {
	c := p.c
	r := &request.Request{Op: request.OpScan}
	if !c.OpIf("*") {
		for {
			pos := c.Peek().Pos
			if !c.Peek().IsName() {
				return nil, p.unsupported(pos, "SELECT of expressions (only * or columns of one table)")
			}
			path, err := c.Path("a column")
			if err != nil {
				return nil, err
			}
			if t := c.Peek(); !t.IsOp(",") && !t.Is("FROM") {
				return nil, p.unsupported(pos, "SELECT of expressions (only * or columns of one table)")
			}
			if len(path) > 1 {
				// Spark returns p.x as a column x; a scan returns the pruned struct p.
				return nil, p.unsupported(pos, "SELECT of a nested field %s (select its top-level column)", dotted(path))
			}
			r.Columns = append(r.Columns, dotted(path))
			if !c.OpIf(",") {
				break
			}
		}
	}
	if err := c.Expect("FROM"); err != nil {
		return nil, err
	}
	name, _, err := p.tableName()
	if err != nil {
		return nil, err
	}
	r.Table = name
	tt, err := p.timeTravel()
	if err != nil {
		return nil, err
	}
	r.SnapshotID, r.Ref, r.AsOfTimestampMs = tt.SnapshotID, tt.Ref, tt.AsOfTimestampMs
	if c.Keywords("WHERE") {
		_, text, err := c.Expr()
		if err != nil {
			return nil, err
		}
		r.Filter = text
	}
	if t := c.Peek(); !c.AtEnd() {
		return nil, p.unsupported(t.Pos, "SELECT ... %s (ig.sql reads one table: columns, time travel and a WHERE filter)", strings.ToUpper(t.Text))
	}
	return &Statement{Kind: "SELECT", Request: r}, nil
}

// TimeTravel is Spark's time travel clause of a table reference: VERSION
// AS OF <snapshot id> or '<branch or tag>', TIMESTAMP AS OF '<time>' |
// <epoch seconds> (also FOR SYSTEM_VERSION / FOR SYSTEM_TIME AS OF).
type TimeTravel struct {
	SnapshotID      *int64 `json:"snapshot_id,omitempty"`
	Ref             string `json:"ref,omitempty"`
	AsOfTimestampMs *int64 `json:"as_of_timestamp_ms,omitempty"`
}

// Set reports whether the clause was given.
func (tt TimeTravel) Set() bool {
	return tt.SnapshotID != nil || tt.Ref != "" || tt.AsOfTimestampMs != nil
}

// timeTravel reads an optional time travel clause.
func (p *stmtParser) timeTravel() (TimeTravel, error) {
	c := p.c
	var tt TimeTravel
	switch {
	case c.Keywords("VERSION", "AS", "OF"), c.Keywords("FOR", "SYSTEM_VERSION", "AS", "OF"):
		t := c.Next()
		switch t.Kind {
		case expr.Number:
			id, err := strconv.ParseInt(t.Text, 10, 64)
			if err != nil {
				return tt, c.Errorf(t.Pos, "expected a snapshot id, found %s", t.Describe())
			}
			tt.SnapshotID = &id
		case expr.String:
			tt.Ref = t.Text
		default:
			return tt, c.Errorf(t.Pos, "expected a snapshot id or a branch or tag name, found %s", t.Describe())
		}
	case c.Keywords("TIMESTAMP", "AS", "OF"), c.Keywords("FOR", "SYSTEM_TIME", "AS", "OF"):
		c.Keywords("TIMESTAMP")
		t := c.Next()
		var ms int64
		switch t.Kind {
		case expr.String:
			us, ok := expr.InstantMicros(t.Text, p.zone)
			if !ok {
				return tt, c.Errorf(t.Pos, "invalid timestamp '%s'", t.Text)
			}
			ms = floorDiv(us, 1000)
		case expr.Number:
			// Spark reads a number as seconds since the epoch.
			sec, err := strconv.ParseInt(t.Text, 10, 64)
			if err != nil || sec > 1<<53/1000 {
				return tt, c.Errorf(t.Pos, "expected a time, found %s", t.Describe())
			}
			ms = sec * 1000
		default:
			return tt, c.Errorf(t.Pos, "expected a time ('2024-01-01 10:00:00'), found %s", t.Describe())
		}
		tt.AsOfTimestampMs = &ms
	}
	return tt, nil
}
