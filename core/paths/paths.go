package paths

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/apache/iceberg-go"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// PropDataPath is the table property Iceberg's default location provider
// puts data files under instead of <location>/data.
const PropDataPath = "write.data.path"

// PropMetadataPath is the table property metadata files go under instead
// of <location>/metadata.
const PropMetadataPath = "write.metadata.path"

// Storage limits on names. A local (or HDFS) path has at most nameMax
// bytes per segment and pathMax bytes in all; an object store key at most
// keyMax bytes.
const (
	nameMax = 255
	pathMax = 4095
	keyMax  = 1024
	// MaxFileName bounds the names this project gives data and delete
	// files inside a partition folder ("00001-<uuid>-deletes.parquet"
	// with a sequence number of up to 19 digits is 72 bytes).
	MaxFileName = 80
)

// Root is the folder a table's data files go under.
type Root struct {
	loc string // without trailing slash
	// keyFrom is where the object key starts in loc (after
	// scheme://bucket/) on an object store; -1 on a file system.
	keyFrom int
}

// DataRoot is where the data files of the table at location go:
// write.data.path when set, else <location>/data (as Iceberg's default
// location provider decides).
func DataRoot(location string, props map[string]string) Root {
	loc := strings.TrimRight(props[PropDataPath], "/")
	if loc == "" {
		loc = strings.TrimRight(location, "/") + "/data"
	}
	return NewRoot(loc)
}

// MetadataRoot is where the metadata files of the table at location go:
// write.metadata.path when set, else <location>/metadata.
func MetadataRoot(location string, props map[string]string) Root {
	loc := strings.TrimRight(props[PropMetadataPath], "/")
	if loc == "" {
		loc = strings.TrimRight(location, "/") + "/metadata"
	}
	return NewRoot(loc)
}

// NewRoot is a data root at loc.
func NewRoot(loc string) Root {
	loc = strings.TrimRight(loc, "/")
	r := Root{loc: loc, keyFrom: -1}
	if scheme, rest, ok := strings.Cut(loc, "://"); ok && isObjectStore(scheme) {
		r.keyFrom = len(loc) // a bucket without a key prefix
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			r.keyFrom = len(scheme) + 3 + i + 1
		}
	}
	return r
}

func isObjectStore(scheme string) bool {
	switch strings.ToLower(scheme) {
	case "s3", "s3a", "s3n", "gs", "gcs", "abfs", "abfss", "wasb", "wasbs", "oss", "cos", "r2":
		return true
	}
	return false
}

// String is the root's location.
func (r Root) String() string { return r.loc }

// File is the location of a file named name directly in the root.
func (r Root) File(name string) (string, error) {
	p := r.loc + "/" + name
	return p, r.Check(p)
}

// Dir is the folder of the data files of the partition tuple values (by
// partition field id) of spec, sc the table schema its source columns are
// in: the root, then field=value per field, both escaped as Iceberg's
// PartitionSpec.partitionToPath escapes them. A value whose folder name is
// too long for the storage, or that would make the path of a file in it
// too long, is an errs.ErrValidation naming the field and the start of the
// value.
func (r Root) Dir(spec iceberg.PartitionSpec, sc *iceberg.Schema, values map[int]any) (string, error) {
	if spec.IsUnpartitioned() {
		return r.loc, r.checkDir(r.loc)
	}
	var b strings.Builder
	b.WriteString(r.loc)
	longest, longestLen := -1, 0
	var fields []iceberg.PartitionField
	var humans []string
	for _, f := range spec.Fields() {
		var rt iceberg.Type
		if sc != nil {
			if src, ok := sc.FindFieldByID(f.SourceID()); ok {
				rt = f.Transform.ResultType(src.Type)
			}
		}
		human := HumanString(f.Transform, rt, values[f.FieldID])
		seg := Escape(f.Name) + "=" + Escape(human)
		if r.keyFrom < 0 && len(seg) > nameMax {
			return "", tooLong(f.Name, human, fmt.Sprintf("its folder name %s=... is %d bytes escaped, longer than the %d a file name may have", f.Name, len(seg), nameMax))
		}
		if len(seg) > longestLen {
			longest, longestLen = len(fields), len(seg)
		}
		fields, humans = append(fields, f), append(humans, human)
		b.WriteByte('/')
		b.WriteString(seg)
	}
	dir := b.String()
	if n, limit := r.nameBytes(dir)+1+MaxFileName, r.limit(); n > limit && longest >= 0 {
		what := fmt.Sprintf("the path of a data file would be %d bytes, longer than the %d the storage allows", n, limit)
		return "", tooLong(fields[longest].Name, humans[longest], what)
	}
	return dir, r.checkDir(dir)
}

