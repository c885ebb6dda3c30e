package gotests

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/pyiceberg-go/pyiceberg-go/core/config"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/ops"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
	"github.com/pyiceberg-go/pyiceberg-go/core/session"
	"github.com/pyiceberg-go/pyiceberg-go/core/testhooks"
)

// needHooks skips a test that pauses an operation with the test hooks
// unless they are built in (go test -tags pig_testhooks).
func needHooks(t *testing.T) {
	t.Helper()
	if !testhooks.Enabled {
		t.Skip("needs the test hooks: go test -tags pig_testhooks")
	}
}

// openWithConf opens a session on e's catalog with conf, returning the error.
func (e *env) openWithConf(conf map[string]string) (*session.Session, error) {
	return session.Open(config.Session{
		Catalogs: map[string]map[string]string{"local": maps.Clone(e.props)},
		Env:      map[string]string{}, Home: e.dir, Conf: conf,
	})
}

// The release build has no test hooks: the __panic operation is unknown
// (as a document and as a request), and so are the test.* session keys.
func TestReleaseBuildRejectsTheTestHooks(t *testing.T) {
	if testhooks.Enabled {
		t.Skip("built with the test hooks (pig_testhooks)")
	}
	_, err := request.Decode([]byte(`{"op":"__panic","table":"db.t"}`))
	wantKind(t, err, errs.ErrInvalidArgument, `unknown operation "__panic"`)
	e := newEnv(t)
	s := e.session(t)
	_, err = ops.Execute(ctxT(t), s, &request.Request{Op: request.OpPanic, Table: "db.t"}, nil, nil)
	wantKind(t, err, errs.ErrInvalidArgument, `unknown operation "__panic"`)
	for _, conf := range []map[string]string{
		{"test.commit-delay-ms": "1500"},
		{"test.hooks": "true", "test.commit-delay-ms": "1500", "test.commit-delay-signal": "/tmp/x"},
		{"spark.sql.iceberg.test.hooks": "true"},
	} {
		s, err := e.openWithConf(conf)
		if s != nil {
			_ = s.Close()
		}
		if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), "unknown session configuration key") {
			t.Errorf("conf %v: %v, want an unknown-key error", conf, err)
		}
	}
	// Other session keys are not affected.
	if s, err := e.openWithConf(map[string]string{"testing": "1", "wap.id": "w"}); err != nil {
		t.Errorf("ordinary keys: %v", err)
	} else {
		_ = s.Close()
	}
}

// With the hooks built in, __panic needs test.hooks=true and then panics.
func TestHooksBuildPanicsOnRequest(t *testing.T) {
	needHooks(t)
	if _, err := request.Decode([]byte(`{"op":"__panic"}`)); err != nil {
		t.Fatalf("decode: %v", err)
	}
	e := newEnv(t)
	_, err := ops.Execute(ctxT(t), e.session(t), &request.Request{Op: request.OpPanic}, nil, nil)
	wantKind(t, err, errs.ErrInvalidArgument, "needs test.hooks")
	s := e.sessionWithConf(t, map[string]string{"test.hooks": "true"})
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "injected panic") {
			t.Errorf("recovered %v, want the injected panic", r)
		}
	}()
	_, _ = ops.Execute(ctxT(t), s, &request.Request{Op: request.OpPanic}, nil, nil)
	t.Fatal("__panic returned")
}
