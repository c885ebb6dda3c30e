package sqlstmt

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/expr"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
)

// procedure is one of Iceberg's Spark procedures: its parameters in
// Spark's order (for positional arguments), the ones it needs, and how its
// arguments become a request.
type procedure struct {
	params   []string
	required []string
	// ignored parameters are accepted and have no effect here (tuning of
	// Spark's executors).
	ignored []string
	build   func(r *request.Request, args map[string]arg) error
}

// arg is one argument: its text and where it starts.
type arg struct {
	kind  string // "string", "number", "bool", "map", "array", "timestamp"
	text  string
	list  []string          // array
	pairs map[string]string // map
	pos   int
}

var procedures = map[string]procedure{
	"rewrite_data_files": {
		params:   []string{"table", "strategy", "sort_order", "options", "where"},
		required: []string{"table"},
		build: func(r *request.Request, a map[string]arg) error {
			r.Op = request.OpRewriteDataFiles
			r.Rewrite = &request.Rewrite{Strategy: a["strategy"].text, SortOrder: a["sort_order"].text, Where: a["where"].text, Options: a["options"].pairs}
			return nil
		},
	},
	"rewrite_position_delete_files": {
		params:   []string{"table", "options", "where"},
		required: []string{"table"},
		build: func(r *request.Request, a map[string]arg) error {
			r.Op = request.OpRewritePositionDeleteFiles
			r.Rewrite = &request.Rewrite{Where: a["where"].text, Options: a["options"].pairs}
			return nil
		},
	},
	"rewrite_manifests": {
		params:   []string{"table", "use_caching", "spec_id"},
		required: []string{"table"},
		ignored:  []string{"use_caching"},
		build: func(r *request.Request, a map[string]arg) error {
			r.Op = request.OpRewriteManifests
			if v, ok := a["spec_id"]; ok {
				n, err := v.int("spec_id")
				if err != nil {
					return err
				}
				id := int(n)
				r.SpecID = &id
			}
			return nil
		},
	},
	"expire_snapshots": {
		params:   []string{"table", "older_than", "retain_last", "max_concurrent_deletes", "stream_results", "snapshot_ids", "clean_expired_metadata"},
		required: []string{"table"},
		ignored:  []string{"max_concurrent_deletes", "stream_results"},
		build: func(r *request.Request, a map[string]arg) error {
			r.Op = request.OpExpireSnapshots
			if err := olderThan(r, a); err != nil {
				return err
			}
			if v, ok := a["retain_last"]; ok {
				n, err := v.int("retain_last")
				if err != nil {
					return err
				}
				k := int(n)
				r.RetainLast = &k
			}
			if v, ok := a["snapshot_ids"]; ok {
				if v.kind != "array" {
					return v.errorf("snapshot_ids is array(id, ...)")
				}
				for _, s := range v.list {
					id, err := strconv.ParseInt(s, 10, 64)
					if err != nil {
						return v.errorf("snapshot_ids: %q is not a snapshot id", s)
					}
					r.SnapshotIDs = append(r.SnapshotIDs, id)
				}
			}
			if v, ok := a["clean_expired_metadata"]; ok {
				b, err := v.bool("clean_expired_metadata")
				if err != nil {
					return err
				}
				r.CleanExpiredMetadata = b
			}
			return nil
		},
	},
	"remove_orphan_files": {
		params:   []string{"table", "older_than", "location", "dry_run", "max_concurrent_deletes"},
		required: []string{"table"},
		ignored:  []string{"max_concurrent_deletes"},
		build: func(r *request.Request, a map[string]arg) error {
			r.Op = request.OpRemoveOrphanFiles
			if err := olderThan(r, a); err != nil {
				return err
			}
			r.Location = a["location"].text
			if v, ok := a["dry_run"]; ok {
				b, err := v.bool("dry_run")
				if err != nil {
					return err
				}
				r.DryRun = b
			}
			return nil
		},
	},
	"rollback_to_snapshot": {
		params: []string{"table", "snapshot_id"}, required: []string{"table", "snapshot_id"},
		build: func(r *request.Request, a map[string]arg) error {
			r.Op = request.OpRollbackToSnapshot
			return setSnapshot(r, a)
		},
	},
	"rollback_to_timestamp": {
		params: []string{"table", "timestamp"}, required: []string{"table", "timestamp"},
		build: func(r *request.Request, a map[string]arg) error {
			r.Op = request.OpRollbackToTimestamp
			v := a["timestamp"]
			if v.kind != "timestamp" {
				return v.errorf("timestamp is a timestamp (TIMESTAMP '...')")
			}
			ms, _ := strconv.ParseInt(v.text, 10, 64)
			r.AsOfTimestampMs = &ms
			return nil
		},
	},
	"set_current_snapshot": {
		params: []string{"table", "snapshot_id", "ref"}, required: []string{"table"},
		build: func(r *request.Request, a map[string]arg) error {
			r.Op = request.OpSetCurrentSnapshot
			r.Ref = a["ref"].text
			if _, ok := a["snapshot_id"]; ok {
				return setSnapshot(r, a)
			}
			return nil
		},
	},
	"cherrypick_snapshot": {
		params: []string{"table", "snapshot_id"}, required: []string{"table", "snapshot_id"},
		build: func(r *request.Request, a map[string]arg) error {
			r.Op = request.OpCherrypick
			return setSnapshot(r, a)
		},
	},
	"publish_changes": {
		params: []string{"table", "wap_id"}, required: []string{"table", "wap_id"},
		build: func(r *request.Request, a map[string]arg) error {
			r.Op, r.WapID = request.OpPublish, a["wap_id"].text
			return nil
		},
	},
	"fast_forward": {
		params: []string{"table", "branch", "to"}, required: []string{"table", "branch", "to"},
		build: func(r *request.Request, a map[string]arg) error {
			r.Op, r.Ref, r.To = request.OpFastForward, a["branch"].text, a["to"].text
			return nil
		},
	},
}

