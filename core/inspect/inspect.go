// Package inspect reads a table's metadata tables as Spark names them
// (db.t.snapshots, db.t.files, ...; Iceberg Java's SnapshotsTable,
// HistoryTable, RefsTable, MetadataLogEntriesTable, ManifestsTable,
// FilesTable and its data/delete and all_ variants, ManifestEntriesTable,
// PartitionsTable) and hands them out as Arrow batches through the same
// stream as a scan.
//
// The columns are Spark's, in Spark's order, with Iceberg's types mapped
// to Arrow as the scans map them (timestamptz: timestamp[us, UTC]).
// It reads metadata only: manifests lists and manifests, never data files.
package inspect

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/refs"
	"github.com/pyiceberg-go/pyiceberg-go/core/report"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/session"
)

// Read reads metadata table req.MetadataTable of req.Table (main's head,
// or req.SnapshotID for the per-snapshot tables).
func Read(ctx context.Context, s *session.Session, req *request.Request, mem memory.Allocator, counts *report.Progress) (array.RecordReader, error) {
	if counts == nil {
		counts = &report.Progress{}
	}
	t, refSnap, err := refs.LoadRef(ctx, s, req.Table)
	if err != nil {
		return nil, err
	}
	r := &reader{ctx: ctx, t: t, m: t.Metadata(), mem: mem, name: req.Table}
	perSnapshot := func() (*table.Snapshot, error) {
		return refs.ReadSnapshot(t, refSnap, req)
	}
	if req.SnapshotID != nil {
		switch req.MetadataTable {
		case "snapshots", "history", "refs", "metadata_log_entries":
			return nil, fmt.Errorf("%w: metadata table %s takes no snapshot_id", errs.ErrInvalidArgument, req.MetadataTable)
		}
		if strings.HasPrefix(req.MetadataTable, "all_") {
			return nil, fmt.Errorf("%w: metadata table %s takes no snapshot_id", errs.ErrInvalidArgument, req.MetadataTable)
		}
	}
	var rec arrow.RecordBatch
	switch req.MetadataTable {
	case "snapshots":
		rec = r.snapshots()
	case "history":
		rec = r.history()
	case "refs":
		rec = r.refs()
	case "metadata_log_entries":
		rec = r.metadataLog()
	case "manifests", "all_manifests":
		var snaps []table.Snapshot
		if snaps, err = r.snapshotsOf(req.MetadataTable, perSnapshot); err == nil {
			rec, err = r.manifests(snaps, req.MetadataTable == "all_manifests")
		}
	case "files", "data_files", "delete_files", "all_files", "all_data_files", "all_delete_files":
		var snaps []table.Snapshot
		if snaps, err = r.snapshotsOf(req.MetadataTable, perSnapshot); err == nil {
			rec, err = r.files(snaps, strings.TrimPrefix(req.MetadataTable, "all_"))
		}
	case "entries", "all_entries":
		var snaps []table.Snapshot
		if snaps, err = r.snapshotsOf(req.MetadataTable, perSnapshot); err == nil {
			rec, err = r.entries(snaps)
		}
	case "partitions":
		var snaps []table.Snapshot
		if snaps, err = r.snapshotsOf(req.MetadataTable, perSnapshot); err == nil {
			rec, err = r.partitions(snaps)
		}
	default:
		return nil, fmt.Errorf("%w: unknown metadata table %q", errs.ErrInvalidArgument, req.MetadataTable)
	}
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	counts.Rows.Add(rec.NumRows())
	return array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
}

type reader struct {
	ctx  context.Context
	t    *table.Table
	m    table.Metadata
	mem  memory.Allocator
	name string
	fs   iceio.IO
}

// snapshotsOf is the snapshot a per-snapshot table reads (none for a
// table without one), or every snapshot for an all_ table.
func (r *reader) snapshotsOf(name string, one func() (*table.Snapshot, error)) ([]table.Snapshot, error) {
	if strings.HasPrefix(name, "all_") {
		return r.m.Snapshots(), nil
	}
	sn, err := one()
	if err != nil || sn == nil {
		return nil, err
	}
	return []table.Snapshot{*sn}, nil
}

var (
	tsType   = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	strMap   = arrow.MapOf(arrow.BinaryTypes.String, arrow.BinaryTypes.String)
	longMap  = arrow.MapOf(arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64)
	bytesMap = arrow.MapOf(arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.Binary)
)

func field(name string, t arrow.DataType, nullable bool) arrow.Field {
	return arrow.Field{Name: name, Type: t, Nullable: nullable}
}

func (r *reader) builder(fields ...arrow.Field) *array.RecordBuilder {
	return array.NewRecordBuilder(r.mem, arrow.NewSchema(fields, nil))
}

func done(b *array.RecordBuilder) arrow.RecordBatch {
	defer b.Release()
	return b.NewRecordBatch()
}

