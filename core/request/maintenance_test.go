package request

import (
	"errors"
	"strings"
	"testing"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

func TestMaintenanceFields(t *testing.T) {
	for doc, bad := range map[string]string{
		`{"op":"expire_snapshots","table":"db.t","older_than_ms":1,"retain_last":2,"snapshot_ids":[1],"clean_expired_metadata":true}`: "",
		`{"op":"remove_orphan_files","table":"db.t","older_than_ms":1,"location":"/x","dry_run":true}`:                                "",
		`{"op":"expire_snapshots","table":"db.t","retain_last":0}`:                                                                    "at least 1",
		`{"op":"expire_snapshots","table":"db.t","dry_run":true}`:                                                                     "takes no dry_run",
		`{"op":"expire_snapshots","table":"db.t","location":"/x"}`:                                                                    "takes no location",
		`{"op":"remove_orphan_files","table":"db.t","retain_last":1}`:                                                                 "takes no retain_last",
		`{"op":"append","table":"db.t","older_than_ms":1}`:                                                                            "takes no older_than_ms",
		`{"op":"scan","table":"db.t","snapshot_ids":[1]}`:                                                                             "takes no snapshot_ids",
		`{"op":"rewrite_manifests","table":"db.t","spec_id":0}`:                                                                       "",
		`{"op":"rewrite_manifests","table":"db.t","older_than_ms":1}`:                                                                 "takes no older_than_ms",
		`{"op":"rewrite_manifests","table":"db.t","location":"/x"}`:                                                                   "takes no location",
		`{"op":"expire_snapshots","table":"db.t","spec_id":1}`:                                                                        "takes no spec_id",
	} {
		_, err := Decode([]byte(doc))
		switch {
		case bad == "" && err != nil:
			t.Errorf("%s: %v", doc, err)
		case bad != "" && (!errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(fmtErr(err), bad)):
			t.Errorf("%s: got %v, want an invalid argument with %q", doc, err, bad)
		}
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestRewriteFields(t *testing.T) {
	for doc, want := range map[string]string{
		`{"op":"rewrite_data_files","table":"db.t"}`:                                                    "binpack",
		`{"op":"rewrite_data_files","table":"db.t","rewrite":{"sort_order":"id DESC"}}`:                 "sort",
		`{"op":"rewrite_data_files","table":"db.t","rewrite":{"strategy":"SORT"}}`:                      "sort",
		`{"op":"rewrite_data_files","table":"db.t","rewrite":{"strategy":"zorder"}}`:                    "unsupported strategy: zorder",
		`{"op":"rewrite_data_files","table":"db.t","rewrite":{"strategy":"binpack","sort_order":"id"}}`: "needs strategy sort",
		`{"op":"rewrite_data_files","table":"db.t","options":{"rewrite-all":"true"}}`:                   "in rewrite",
		`{"op":"rewrite_data_files","table":"db.t","rewrite":{"wher":"x"}}`:                             "wher",
		`{"op":"delete","table":"db.t","filter":"true","rewrite":{}}`:                                   "takes no rewrite",
	} {
		r, err := Decode([]byte(doc))
		if err == nil {
			if r.Rewrite == nil || r.Rewrite.Strategy != want {
				t.Errorf("%s: strategy %+v, want %s", doc, r.Rewrite, want)
			}
			continue
		}
		if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an invalid argument with %q", doc, err, want)
		}
	}
}