// olderThan sets older_than_ms from the older_than argument, if given.
func olderThan(r *request.Request, a map[string]arg) error {
	v, ok := a["older_than"]
	if !ok {
		return nil
	}
	if v.kind != "timestamp" {
		return v.errorf("older_than is a timestamp (TIMESTAMP '...')")
	}
	ms, _ := strconv.ParseInt(v.text, 10, 64)
	r.OlderThanMs = &ms
	return nil
}

func setSnapshot(r *request.Request, a map[string]arg) error {
	id, err := a["snapshot_id"].int("snapshot_id")
	if err != nil {
		return err
	}
	r.SnapshotID = &id
	return nil
}

func (a arg) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s (at position %d)", errs.ErrInvalidArgument, fmt.Sprintf(format, args...), a.pos)
}

func (a arg) int(name string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimRight(a.text, "Ll"), 10, 64)
	if a.kind != "number" || err != nil {
		return 0, a.errorf("%s is an integer, got %s", name, a.text)
	}
	return n, nil
}

func (a arg) bool(name string) (bool, error) {
	if a.kind != "bool" {
		return false, a.errorf("%s is true or false, got %s", name, a.text)
	}
	return a.text == "true", nil
}

// call reads the rest of CALL [catalog.]system.procedure(args): named
// (name => value) or positional arguments, in Spark's parameter order.
func (p *stmtParser) call() (*Statement, error) {
	c := p.c
	pos := c.Peek().Pos
	parts, err := c.Path("a procedure name")
	if err != nil {
		return nil, err
	}
	catalog := ""
	switch {
	case len(parts) == 3 && strings.EqualFold(parts[1], "system"):
		catalog = parts[0]
	case len(parts) == 2 && strings.EqualFold(parts[0], "system"):
	default:
		return nil, c.Errorf(pos, "expected [catalog.]system.<procedure>, found %s", strings.Join(parts, "."))
	}
	name := strings.ToLower(parts[len(parts)-1])
	proc, ok := procedures[name]
	if !ok {
		return nil, p.unsupported(pos, "procedure %s", name)
	}
	if err := c.ExpectOp("("); err != nil {
		return nil, err
	}
	args := map[string]arg{}
	named := false
	for i := 0; !c.Peek().IsOp(")"); i++ {
		if i > 0 {
			if err := c.ExpectOp(","); err != nil {
				return nil, err
			}
		}
		at := c.Peek()
		param := ""
		if at.IsName() && c.Peek2().IsOp("=") {
			c.Next()
			c.Next()
			if err := c.ExpectOp(">"); err != nil {
				return nil, err
			}
			param, named = strings.ToLower(at.Text), true
		} else if named {
			return nil, c.Errorf(at.Pos, "a positional argument after named ones")
		} else if i < len(proc.params) {
			param = proc.params[i]
		} else {
			return nil, c.Errorf(at.Pos, "%s takes at most %d arguments", name, len(proc.params))
		}
		if !slices.Contains(proc.params, param) {
			return nil, c.Errorf(at.Pos, "%s has no parameter %s (%s)", name, param, strings.Join(proc.params, ", "))
		}
		if _, dup := args[param]; dup {
			return nil, c.Errorf(at.Pos, "parameter %s given twice", param)
		}
		v, err := p.argValue()
		if err != nil {
			return nil, err
		}
		args[param] = v
	}
	c.Next() // )
	for _, need := range proc.required {
		if _, ok := args[need]; !ok {
			return nil, c.Errorf(pos, "%s needs the parameter %s", name, need)
		}
	}
	for _, ig := range proc.ignored {
		delete(args, ig)
	}
	table := args["table"]
	if table.kind != "string" {
		return nil, table.errorf("table is the table's name as a string ('db.t')")
	}
	tparts := strings.Split(table.text, ".")
	if catalog != "" && (len(tparts) < 3 || !strings.EqualFold(tparts[0], catalog)) {
		tparts = append([]string{catalog}, tparts...)
	}
	r := &request.Request{Table: strings.Join(tparts, ".")}
	if err := proc.build(r, args); err != nil {
		return nil, err
	}
	return &Statement{Kind: "CALL " + name, Request: r}, nil
}