func (r *reader) snapshots() arrow.RecordBatch {
	b := r.builder(
		field("committed_at", tsType, false), field("snapshot_id", arrow.PrimitiveTypes.Int64, false),
		field("parent_id", arrow.PrimitiveTypes.Int64, true), field("operation", arrow.BinaryTypes.String, true),
		field("manifest_list", arrow.BinaryTypes.String, true), field("summary", strMap, true))
	for _, sn := range r.m.Snapshots() {
		b.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(sn.TimestampMs * 1000))
		b.Field(1).(*array.Int64Builder).Append(sn.SnapshotID)
		appendValue(b.Field(2), ptrAny(sn.ParentSnapshotID))
		if sn.Summary != nil {
			b.Field(3).(*array.StringBuilder).Append(string(sn.Summary.Operation))
		} else {
			b.Field(3).AppendNull()
		}
		b.Field(4).(*array.StringBuilder).Append(sn.ManifestList)
		var props map[string]string
		if sn.Summary != nil {
			props = sn.Summary.Properties
		}
		appendStringMap(b.Field(5).(*array.MapBuilder), props)
	}
	return done(b)
}

func (r *reader) history() arrow.RecordBatch {
	b := r.builder(
		field("made_current_at", tsType, false), field("snapshot_id", arrow.PrimitiveTypes.Int64, false),
		field("parent_id", arrow.PrimitiveTypes.Int64, true), field("is_current_ancestor", arrow.FixedWidthTypes.Boolean, false))
	ancestors := map[int64]bool{}
	for sn := r.m.CurrentSnapshot(); sn != nil; {
		ancestors[sn.SnapshotID] = true
		if sn.ParentSnapshotID == nil {
			break
		}
		sn = r.m.SnapshotByID(*sn.ParentSnapshotID)
	}
	for e := range r.m.SnapshotLogs() {
		b.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(e.TimestampMs * 1000))
		b.Field(1).(*array.Int64Builder).Append(e.SnapshotID)
		var parent any
		if sn := r.m.SnapshotByID(e.SnapshotID); sn != nil {
			parent = ptrAny(sn.ParentSnapshotID)
		}
		appendValue(b.Field(2), parent)
		b.Field(3).(*array.BooleanBuilder).Append(ancestors[e.SnapshotID])
	}
	return done(b)
}

func (r *reader) refs() arrow.RecordBatch {
	b := r.builder(
		field("name", arrow.BinaryTypes.String, false), field("type", arrow.BinaryTypes.String, false),
		field("snapshot_id", arrow.PrimitiveTypes.Int64, false), field("max_reference_age_in_ms", arrow.PrimitiveTypes.Int64, true),
		field("min_snapshots_to_keep", arrow.PrimitiveTypes.Int32, true), field("max_snapshot_age_in_ms", arrow.PrimitiveTypes.Int64, true))
	var names []string
	all := map[string]table.SnapshotRef{}
	for n, ref := range r.m.Refs() {
		names = append(names, n)
		all[n] = ref
	}
	sort.Strings(names)
	for _, n := range names {
		ref := all[n]
		b.Field(0).(*array.StringBuilder).Append(n)
		// Java's ref.type().name().
		b.Field(1).(*array.StringBuilder).Append(strings.ToUpper(string(ref.SnapshotRefType)))
		b.Field(2).(*array.Int64Builder).Append(ref.SnapshotID)
		appendValue(b.Field(3), ptrAny(ref.MaxRefAgeMs))
		var keep any
		if ref.MinSnapshotsToKeep != nil {
			keep = int32(*ref.MinSnapshotsToKeep)
		}
		appendValue(b.Field(4), keep)
		appendValue(b.Field(5), ptrAny(ref.MaxSnapshotAgeMs))
	}
	return done(b)
}

// metadataLog lists the previous metadata files and the current one, each
// with the snapshot that was current when it was written (Java's
// MetadataLogEntriesTable).
func (r *reader) metadataLog() arrow.RecordBatch {
	b := r.builder(
		field("timestamp", tsType, false), field("file", arrow.BinaryTypes.String, false),
		field("latest_snapshot_id", arrow.PrimitiveTypes.Int64, true), field("latest_schema_id", arrow.PrimitiveTypes.Int32, true),
		field("latest_sequence_number", arrow.PrimitiveTypes.Int64, true))
	entries := []table.MetadataLogEntry{}
	for e := range r.m.PreviousFiles() {
		entries = append(entries, e)
	}
	entries = append(entries, table.MetadataLogEntry{MetadataFile: r.t.MetadataLocation(), TimestampMs: r.m.LastUpdatedMillis()})
	for _, e := range entries {
		b.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(e.TimestampMs * 1000))
		b.Field(1).(*array.StringBuilder).Append(e.MetadataFile)
		var snap, schema, seq any
		if id, err := refs.SnapshotAsOf(r.m, e.TimestampMs); err == nil {
			snap = id
			if sn := r.m.SnapshotByID(id); sn != nil {
				seq = sn.SequenceNumber
				if sn.SchemaID != nil {
					schema = int32(*sn.SchemaID)
				}
			}
		}
		appendValue(b.Field(2), snap)
		appendValue(b.Field(3), schema)
		appendValue(b.Field(4), seq)
	}
	return done(b)
}