// tooLong is the error for a partition value the storage cannot name.
func tooLong(field, human, what string) error {
	return fmt.Errorf("%w: the value of partition field %q starting %q is too long: %s", errs.ErrValidation, field, prefix(human, 40), what)
}

// prefix is the first n characters of s (whole UTF-8 sequences).
func prefix(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i] + "..."
		}
		n--
	}
	if !utf8.ValidString(s) && len(s) > 4*n {
		return s[:4*n] + "..."
	}
	return s
}

// limit is the most bytes a path (or key) may have on the root's storage.
func (r Root) limit() int {
	if r.keyFrom >= 0 {
		return keyMax
	}
	return pathMax
}

// nameBytes is the length the storage counts of location p under the
// root: the object key, or the local path.
func (r Root) nameBytes(p string) int {
	if r.keyFrom >= 0 {
		return max(0, len(p)-r.keyFrom)
	}
	if lp, ok := LocalPath(p); ok {
		return len(lp)
	}
	return len(p)
}

// checkDir checks a folder as the files in it will be checked.
func (r Root) checkDir(dir string) error {
	return r.Check(dir + "/" + strings.Repeat("f", 1))
}

// Check is the last check on the path of a data or delete file before it
// is written: p is strictly inside the root (no empty, "." or ".."
// segment after it) and short enough for the storage. A failure is an
// errs.ErrValidation; data values can never cause one (their escaped text
// has no "/"), so it stops a bug, not a user.
func (r Root) Check(p string) error {
	rest, ok := strings.CutPrefix(p, r.loc+"/")
	if !ok || rest == "" {
		return fmt.Errorf("%w: data file %q is not inside the table's data location %q", errs.ErrValidation, p, r.loc)
	}
	for _, seg := range strings.Split(rest, "/") {
		switch {
		case seg == "" || seg == "." || seg == "..":
			return fmt.Errorf("%w: data file %q has a %q path segment inside the table's data location %q", errs.ErrValidation, p, seg, r.loc)
		case strings.IndexByte(seg, 0) >= 0:
			return fmt.Errorf("%w: data file %q has a NUL byte in its path", errs.ErrValidation, p)
		case r.keyFrom < 0 && len(seg) > nameMax:
			return fmt.Errorf("%w: data file %q has a path segment of %d bytes, longer than the %d a file name may have", errs.ErrValidation, p, len(seg), nameMax)
		}
	}
	if n, limit := r.nameBytes(p), r.limit(); n > limit {
		return fmt.Errorf("%w: data file %q is %d bytes long, longer than the %d the storage allows", errs.ErrValidation, p, n, limit)
	}
	return nil
}

// LocalPath is the local file system path of location loc, literally:
// "file:///a/b%20c" is "/a/b%20c" (never URL-decoded), "file:/a" (as
// Hadoop writes it) is "/a", "file://localhost/a" is "/a", and a location
// without a scheme is itself. ok is false for a location of another
// scheme or a file URI naming another host.
func LocalPath(loc string) (string, bool) {
	if len(loc) >= 5 && strings.EqualFold(loc[:5], "file:") {
		rest := loc[5:]
		if after, ok := strings.CutPrefix(rest, "//"); ok {
			host, path, found := strings.Cut(after, "/")
			if host != "" && !strings.EqualFold(host, "localhost") {
				return "", false
			}
			if !found {
				return "/", true
			}
			return "/" + path, true
		}
		return rest, true
	}
	// Another scheme ("s3://..."): a colon before the first slash with
	// "//" after it. A native path may contain a colon elsewhere.
	if i := strings.Index(loc, "://"); i > 0 && !strings.ContainsAny(loc[:i], "/\\") {
		return "", false
	}
	return loc, true
}
