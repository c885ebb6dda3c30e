package catalog

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// lostSQLAnswer reports whether err, returned by a commit to a PostgreSQL or
// MySQL catalog, may hide a commit the database did: the connection broke
// while the transaction that moves the metadata location could have been in
// flight, so its COMMIT may have been done and only the answer lost. A
// database's own answer (a SQL error, the compare-and-swap finding another
// location) and a storage error (writing the metadata file, which comes
// first) are not. The drivers' "nothing was sent" markers are not trusted
// here: a COMMIT whose answer was lost came back as pgx's "conn closed",
// which calls itself safe to retry.
func lostSQLAnswer(err error) bool {
	if err == nil || errors.Is(err, table.ErrCommitFailed) {
		return false
	}
	var pgErr *pgconn.PgError
	var myErr *mysql.MySQLError
	var pathErr *fs.PathError
	if errors.As(err, &pgErr) || errors.As(err, &myErr) || errors.As(err, &pathErr) {
		return false
	}
	msg := err.Error()
	if strings.Contains(msg, "operation error S3") || strings.Contains(msg, "blob (key") {
		return false
	}
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) ||
		errors.Is(err, pgconn.ErrConnClosed) || strings.Contains(msg, "conn closed")
}

// settleCommit decides a commit to ident whose answer was lost (cause): if
// the table, read again, holds the snapshot the commit added, it landed and
// its metadata is returned; otherwise the outcome is unknown
// (errs.ErrCommitStateUnknown), so the caller keeps every file the commit
// may refer to. Not finding the snapshot is not taken as a failure: the
// lost COMMIT may still be on its way through the server.
func (c *typedCatalog) settleCommit(ctx context.Context, ident table.Identifier, updates []table.Update, cause error) (table.Metadata, string, error) {
	if id, ok := addedSnapshotID(updates); ok {
		for attempt, wait := 0, 100*time.Millisecond; attempt < 3; attempt, wait = attempt+1, wait*3 {
			t, err := c.Catalog.LoadTable(ctx, ident)
			if err == nil {
				if t.Metadata().SnapshotByID(id) != nil {
					if c.meta != nil {
						c.meta.put(ident, t.MetadataLocation(), t.Metadata())
					}
					return t.Metadata(), t.MetadataLocation(), nil
				}
				break
			}
			select {
			case <-ctx.Done():
				attempt = 3
			case <-time.After(wait):
			}
		}
	}
	what := fmt.Sprintf("committing to table %s: the connection to the catalog broke and the commit may or may not have landed (its files are kept)", strings.Join(ident, "."))
	return nil, "", c.red.wrap(what, errs.ErrCommitStateUnknown, cause)
}

// addedSnapshotID is the id of the snapshot updates add, if any.
func addedSnapshotID(updates []table.Update) (int64, bool) {
	for _, u := range updates {
		if u.Action() != table.UpdateAddSnapshot {
			continue
		}
		// iceberg-go's update type is unexported; its document is not.
		b, err := json.Marshal(u)
		if err != nil {
			continue
		}
		var doc struct {
			Snapshot *struct {
				ID int64 `json:"snapshot-id"`
			} `json:"snapshot"`
		}
		if json.Unmarshal(b, &doc) == nil && doc.Snapshot != nil {
			return doc.Snapshot.ID, true
		}
	}
	return 0, false
}
