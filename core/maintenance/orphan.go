package maintenance

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/catalog"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/paths"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
)

// DefaultOrphanAge is how old a file must be to count as an orphan when no
// older_than is given (Java's DeleteOrphanFiles: 3 days).
const DefaultOrphanAge = 3 * 24 * time.Hour

// MinOrphanInterval is the smallest interval between older_than and now the
// procedure accepts (Spark's RemoveOrphanFilesProcedure): a younger file
// may belong to a write that has not committed yet.
const MinOrphanInterval = 24 * time.Hour

// OrphanResult is what remove_orphan_files returns.
type OrphanResult struct {
	Table string `json:"table"`
	// OrphanFileLocations are the orphan files found (deleted unless
	// DryRun), as listed, in order.
	OrphanFileLocations []string `json:"orphan_file_locations"`
	DryRun              bool     `json:"dry_run"`
	// FailedDeletes are orphans that could not be deleted.
	FailedDeletes []string `json:"failed_deletes"`
}

// Listed is one file a listing found.
type Listed struct {
	Location string
	ModTime  time.Time
}

// RemoveOrphanFiles finds, as Spark's remove_orphan_files, the files under
// the table's location (or req.Location) last modified before older_than
// (default now minus 3 days) that nothing in the table's current metadata
// reaches, and deletes them unless req.DryRun.
func RemoveOrphanFiles(ctx context.Context, tg Target, req *request.Request, now time.Time) (*OrphanResult, error) {
	t, err := tg.load(ctx)
	if err != nil {
		return nil, err
	}
	m := t.Metadata()
	if err := CheckGC(m.Properties(), "delete orphan files"); err != nil {
		return nil, err
	}
	olderThan := now.Add(-DefaultOrphanAge)
	if req.OlderThanMs != nil {
		olderThan = time.UnixMilli(*req.OlderThanMs)
		if now.Sub(olderThan) < MinOrphanInterval {
			return nil, fmt.Errorf("%w: Cannot remove orphan files with an interval less than 24 hours (older_than %s, now %s). "+
				"A younger file may belong to a write that has not committed yet", errs.ErrInvalidArgument,
				olderThan.UTC().Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339Nano))
		}
	}
	root := req.Location
	if root == "" {
		root = m.Location()
	}
	fsys, err := t.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errs.ErrIO, err)
	}
	valid, err := ValidFiles(ctx, fsys, t)
	if err != nil {
		return nil, err
	}
	props := catalog.FileIOProps(tg.Cat.Props, m.Properties())
	lfs, err := catalog.OpenFS(ctx, props, root)
	if err != nil {
		return nil, fmt.Errorf("%w: opening %s: %v", errs.ErrIO, root, err)
	}
	listed, err := List(lfs, root, hiddenPartitionNames(m))
	if err != nil {
		return nil, err
	}
	orphans, err := Orphans(listed, valid, olderThan)
	if err != nil {
		return nil, err
	}
	res := &OrphanResult{Table: tg.ID.String(), OrphanFileLocations: orphans, DryRun: req.DryRun, FailedDeletes: []string{}}
	if req.DryRun || len(orphans) == 0 {
		return res, nil
	}
	wfs, err := tg.Cat.WriteFS(ctx, m.Properties(), root)
	if err != nil {
		return nil, err
	}
	files := Files{}
	for _, p := range orphans {
		files[p] = DataFile
	}
	_, res.FailedDeletes = deleteFiles(ctx, wfs, files)
	return res, nil
}

// ValidFiles returns every file t's current metadata reaches: the files
// of all its snapshots (Reachable), its current and previous metadata
// files and its version hint.
func ValidFiles(ctx context.Context, fsys icebergio.IO, t *table.Table) ([]string, error) {
	m := t.Metadata()
	files, err := Reachable(ctx, fsys, m, nil)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(files)+8)
	for p := range files {
		out = append(out, p)
	}
	if loc := t.MetadataLocation(); loc != "" {
		out = append(out, loc)
	}
	for e := range m.PreviousFiles() {
		out = append(out, e.MetadataFile)
	}
	out = append(out, paths.MetadataRoot(m.Location(), m.Properties()).String()+"/version-hint.text")
	return out, nil
}

// hiddenPartitionNames are the partition field names of m that start with
// "_" or ".": folders "<name>=..." are data, not hidden.
func hiddenPartitionNames(m table.Metadata) []string {
	var out []string
	for _, sp := range m.PartitionSpecs() {
		for _, f := range sp.Fields() {
			if strings.HasPrefix(f.Name, "_") || strings.HasPrefix(f.Name, ".") {
				out = append(out, f.Name)
			}
		}
	}
	return out
}

