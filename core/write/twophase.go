package write

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	icecat "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/catalog"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/parquet"
	"github.com/pyiceberg-go/pyiceberg-go/core/paths"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
)

// A distributed (two-phase) write: each task plans the write as the
// operation would on one machine and writes its share of the input to
// files named after the write, the task and the attempt (FileNaming);
// Describe turns them into request.DataFile descriptions. The coordinator
// plans the operation again, and WriteData hands it the tasks' files
// (Prewritten, checked against its plan by adopt) instead of reading an
// input, so the commit is the operation's own: its conflict handling,
// isolation checks, summaries and clean-up after a failure.

// SummaryWriteID is the snapshot summary key of the write id of a
// distributed write's commit: a write id is committed at most once.
const SummaryWriteID = "pyiceberg-go.write-id"

// FileNaming names the files of one task attempt of a distributed write
// as Iceberg Java's OutputFileFactory names a Spark task's:
// <task>-<attempt>-<write id>-<n>.parquet, so a retried attempt never
// writes over, or adds to, the files of another.
type FileNaming struct {
	WriteID       string
	Task, Attempt int64
}

func (n FileNaming) name(seq int64) string {
	return fmt.Sprintf("%05d-%d-%s-%05d.parquet", n.Task, n.Attempt, n.WriteID, seq)
}

// WriteFileName matches the base name of a file of write id writeID (a
// request.Distributed write id: letters, digits and underscores), with
// the task and attempt as its first two groups.
func WriteFileName(writeID string) *regexp.Regexp {
	return regexp.MustCompile(`^(\d{5,})-(\d+)-` + regexp.QuoteMeta(writeID) + `-\d{5,}\.parquet$`)
}

// Prewritten are the files the tasks of a distributed write wrote and
// described: the coordinator's WriteData of the operation's input
// returns them.
type Prewritten struct {
	WriteID string
	Files   []request.DataFile
}

// Fingerprint is a digest of what a data file's contents and placement
// depend on: the schema with its field ids, the partition spec, the sort
// order and the data folder. Files written against another fingerprint
// cannot be committed by this plan.
func (p *Plan) Fingerprint() (string, error) {
	doc, err := json.Marshal(struct {
		Schema *iceberg.Schema        `json:"schema"`
		Spec   *iceberg.PartitionSpec `json:"spec"`
		Order  table.SortOrder        `json:"order"`
		Root   string                 `json:"root"`
	}{p.Schema, &p.Spec, p.order, p.DataRoot().String()})
	if err != nil {
		return "", fmt.Errorf("describing the write's plan: %w", err)
	}
	sum := sha256.Sum256(doc)
	return hex.EncodeToString(sum[:12]), nil
}

// Describe describes the files wr of one task attempt written with p.
func Describe(p *Plan, wr Written, n FileNaming) ([]request.DataFile, error) {
	fp, err := p.Fingerprint()
	if err != nil {
		return nil, err
	}
	out := make([]request.DataFile, 0, len(wr.Files))
	for _, wf := range wr.Files {
		f := wf.File
		part := make([][]byte, p.Spec.NumFields())
		for i, pf := range p.Spec.Fields() {
			v := wf.Values[pf.FieldID]
			if v == nil {
				continue
			}
			lit, err := literalOf(v)
			if err == nil {
				part[i], err = lit.MarshalBinary()
			}
			if err != nil {
				return nil, fmt.Errorf("describing partition field %s of %s: %w", pf.Name, f.Path, err)
			}
			if part[i] == nil {
				part[i] = []byte{} // an empty value, not a null
			}
		}
		out = append(out, request.DataFile{
			FilePath: f.Path, Task: n.Task, Attempt: n.Attempt, Plan: fp,
			SchemaID: p.Schema.ID, SpecID: p.Spec.ID(), SortOrderID: wf.SortOrderID, Partition: part,
			RecordCount: f.Rows, FileSizeInBytes: f.Size,
			ColumnSizes: f.ColumnSizes, ValueCounts: f.ValueCounts, NullValueCounts: f.NullCounts, NanValueCounts: f.NaNCounts,
			LowerBounds: f.Lower, UpperBounds: f.Upper, SplitOffsets: f.SplitOffsets,
		})
	}
	return out, nil
}

