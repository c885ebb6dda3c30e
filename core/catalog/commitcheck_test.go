package catalog

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestLostSQLAnswer(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"none", nil, false},
		{"compare-and-swap lost", fmt.Errorf("%w: moved underneath us", table.ErrCommitFailed), false},
		{"postgres answered", &pgconn.PgError{Code: "40001"}, false},
		{"mysql answered", &mysql.MySQLError{Number: 1213}, false},
		{"metadata file not written", &fs.PathError{Op: "open", Path: "/wh/m.json", Err: fs.ErrPermission}, false},
		{"S3 refused the metadata file", errors.New("operation error S3: PutObject, 503"), false},
		{"answer lost (pgx)", fmt.Errorf("error updating: %w", pgconn.ErrConnClosed), true},
		{"answer lost (text)", errors.New("conn closed"), true},
		{"connection reset", fmt.Errorf("commit: %w", io.ErrUnexpectedEOF), true},
		{"mysql connection broke", mysql.ErrInvalidConn, true},
	}
	for _, c := range cases {
		if got := lostSQLAnswer(c.err); got != c.want {
			t.Errorf("%s: lostSQLAnswer(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

func TestAddedSnapshotID(t *testing.T) {
	sn := &table.Snapshot{SnapshotID: 4242, SequenceNumber: 3}
	id, ok := addedSnapshotID([]table.Update{table.NewSetPropertiesUpdate(map[string]string{"a": "b"}), table.NewAddSnapshotUpdate(sn)})
	if !ok || id != 4242 {
		t.Fatalf("addedSnapshotID = %d, %v; want 4242", id, ok)
	}
	if _, ok := addedSnapshotID([]table.Update{table.NewSetPropertiesUpdate(map[string]string{"a": "b"})}); ok {
		t.Fatal("an update without a snapshot has an added snapshot")
	}
}