// hidden reports whether a file or folder name is skipped by the listing,
// as Hadoop's and Spark's hidden-path filter: a name starting with "_" or
// "." unless it is a partition folder of such a field.
func hidden(name string, partitionNames []string) bool {
	if !strings.HasPrefix(name, "_") && !strings.HasPrefix(name, ".") {
		return false
	}
	for _, p := range partitionNames {
		if strings.HasPrefix(name, p+"=") {
			return false
		}
	}
	return true
}

// List returns every file under root (not hidden, see hidden) with its
// modification time, located with root's spelling: a local listing gives
// local paths, which are turned back into root's form ("file:///w/t/a"
// for root "file:///w/t").
func List(lfs icebergio.IO, root string, partitionNames []string) ([]Listed, error) {
	walker, ok := lfs.(icebergio.ListableIO)
	if !ok {
		return nil, fmt.Errorf("%w: the storage of %s cannot list files", errs.ErrNotSupported, root)
	}
	localRoot, local := paths.LocalPath(root)
	var out []Listed
	first := true
	err := walker.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		top := first
		first = false
		if err != nil {
			if top && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll // nothing there, nothing orphaned
			}
			return err
		}
		if d.IsDir() {
			if !top && hidden(d.Name(), partitionNames) {
				return fs.SkipDir
			}
			return nil
		}
		if hidden(d.Name(), partitionNames) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // deleted while listing
			}
			return err
		}
		loc := p
		if local {
			rel, ok := strings.CutPrefix(p, strings.TrimSuffix(localRoot, "/"))
			if !ok {
				return fmt.Errorf("listing %s gave %s, outside it", root, p)
			}
			loc = strings.TrimSuffix(root, "/") + rel
		}
		out = append(out, Listed{Location: loc, ModTime: info.ModTime()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: listing %s: %v", errs.ErrIO, root, err)
	}
	return out, nil
}

// Location is a file location split as Spark's orphan-file action compares
// them: scheme (s3a and s3n are s3; "" when there is none), authority and
// path (cleaned).
type Location struct {
	Scheme, Authority, Path string
}

// ParseLocation splits loc. Local locations ("/x", "file:/x", "file:///x",
// "file://localhost/x") all have path "/x" and authority "".
func ParseLocation(loc string) Location {
	if p, ok := paths.LocalPath(loc); ok {
		scheme := ""
		if len(loc) >= 5 && strings.EqualFold(loc[:5], "file:") {
			scheme = "file"
		}
		return Location{Scheme: scheme, Path: path.Clean("/" + p)}
	}
	scheme, rest, _ := strings.Cut(loc, "://")
	scheme = strings.ToLower(scheme)
	switch scheme {
	case "s3a", "s3n":
		scheme = "s3"
	}
	auth, p, _ := strings.Cut(rest, "/")
	return Location{Scheme: scheme, Authority: auth, Path: path.Clean("/" + p)}
}

// compatible reports whether two locations with the same path name the
// same file: schemes and authorities are only compared when both have one.
func compatible(a, b Location) bool {
	if a.Scheme != "" && b.Scheme != "" && a.Scheme != b.Scheme {
		// A local file is "file:" or has no scheme at all: both are local.
		return false
	}
	return a.Authority == "" || b.Authority == "" || a.Authority == b.Authority
}

// Orphans returns the listed files modified before olderThan that no valid
// location names, in order. A listed file whose path only matches valid
// locations of another scheme or authority is an error (Spark's default
// prefix mismatch mode): it cannot be told whether it is an orphan.
func Orphans(listed []Listed, valid []string, olderThan time.Time) ([]string, error) {
	byPath := map[string][]Location{}
	for _, v := range valid {
		l := ParseLocation(v)
		byPath[l.Path] = append(byPath[l.Path], l)
	}
	out := []string{}
	var conflicts []string
	for _, f := range listed {
		if !f.ModTime.Before(olderThan) {
			continue
		}
		l := ParseLocation(f.Location)
		cands := byPath[l.Path]
		if slices.ContainsFunc(cands, func(v Location) bool { return compatible(l, v) }) {
			continue
		}
		if len(cands) > 0 {
			conflicts = append(conflicts, fmt.Sprintf("%s (metadata: %s://%s)", f.Location, cands[0].Scheme, cands[0].Authority))
			continue
		}
		out = append(out, f.Location)
	}
	if len(conflicts) > 0 {
		slices.Sort(conflicts)
		return nil, fmt.Errorf("%w: Unable to determine whether certain files are orphan: the metadata references files that match listed files except for their scheme or authority: %s",
			errs.ErrValidation, strings.Join(conflicts, ", "))
	}
	slices.Sort(out)
	return out, nil
}
