package testhooks

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// The test keys are refused unless the hooks are built in; other keys
// never are.
func TestCheckConf(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		conf map[string]string
		test bool
	}{
		{map[string]string{"test.hooks": "true"}, true},
		{map[string]string{"wap.id": "w", "test.commit-delay-ms": "10"}, true},
		{map[string]string{"spark.sql.iceberg.test.commit-delay-signal": "/x"}, true},
		{map[string]string{"testing": "1", "spark.wap.id": "w", "target-file-size-bytes": "10"}, false},
		{nil, false},
	} {
		err := CheckConf(c.conf)
		if refused := c.test && !Enabled; refused {
			if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), "unknown session configuration key") {
				t.Errorf("%v: %v, want an unknown-key error", c.conf, err)
			}
		} else if err != nil {
			t.Errorf("%v: %v", c.conf, err)
		}
	}
}

// The pause runs only with the hooks built in and turned on.
func TestCommitDelaySignals(t *testing.T) {
	t.Parallel()
	signal := t.TempDir() + "/waiting"
	CommitDelay(map[string]string{"test.commit-delay-signal": signal, "test.commit-delay-ms": "1"})
	if fileExists(signal) {
		t.Fatal("signalled without test.hooks")
	}
	CommitDelay(map[string]string{"test.hooks": "true", "test.commit-delay-signal": signal, "test.commit-delay-ms": "1"})
	if fileExists(signal) != Enabled {
		t.Fatalf("signal file exists: %v, hooks built in: %v", fileExists(signal), Enabled)
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