// literalOf is the Iceberg literal of a partition value as core/transform
// computes it.
func literalOf(v any) (iceberg.Literal, error) {
	switch x := v.(type) {
	case bool:
		return iceberg.NewLiteral(x), nil
	case int32:
		return iceberg.NewLiteral(x), nil
	case int64:
		return iceberg.NewLiteral(x), nil
	case float32:
		return iceberg.NewLiteral(x), nil
	case float64:
		return iceberg.NewLiteral(x), nil
	case iceberg.Date:
		return iceberg.NewLiteral(x), nil
	case iceberg.Time:
		return iceberg.NewLiteral(x), nil
	case iceberg.Timestamp:
		return iceberg.NewLiteral(x), nil
	case iceberg.TimestampNano:
		return iceberg.NewLiteral(x), nil
	case iceberg.Decimal:
		return iceberg.NewLiteral(x), nil
	case string:
		return iceberg.NewLiteral(x), nil
	case []byte:
		return iceberg.NewLiteral(x), nil
	case [16]byte:
		return iceberg.NewLiteral(x[:]), nil
	}
	if u, ok := v.(interface{ MarshalBinary() ([]byte, error) }); ok {
		b, err := u.MarshalBinary() // uuid.UUID
		if err != nil {
			return nil, err
		}
		return iceberg.NewLiteral(b), nil
	}
	return nil, fmt.Errorf("partition value of type %T", v)
}

// adopt checks the described files against p and returns them as
// written files: each was written against p's fingerprint, schema and
// spec, lies in p's data folder under a name of the write, and is given
// once; each task's files come from one attempt.
func (w *Writer) adopt(p *Plan) (Written, error) {
	pw := w.Prewritten
	w.Prewritten = nil // handed over once
	fp, err := p.Fingerprint()
	if err != nil {
		return Written{}, err
	}
	root := p.DataRoot()
	names := WriteFileName(pw.WriteID)
	attempts := map[int64]int64{}
	seen := map[string]bool{}
	var wr Written
	for i, d := range pw.Files {
		where := fmt.Sprintf("data file %d (%s)", i, d.FilePath)
		switch {
		case d.SchemaID != p.Schema.ID || d.SpecID != p.Spec.ID():
			return Written{}, fmt.Errorf("%w: %s was written against schema %d and partition spec %d; the table now has schema %d and spec %d",
				errs.ErrValidation, where, d.SchemaID, d.SpecID, p.Schema.ID, p.Spec.ID())
		case d.Plan != fp:
			return Written{}, fmt.Errorf("%w: %s was written against another table shape (plan %s, this commit's %s): the schema, partition spec, sort order or data location changed since, or the tasks planned differently",
				errs.ErrValidation, where, d.Plan, fp)
		case seen[d.FilePath]:
			return Written{}, fmt.Errorf("%w: %s is given twice", errs.ErrInvalidArgument, where)
		}
		seen[d.FilePath] = true
		if err := root.Check(d.FilePath); err != nil {
			return Written{}, fmt.Errorf("%w: %s is not in the table's data folder %s", errs.ErrValidation, where, root)
		}
		m := names.FindStringSubmatch(path.Base(d.FilePath))
		if m == nil || m[1] != fmt.Sprintf("%05d", d.Task) || m[2] != strconv.FormatInt(d.Attempt, 10) {
			return Written{}, fmt.Errorf("%w: %s is not named as a file of task %d, attempt %d of write %s", errs.ErrValidation, where, d.Task, d.Attempt, pw.WriteID)
		}
		if a, ok := attempts[d.Task]; ok && a != d.Attempt {
			return Written{}, fmt.Errorf("%w: task %d is given by attempts %d and %d: commit the files of one attempt per task", errs.ErrInvalidArgument, d.Task, a, d.Attempt)
		}
		attempts[d.Task] = d.Attempt
		values, err := partitionValues(p, d.Partition)
		if err != nil {
			return Written{}, fmt.Errorf("%w: %s: %v", errs.ErrInvalidArgument, where, err)
		}
		wr.Files = append(wr.Files, WrittenFile{File: parquet.File{
			Path: d.FilePath, Rows: d.RecordCount, Size: d.FileSizeInBytes,
			ColumnSizes: d.ColumnSizes, ValueCounts: d.ValueCounts, NullCounts: d.NullValueCounts, NaNCounts: d.NanValueCounts,
			Lower: d.LowerBounds, Upper: d.UpperBounds, SplitOffsets: d.SplitOffsets,
		}, Values: values, SortOrderID: d.SortOrderID})
		wr.Paths = append(wr.Paths, d.FilePath)
		wr.Rows += d.RecordCount
		wr.Bytes += d.FileSizeInBytes
	}
	w.Prog.Rows.Add(wr.Rows)
	w.Prog.Bytes.Add(wr.Bytes)
	w.Prog.Files.Add(int64(len(wr.Files)))
	return wr, nil
}

