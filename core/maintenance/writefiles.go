package maintenance

import (
	"errors"
	"path"

	icebergio "github.com/apache/iceberg-go/io"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// RemoveMatching deletes the files under root whose base name matches
// match and whose location is not in keep, and returns how many it
// deleted and the locations it could not delete: the files the tasks of a
// distributed write left behind (attempts that were killed, retried or
// never committed), listed with lfs and deleted with wfs. On storage that
// cannot list, only extra (locations the caller knows of, checked the
// same way) are considered.
func RemoveMatching(lfs icebergio.IO, wfs icebergio.IO, root string, partitionNames []string, match func(base string) bool, keep map[string]bool, extra []string) (deleted int, failed []string, err error) {
	candidates := extra
	listed, err := List(lfs, root, partitionNames)
	switch {
	case err == nil:
		candidates = candidates[:0:0]
		for _, l := range listed {
			candidates = append(candidates, l.Location)
		}
	case errors.Is(err, errs.ErrNotSupported):
	default:
		return 0, nil, err
	}
	seen := map[string]bool{}
	for _, loc := range candidates {
		if seen[loc] || keep[loc] || !match(path.Base(loc)) {
			continue
		}
		seen[loc] = true
		if err := wfs.Remove(loc); err != nil {
			failed = append(failed, loc)
			continue
		}
		deleted++
	}
	return deleted, failed, nil
}
