package catalog

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// sqliteChild runs in a child process (the test binary re-executed): it
// opens the database named by SQLITE_CHILD and does what SQLITE_CHILD_DO
// says, printing the outcome.
func sqliteChild() {
	path, do := os.Getenv("SQLITE_CHILD"), os.Getenv("SQLITE_CHILD_DO")
	switch do {
	case "try-write":
		// Another process trying to write while the parent holds a write
		// transaction: it must be refused (busy), not let in.
		db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)")
		if err != nil {
			os.Stdout.WriteString("error " + err.Error() + "\n")
			return
		}
		defer db.Close()
		_, err = db.Exec("BEGIN IMMEDIATE")
		switch {
		case err == nil:
			os.Stdout.WriteString("granted\n")
		case isBusy(err):
			os.Stdout.WriteString("busy\n")
		default:
			os.Stdout.WriteString("error " + err.Error() + "\n")
		}
	case "hold-wal":
		db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
		if err == nil {
			_, err = db.Exec("CREATE TABLE IF NOT EXISTS x(a)")
		}
		if err != nil {
			os.Stdout.WriteString("error " + err.Error() + "\n")
			return
		}
		db.SetMaxIdleConns(1)
		os.Stdout.WriteString("holding\n")
		bufio.NewReader(os.Stdin).ReadString('\n')
		db.Close()
	}
}

func TestMain(m *testing.M) {
	if os.Getenv("SQLITE_CHILD") != "" {
		sqliteChild()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func startChild(t *testing.T, path, do string) (*exec.Cmd, *bufio.Reader, func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "SQLITE_CHILD="+path, "SQLITE_CHILD_DO="+do)
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := func() { stdin.Close(); cmd.Wait() }
	return cmd, bufio.NewReader(out), stop
}

// The catalog's locks on its database survive a close of another
// descriptor of the file in the process: what another SQLite copy (Python's
// sqlite3, PyIceberg) does when it closes its connection. With the POSIX
// locks SQLite uses by default that close drops them, and another process
// gets in.
func TestCatalogLocksSurviveAForeignClose(t *testing.T) {
	dir := t.TempDir()
	c := openTestSQL(t, dir)
	path := filepath.Join(dir, "c.db")
	db := c.Catalog.(*typedCatalog).head.db
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(context.Background(), "ROLLBACK")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, out, stop := startChild(t, path, "try-write")
	defer stop()
	line, _ := out.ReadString('\n')
	if line != "busy\n" {
		t.Fatalf("another process trying to write while the catalog holds a write transaction: %q, want busy", line)
	}
}

func TestCatalogFileUsesARollbackJournal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.db")
	// A file an earlier version left in WAL mode is switched back.
	old, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Exec("CREATE TABLE x(a)"); err != nil {
		t.Fatal(err)
	}
	old.Close()
	c := openTestSQL(t, dir)
	var mode string
	if err := c.Catalog.(*typedCatalog).head.db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "delete" {
		t.Fatalf("journal mode %q, want delete", mode)
	}
}

// A file another process keeps open in WAL mode cannot be switched; opening
// the catalog fails with a typed error saying why, instead of sharing the
// file unsafely.
func TestWALFileHeldElsewhereIsRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.db")
	_, out, stop := startChild(t, path, "hold-wal")
	defer stop()
	if line, _ := out.ReadString('\n'); line != "holding\n" {
		t.Fatalf("child: %q", line)
	}
	_, err := openWaiting(context.Background(), "local", map[string]string{"type": "sql", "uri": "sqlite:///" + path, "warehouse": "file://" + filepath.Join(dir, "wh")}, 100*time.Millisecond)
	if !errors.Is(err, errs.ErrIO) || !strings.Contains(err.Error(), "journal mode") {
		t.Fatalf("err = %v, want an I/O error about the journal mode", err)
	}
}