// partitionValues decodes a description's partition tuple for p's spec.
func partitionValues(p *Plan, part [][]byte) (map[int]any, error) {
	if len(part) != p.Spec.NumFields() {
		return nil, fmt.Errorf("partition has %d values, the spec %d fields", len(part), p.Spec.NumFields())
	}
	values := make(map[int]any, len(part))
	for i, pf := range p.Spec.Fields() {
		if part[i] == nil {
			values[pf.FieldID] = nil
			continue
		}
		src, ok := p.Schema.FindFieldByID(pf.SourceID())
		if !ok {
			return nil, fmt.Errorf("partition field %s has no source column", pf.Name)
		}
		lit, err := iceberg.LiteralFromBytes(pf.Transform.ResultType(src.Type), part[i])
		if err != nil {
			return nil, fmt.Errorf("partition field %s: %v", pf.Name, err)
		}
		v := lit.Any()
		if b, ok := v.([]byte); ok && b == nil {
			v = []byte{}
		}
		values[pf.FieldID] = v
	}
	return values, nil
}

// checkWriteID fails when m holds a snapshot committed by the
// distributed write this writer commits (its write id in the summary):
// a write id commits once, so a coordinator that retries a commit whose
// outcome it did not learn cannot commit the files twice.
func (w *Writer) checkWriteID(m table.Metadata) error {
	if w.WriteID == "" {
		return nil
	}
	if id, ok := CommittedWrite(m, w.WriteID); ok {
		return &AlreadyCommittedError{WriteID: w.WriteID, SnapshotID: id}
	}
	return nil
}

// AlreadyCommittedError says a distributed write's files are committed
// already (an errs.ErrValidation).
type AlreadyCommittedError struct {
	WriteID    string
	SnapshotID int64
}

func (e *AlreadyCommittedError) Error() string {
	return fmt.Sprintf("%v: write %s is already committed (snapshot %d)", errs.ErrValidation, e.WriteID, e.SnapshotID)
}

// Unwrap makes the error an errs.ErrValidation.
func (e *AlreadyCommittedError) Unwrap() error { return errs.ErrValidation }

// CommittedWrite finds the snapshot of m that committed write writeID.
func CommittedWrite(m table.Metadata, writeID string) (int64, bool) {
	for _, sn := range m.Snapshots() {
		if sn.Summary != nil && sn.Summary.Properties[SummaryWriteID] == writeID {
			return sn.SnapshotID, true
		}
	}
	return 0, false
}

// WriteRoot is the data folder a distributed write's files go to: the
// plan's, as Prepare would make it, for a table that may not exist yet.
func (w *Writer) WriteRoot(ctx context.Context) (paths.Root, map[string]string, error) {
	t, err := w.loadIfExists(ctx)
	if err != nil {
		return paths.Root{}, nil, err
	}
	loc, props, err := w.writeLocation(ctx, t)
	if err != nil {
		return paths.Root{}, nil, err
	}
	return paths.DataRoot(loc, props), props, nil
}

// loadIfExists loads the write's table; nil when it does not exist.
func (w *Writer) loadIfExists(ctx context.Context) (*table.Table, error) {
	t, err := w.Cat.LoadTable(ctx, w.Ident)
	switch {
	case err == nil:
		return t, nil
	case errors.Is(err, icecat.ErrNoSuchTable):
		return nil, nil
	}
	return nil, catalog.MapErr(err, w.ID)
}

// writeLocation is the location and the properties of the table the
// write's files go to, t the loaded table (nil: it does not exist).
func (w *Writer) writeLocation(ctx context.Context, t *table.Table) (string, map[string]string, error) {
	var err error
	newShape := w.Req.Op == request.OpCreate || w.Req.Op == request.OpReplace || w.Req.Op == request.OpCreateOrReplace
	if t != nil && !newShape {
		return t.Metadata().Location(), t.Metadata().Properties(), nil
	}
	var old map[string]string
	loc := w.Req.Location
	if t != nil {
		old = t.Metadata().Properties()
		if loc == "" {
			loc = t.Metadata().Location()
		}
	}
	if loc == "" {
		if loc, err = w.defaultLocation(ctx); err != nil {
			return "", nil, err
		}
	}
	return strings.TrimSuffix(loc, "/"), w.tableProps(old), nil
}