func ptrAny[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func (r *reader) io() (iceio.IO, error) {
	if r.fs == nil {
		fs, err := r.t.FS(r.ctx)
		if err != nil {
			return nil, fmt.Errorf("%w: opening the files of %s: %v", errs.ErrIO, r.name, err)
		}
		r.fs = fs
	}
	return r.fs, nil
}

// manifestsOf lists the manifests of snaps, each once (the first snapshot
// listing it), with the snapshot that lists it.
func (r *reader) manifestsOf(snaps []table.Snapshot) ([]iceberg.ManifestFile, []int64, error) {
	fs, err := r.io()
	if err != nil {
		return nil, nil, err
	}
	var out []iceberg.ManifestFile
	var refsnap []int64
	for _, sn := range snaps {
		if err := r.ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("%w: reading %s: %v", errs.ErrCancelled, r.name, err)
		}
		mfs, err := sn.Manifests(fs)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: reading the manifest list of snapshot %d of %s: %v", errs.ErrIO, sn.SnapshotID, r.name, err)
		}
		for _, mf := range mfs {
			out = append(out, mf)
			refsnap = append(refsnap, sn.SnapshotID)
		}
	}
	return out, refsnap, nil
}

var summaryType = arrow.StructOf(
	field("contains_null", arrow.FixedWidthTypes.Boolean, false), field("contains_nan", arrow.FixedWidthTypes.Boolean, true),
	field("lower_bound", arrow.BinaryTypes.String, true), field("upper_bound", arrow.BinaryTypes.String, true))

func (r *reader) manifests(snaps []table.Snapshot, all bool) (arrow.RecordBatch, error) {
	mfs, refsnap, err := r.manifestsOf(snaps)
	if err != nil {
		return nil, err
	}
	i32 := arrow.PrimitiveTypes.Int32
	fields := []arrow.Field{
		field("content", i32, false), field("path", arrow.BinaryTypes.String, false), field("length", arrow.PrimitiveTypes.Int64, false),
		field("partition_spec_id", i32, false), field("added_snapshot_id", arrow.PrimitiveTypes.Int64, false),
		field("added_data_files_count", i32, false), field("existing_data_files_count", i32, false), field("deleted_data_files_count", i32, false),
		field("added_delete_files_count", i32, false), field("existing_delete_files_count", i32, false), field("deleted_delete_files_count", i32, false),
		field("partition_summaries", arrow.ListOf(summaryType), false),
	}
	if all {
		fields = append(fields, field("reference_snapshot_id", arrow.PrimitiveTypes.Int64, false),
			field("key_metadata", arrow.BinaryTypes.Binary, true))
	}
	b := r.builder(fields...)
	for i, mf := range mfs {
		data := mf.ManifestContent() == iceberg.ManifestContentData
		b.Field(0).(*array.Int32Builder).Append(int32(mf.ManifestContent()))
		b.Field(1).(*array.StringBuilder).Append(mf.FilePath())
		b.Field(2).(*array.Int64Builder).Append(mf.Length())
		b.Field(3).(*array.Int32Builder).Append(mf.PartitionSpecID())
		b.Field(4).(*array.Int64Builder).Append(mf.SnapshotID())
		counts := []int32{mf.AddedDataFiles(), mf.ExistingDataFiles(), mf.DeletedDataFiles(), 0, 0, 0}
		if !data {
			counts = []int32{0, 0, 0, mf.AddedDataFiles(), mf.ExistingDataFiles(), mf.DeletedDataFiles()}
		}
		for j, c := range counts {
			b.Field(5 + j).(*array.Int32Builder).Append(c)
		}
		lb := b.Field(11).(*array.ListBuilder)
		lb.Append(true)
		sb := lb.ValueBuilder().(*array.StructBuilder)
		spec := r.m.PartitionSpecByID(int(mf.PartitionSpecID()))
		var ptype *iceberg.StructType
		if spec != nil {
			ptype = spec.PartitionType(r.t.Schema())
		}
		for k, fs := range mf.Partitions() {
			sb.Append(true)
			sb.FieldBuilder(0).(*array.BooleanBuilder).Append(fs.ContainsNull)
			appendValue(sb.FieldBuilder(1), ptrAny(fs.ContainsNaN))
			for n, bound := range []*[]byte{fs.LowerBound, fs.UpperBound} {
				var s any
				if bound != nil && spec != nil && ptype != nil && k < len(ptype.FieldList) && k < spec.NumFields() {
					s = humanBound(spec.Field(k).Transform, ptype.FieldList[k].Type, *bound)
				}
				appendValue(sb.FieldBuilder(2+n), s)
			}
		}
		if all {
			b.Field(12).(*array.Int64Builder).Append(refsnap[i])
			if km := mf.KeyMetadata(); km != nil {
				b.Field(13).(*array.BinaryBuilder).Append(km)
			} else {
				b.Field(13).AppendNull()
			}
		}
	}
	return done(b), nil
}

// humanBound is a partition summary bound as Java's
// Transform.toHumanString shows it.
func humanBound(tr iceberg.Transform, t iceberg.Type, raw []byte) any {
	lit, err := iceberg.LiteralFromBytes(t, raw)
	if err != nil {
		return nil
	}
	return tr.ToHumanStrType(t, lit.Any())
}