// argValue reads a procedure argument: a string, number or boolean
// literal, TIMESTAMP '...' (epoch milliseconds in the session time zone),
// map('k', 'v', ...) or array(v, ...).
func (p *stmtParser) argValue() (arg, error) {
	c := p.c
	t := c.Peek()
	switch {
	case t.Kind == expr.String:
		c.Next()
		return arg{kind: "string", text: t.Text, pos: t.Pos}, nil
	case t.Kind == expr.Number, t.IsOp("-") && c.Peek2().Kind == expr.Number:
		sign := ""
		if c.OpIf("-") {
			sign = "-"
		}
		n := c.Next()
		return arg{kind: "number", text: sign + n.Text, pos: t.Pos}, nil
	case t.Is("true"), t.Is("false"):
		c.Next()
		return arg{kind: "bool", text: strings.ToLower(t.Text), pos: t.Pos}, nil
	case t.Is("TIMESTAMP") && c.Peek2().Kind == expr.String:
		c.Next()
		s := c.Next()
		us, ok := expr.InstantMicros(s.Text, p.zone)
		if !ok {
			return arg{}, c.Errorf(s.Pos, "invalid timestamp '%s'", s.Text)
		}
		return arg{kind: "timestamp", text: strconv.FormatInt(floorDiv(us, 1000), 10), pos: t.Pos}, nil
	case (t.Is("map") || t.Is("array")) && c.Peek2().IsOp("("):
		c.Next()
		c.Next()
		var items []string
		for !c.Peek().IsOp(")") {
			if len(items) > 0 {
				if err := c.ExpectOp(","); err != nil {
					return arg{}, err
				}
			}
			v, err := p.argValue()
			if err != nil {
				return arg{}, err
			}
			if v.kind == "map" || v.kind == "array" {
				return arg{}, c.Errorf(v.pos, "nested %s", v.kind)
			}
			items = append(items, v.text)
		}
		c.Next()
		if t.Is("array") {
			return arg{kind: "array", list: items, pos: t.Pos}, nil
		}
		if len(items)%2 != 0 {
			return arg{}, c.Errorf(t.Pos, "map() takes keys and values in pairs")
		}
		m := map[string]string{}
		for i := 0; i < len(items); i += 2 {
			m[items[i]] = items[i+1]
		}
		return arg{kind: "map", pairs: m, pos: t.Pos}, nil
	}
	return arg{}, c.Errorf(t.Pos, "expected a procedure argument (a string, number, boolean, TIMESTAMP '...', map(...) or array(...)), found %s", t.Describe())
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
