package write

import (
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/layout"
	"github.com/pyiceberg-go/pyiceberg-go/core/stream"
	"github.com/pyiceberg-go/pyiceberg-go/core/tz"
)

// writeOptionToProperty maps write options to the table property they
// override (precedence: resolveOptions).
var writeOptionToProperty = map[string]string{
	"target-file-size-bytes": "write.target-file-size-bytes",
	"compression-codec":      "write.parquet.compression-codec",
	"compression-level":      "write.parquet.compression-level",
	"write-format":           "write.format.default",
	"distribution-mode":      "write.distribution-mode",
	"fanout-enabled":         "write.spark.fanout.enabled",
	"max-open-files":         layout.PropMaxOpenFiles,
	"max-buffered-bytes":     layout.PropMaxBufferedBytes,
}

// knownWriteOptions are the options that are not table properties.
var knownWriteOptions = map[string]bool{
	"check-nullability": true, "check-ordering": true, "mergeSchema": true, "merge-schema": true,
}

// Effective is the merged configuration of one write.
type Effective struct {
	// Props are the table properties with session configuration and write
	// options laid over them under their property names.
	Props            map[string]string
	CheckNullability bool
	CheckOrdering    bool
	SnapshotProps    map[string]string
	// Isolation is the isolation-level write option of the overwrites
	// ("" when unset: no validation).
	Isolation string
	// ValidateFrom is validate-from-snapshot-id.
	ValidateFrom *int64
	// WapID and WapBranch are the session's wap.id and wap.branch (Spark's
	// spark.wap.*), applied when the table has write.wap.enabled=true.
	WapID, WapBranch string
	// MergeSchema is the mergeSchema write option (Spark's schema merge).
	MergeSchema bool
	// Zone is the session time zone (spark.sql.session.timeZone or
	// session.timeZone, UTC by default): how timestamps without a time
	// zone and instants convert into each other, in the data written and
	// in filters and values.
	Zone *tz.Zone
}

// resolveOptions applies the precedence write option > session
// configuration > table property > default, in this one place.
func resolveOptions(tableProps, sessionConf, options map[string]string) (Effective, error) {
	e := Effective{Props: maps.Clone(tableProps), CheckNullability: true, CheckOrdering: true, SnapshotProps: map[string]string{}}
	if e.Props == nil {
		e.Props = map[string]string{}
	}
	zone, err := tz.FromConf(sessionConf)
	if err != nil {
		return e, err
	}
	e.Zone = zone
	for _, layer := range []struct {
		name string
		m    map[string]string
	}{{"session configuration", sessionConf}, {"write option", options}} {
		for k, v := range layer.m {
			if layer.name == "session configuration" {
				// Session keys may be spelled as Spark's session
				// configuration spells them.
				k = strings.TrimPrefix(k, "spark.sql.iceberg.")
				if rest, ok := strings.CutPrefix(k, "spark.wap."); ok {
					k = "wap." + rest
				}
			}
			switch {
			case strings.HasPrefix(k, "snapshot-property."):
				key := strings.TrimPrefix(k, "snapshot-property.")
				if key == "" {
					return e, fmt.Errorf("%w: %s %q has an empty key", errs.ErrInvalidArgument, layer.name, k)
				}
				e.SnapshotProps[key] = v
			case writeOptionToProperty[k] != "":
				e.Props[writeOptionToProperty[k]] = v
			case knownWriteOptions[k]:
				b, err := strconv.ParseBool(v)
				if err != nil {
					return e, fmt.Errorf("%w: %s %s=%q is not a boolean", errs.ErrInvalidArgument, layer.name, k, v)
				}
				switch k {
				case "check-nullability":
					e.CheckNullability = b
				case "check-ordering":
					e.CheckOrdering = b
				default:
					e.MergeSchema = b
				}
			case k == "isolation-level" && layer.name == "write option":
				lvl, err := ParseIsolation("write option isolation-level", v)
				if err != nil {
					return e, err
				}
				e.Isolation = lvl
			case k == "validate-from-snapshot-id" && layer.name == "write option":
				id, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return e, fmt.Errorf("%w: write option validate-from-snapshot-id=%q is not a snapshot id", errs.ErrInvalidArgument, v)
				}
				e.ValidateFrom = &id
			case k == "wap.id" && layer.name == "session configuration":
				e.WapID = v
			case k == "wap.branch" && layer.name == "session configuration":
				e.WapBranch = v
			case strings.HasPrefix(k, "test.") && layer.name == "session configuration":
			default:
				if layer.name == "write option" {
					return e, fmt.Errorf("%w: unknown write option %q", errs.ErrInvalidArgument, k)
				}
			}
		}
	}
	if f, ok := e.Props["write.format.default"]; ok && !strings.EqualFold(f, "parquet") {
		return e, fmt.Errorf("%w: write format %q is not supported (parquet)", errs.ErrNotSupported, f)
	}
	for k := range e.SnapshotProps {
		if reservedSummaryKeys[k] {
			return e, fmt.Errorf("%w: snapshot-property.%s would overwrite a summary key the commit computes", errs.ErrInvalidArgument, k)
		}
	}
	return e, nil
}

var reservedSummaryKeys = map[string]bool{
	"operation": true, "added-data-files": true, "deleted-data-files": true, "added-records": true,
	"deleted-records": true, "added-files-size": true, "removed-files-size": true, "total-records": true,
	"total-files-size": true, "total-data-files": true, "total-delete-files": true, "total-position-deletes": true,
	"total-equality-deletes": true, "changed-partition-count": true, "engine-name": true, "engine-version": true,
	"added-delete-files": true, "removed-delete-files": true, "added-position-deletes": true, "removed-position-deletes": true,
	"added-equality-deletes": true, "removed-equality-deletes": true, "replace-partitions": true,
	"added-dvs": true, "removed-dvs": true,
	// A streaming write's identity comes from its stream batch only.
	stream.QueryIDKey: true, stream.EpochIDKey: true,
}

// Isolation levels of an operation that commits on a head other writers
// may have moved (write option isolation-level, table properties
// write.delete/update/merge.isolation-level). Under serializable, a
// concurrent commit conflicts when it added data files the operation's
// condition may match, removed such data files, or added delete files for
// them; under snapshot, only the removals and the delete files conflict.
// IsolationNone (an append or overwrite without the option) checks
// nothing but the files the operation itself rewrites: a concurrent
// removal of one, or a delete file on one, conflicts at every level,
// since committing would undo that change. A conflict is final: the
// commit is not retried.
const (
	IsolationNone         = ""
	IsolationSerializable = "serializable"
	IsolationSnapshot     = "snapshot"
)

// ParseIsolation reads an isolation level given by where.
func ParseIsolation(where, v string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case IsolationSerializable:
		return IsolationSerializable, nil
	case IsolationSnapshot:
		return IsolationSnapshot, nil
	}
	return "", fmt.Errorf("%w: %s=%q is not serializable or snapshot", errs.ErrInvalidArgument, where, v)
}
