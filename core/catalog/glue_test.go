package catalog

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/iceberg-go"
	icecat "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	gluesvc "github.com/aws/aws-sdk-go-v2/service/glue"
	gluetypes "github.com/aws/aws-sdk-go-v2/service/glue/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// noAWSEnv keeps the machine's AWS settings (variables, ~/.aws) out of a
// test.
func noAWSEnv(t *testing.T) {
	t.Helper()
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_CONFIG_FILE", empty)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", empty)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	for _, k := range []string{"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
		"AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_GLUE", "AWS_ENDPOINT_URL_S3"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
}

// TestGluePropertyNames: PyIceberg's GlueCatalog names, glue.* before the
// client.* fallbacks, and the S3 FileIO's client.* fallback.
func TestGluePropertyNames(t *testing.T) {
	s, err := glueSettingsOf(iceberg.Properties{
		"glue.region": "eu-west-1", "client.region": "us-east-1",
		"glue.access-key-id": "GLUEKEY", "glue.secret-access-key": "gluesecret", "glue.session-token": "gluetoken",
		"client.access-key-id": "CLIENTKEY", "client.secret-access-key": "clientsecret",
		"glue.endpoint": "http://127.0.0.1:5000", "glue.max-retries": "3", "glue.retry-mode": "adaptive",
		"glue.profile-name": "team", "glue.id": "123456789012", "warehouse": "s3://b/wh",
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.region != "eu-west-1" || s.keyID != "GLUEKEY" || s.secret != "gluesecret" || s.token != "gluetoken" ||
		s.endpoint != "http://127.0.0.1:5000" || s.attempts != 3 || s.mode != aws.RetryModeAdaptive || s.profile != "team" {
		t.Errorf("settings: %+v", s)
	}
	// The Glue secrets stay with the Glue client; S3 gets client.*.
	for _, k := range []string{"glue.access-key-id", "glue.secret-access-key", "glue.session-token"} {
		if _, ok := s.props[k]; ok {
			t.Errorf("%s reaches the FileIO properties", k)
		}
	}
	if s.props["s3.access-key-id"] != "CLIENTKEY" || s.props["s3.secret-access-key"] != "clientsecret" {
		t.Errorf("S3 fallback: %v", s.props)
	}
	if s.props["glue.id"] != "123456789012" || s.props["warehouse"] != "s3://b/wh" {
		t.Errorf("props: %v", s.props)
	}

	// client.* alone (Java's and PyIceberg's shared names); s3.* kept when set.
	s, err = glueSettingsOf(iceberg.Properties{
		"client.region": "us-east-1", "client.access-key-id": "CK", "client.secret-access-key": "cs", "client.session-token": "ct",
		"s3.access-key-id": "SK", "s3.secret-access-key": "ss",
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.region != "us-east-1" || s.keyID != "CK" || s.secret != "cs" || s.token != "ct" || s.attempts != glueDefaultAttempts {
		t.Errorf("client settings: %+v", s)
	}
	if s.props["s3.access-key-id"] != "SK" || s.props["s3.secret-access-key"] != "ss" || s.props["s3.session-token"] != "" {
		t.Errorf("S3 keys replaced: %v", s.props)
	}
	// Iceberg Java's default provider is the default chain.
	if _, err := glueSettingsOf(iceberg.Properties{"client.credentials-provider": "software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider"}); err != nil {
		t.Error(err)
	}
}

// TestGluePropertyErrorsNameKeysNotValues: what cannot be used is refused,
// typed, by property name, without the values.
func TestGluePropertyErrorsNameKeysNotValues(t *testing.T) {
	for _, c := range []struct {
		props iceberg.Properties
		want  error
		says  string
	}{
		{iceberg.Properties{"glue.access-key-id": "AKIDSECRETISH"}, errs.ErrInvalidArgument, "needs its secret"},
		{iceberg.Properties{"client.secret-access-key": "sekrit-value"}, errs.ErrInvalidArgument, "needs its key id"},
		{iceberg.Properties{"glue.session-token": "tok-value"}, errs.ErrInvalidArgument, "session token"},
		{iceberg.Properties{"glue.endpoint": "127.0.0.1:5000"}, errs.ErrInvalidArgument, "glue.endpoint"},
		{iceberg.Properties{"glue.max-retries": "many"}, errs.ErrInvalidArgument, "glue.max-retries"},
		{iceberg.Properties{"glue.retry-mode": "eager"}, errs.ErrInvalidArgument, "glue.retry-mode"},
		{iceberg.Properties{"client.credentials-provider": "software.amazon.awssdk.auth.credentials.SystemPropertyCredentialsProvider"}, errs.ErrNotSupported, "SystemPropertyCredentialsProvider"},
		{iceberg.Properties{"glue.lakeformation-enabled": "true"}, errs.ErrNotSupported, "lakeformation"},
	} {
		_, err := glueSettingsOf(c.props)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%v: %v, want %v saying %q", c.props, err, c.want, c.says)
			continue
		}
		for k, v := range c.props {
			if (isSecret(k) || strings.HasSuffix(k, "access-key-id")) && strings.Contains(err.Error(), v) {
				t.Errorf("%v: the error shows a value: %v", c.props, err)
			}
		}
	}
}

// TestGlueConfig: the region, the credentials and an endpoint that is
// Glue's alone (iceberg-go reads metadata from S3 with the same
// configuration); no region anywhere is refused at open.
func TestGlueConfig(t *testing.T) {
	noAWSEnv(t)
	ctx := context.Background()
	s, err := glueSettingsOf(iceberg.Properties{"client.region": "eu-central-1", "glue.endpoint": "http://127.0.0.1:5000",
		"glue.access-key-id": "AKID", "glue.secret-access-key": "secret", "glue.session-token": "tok"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := s.awsConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Region != "eu-central-1" {
		t.Errorf("region %q", cfg.Region)
	}
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil || creds.AccessKeyID != "AKID" || creds.SecretAccessKey != "secret" || creds.SessionToken != "tok" {
		t.Errorf("credentials %+v %v", creds, err)
	}
	if ep := gluesvc.NewFromConfig(cfg).Options().BaseEndpoint; ep == nil || *ep != "http://127.0.0.1:5000" {
		t.Errorf("Glue endpoint %v", ep)
	}
	if ep := s3.NewFromConfig(cfg).Options().BaseEndpoint; ep != nil {
		t.Errorf("S3 is sent to %s", *ep)
	}

	s, err = glueSettingsOf(iceberg.Properties{"glue.endpoint": "http://127.0.0.1:5000"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.awsConfig(ctx); !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), "glue.region") {
		t.Errorf("no region: %v", err)
	}
	_, err = Open(ctx, "g", map[string]string{"type": "glue", "glue.endpoint": "http://127.0.0.1:5000", "glue.secret-access-key": "s3cr3t-value", "glue.access-key-id": "AKIDVALUE"})
	if !errors.Is(err, errs.ErrInvalidArgument) || strings.Contains(err.Error(), "s3cr3t-value") || strings.Contains(err.Error(), "AKIDVALUE") {
		t.Errorf("open without a region: %v", err)
	}
}

// fakeGlue answers every Glue call with status (and a Glue error body),
// counting the calls by operation.
type fakeGlue struct {
	mu    sync.Mutex
	calls map[string]int
}

func (f *fakeGlue) count(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

func newFakeGlue(t *testing.T, status int, code string) (*fakeGlue, string) {
	f := &fakeGlue{calls: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AWSGlue.")
		f.mu.Lock()
		f.calls[op]++
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.Header().Set("X-Amzn-Errortype", code)
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"__type":%q,"message":"fake"}`, code)
	}))
	t.Cleanup(srv.Close)
	return f, srv.URL
}

// TestGlueTableWritesAreNotRetriedBlind: a server error on UpdateTable or
// CreateTable may follow their success, so the SDK does not retry them (a
// retried UpdateTable would fail the VersionId check its first try moved
// and read as a conflict); reads are retried; throttling is retried for
// both.
func TestGlueTableWritesAreNotRetriedBlind(t *testing.T) {
	noAWSEnv(t)
	ctx := context.Background()
	client := func(url string) *gluesvc.Client {
		s, err := glueSettingsOf(iceberg.Properties{"glue.region": "us-east-1", "glue.endpoint": url, "glue.max-retries": "3",
			"glue.access-key-id": "AKID", "glue.secret-access-key": "secret"})
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := s.awsConfig(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return gluesvc.NewFromConfig(cfg)
	}
	in := &gluesvc.UpdateTableInput{DatabaseName: aws.String("db"), TableInput: &gluetypes.TableInput{Name: aws.String("t")}, VersionId: aws.String("1")}

	f, url := newFakeGlue(t, http.StatusInternalServerError, "InternalServiceException")
	c := client(url)
	_, err := c.UpdateTable(ctx, in)
	if err == nil || f.count("UpdateTable") != 1 {
		t.Errorf("UpdateTable after a 500: %d calls, %v", f.count("UpdateTable"), err)
	}
	if k := classifyGlue(err, true); k != errs.ErrCommitStateUnknown || !lostGlueAnswer(err) {
		t.Errorf("a 500 on UpdateTable in a commit is %v (settled: %v)", k, lostGlueAnswer(err))
	}
	_, err = c.CreateTable(ctx, &gluesvc.CreateTableInput{DatabaseName: aws.String("db"), TableInput: &gluetypes.TableInput{Name: aws.String("t")}})
	if err == nil || f.count("CreateTable") != 1 {
		t.Errorf("CreateTable after a 500: %d calls, %v", f.count("CreateTable"), err)
	}
	_, err = c.GetTable(ctx, &gluesvc.GetTableInput{DatabaseName: aws.String("db"), Name: aws.String("t")})
	if err == nil || f.count("GetTable") != 3 {
		t.Errorf("GetTable after 500s: %d calls, %v", f.count("GetTable"), err)
	}
	if k := classifyGlue(err, true); k != errs.ErrIO {
		t.Errorf("a failed GetTable in a commit is %v", k)
	}

	f, url = newFakeGlue(t, http.StatusBadRequest, "ThrottlingException")
	if _, err := client(url).UpdateTable(ctx, in); err == nil || f.count("UpdateTable") != 3 {
		t.Errorf("UpdateTable throttled: %d calls, %v", f.count("UpdateTable"), err)
	}

	// Nothing listening: one try, and the commit certainly did not happen.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = client("http://"+addr).UpdateTable(ctx, in)
	if k := classifyGlue(err, true); k != errs.ErrIO || lostGlueAnswer(err) {
		t.Errorf("a refused UpdateTable in a commit is %v: %v", k, err)
	}
}

// TestClassifyGlue: the kinds of the Glue catalog's failures.
func TestClassifyGlue(t *testing.T) {
	opErr := func(op string, status int, err error) error {
		return &smithy.OperationError{ServiceID: "Glue", OperationName: op, Err: &awshttp.ResponseError{
			ResponseError: &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}}, Err: err}}}
	}
	cme := &gluetypes.ConcurrentModificationException{Message: aws.String("version changed")}
	for _, c := range []struct {
		name   string
		err    error
		commit bool
		want   error
	}{
		{"conflict", fmt.Errorf("%w: %w", table.ErrCommitFailed, opErr("UpdateTable", 400, cme)), true, errs.ErrCommitConflict},
		{"stale base", errors.New("requirement failed: branch main has changed: expected id 1, found 2"), true, nil},
		{"no table", fmt.Errorf("failed to get table db.t: %w", icecat.ErrNoSuchTable), false, errs.ErrNoSuchTable},
		{"no namespace", fmt.Errorf("x: %w", icecat.ErrNoSuchNamespace), false, errs.ErrNoSuchNamespace},
		{"exists", fmt.Errorf("x: %w", icecat.ErrTableAlreadyExists), true, errs.ErrTableAlreadyExists},
		{"create in a missing database", opErr("CreateTable", 400, &gluetypes.EntityNotFoundException{}), true, errs.ErrNoSuchNamespace},
		{"wrong secret", opErr("GetTable", 403, &smithy.GenericAPIError{Code: "SignatureDoesNotMatch"}), false, errs.ErrInvalidArgument},
		{"unknown key", opErr("GetDatabase", 400, &smithy.GenericAPIError{Code: "UnrecognizedClientException"}), false, errs.ErrInvalidArgument},
		{"denied", opErr("UpdateTable", 400, &gluetypes.AccessDeniedException{}), true, errs.ErrInvalidArgument},
		{"bad input", opErr("UpdateTable", 400, &gluetypes.InvalidInputException{}), true, errs.ErrInvalidArgument},
		{"server error on a write", opErr("UpdateTable", 500, &gluetypes.InternalServiceException{}), true, errs.ErrCommitStateUnknown},
		{"server error on a read", opErr("GetTable", 500, &gluetypes.InternalServiceException{}), true, errs.ErrIO},
		{"server error outside a commit", opErr("UpdateTable", 500, &gluetypes.InternalServiceException{}), false, errs.ErrIO},
		{"S3 refused", &smithy.OperationError{ServiceID: "S3", OperationName: "GetObject", Err: &smithy.GenericAPIError{Code: "SignatureDoesNotMatch"}}, false, errs.ErrIO},
		{"an unreadable refusal of a write", opErr("UpdateTable", 400, &smithy.DeserializationError{Err: errors.New("failed to copy error response body: use of closed network connection")}), true, errs.ErrCommitConflict},
		{"an unreadable refusal outside a commit", opErr("UpdateTable", 400, &smithy.DeserializationError{Err: errors.New("use of closed network connection")}), false, errs.ErrIO},
		{"cancelled", fmt.Errorf("x: %w", context.Canceled), true, errs.ErrCancelled},
		{"not iceberg", errors.New("table db.t is not an iceberg table"), false, errs.ErrValidation},
	} {
		if got := classifyGlue(c.err, c.commit); (c.want == nil) != (got == nil) || !errors.Is(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestGlueSecretsAreRedacted: the Glue and client credentials are secrets
// of the catalog (access key ids too, as s3.access-key-id is).
func TestGlueSecretsAreRedacted(t *testing.T) {
	red := newRedactor(map[string]string{"glue.access-key-id": "AKIAGLUE", "glue.secret-access-key": "gsecret",
		"glue.session-token": "gtoken", "client.access-key-id": "AKIACLIENT", "client.secret-access-key": "csecret",
		"client.session-token": "ctoken", "glue.region": "us-east-1"})
	msg := red.wrap("x", errs.ErrIO, errors.New("AKIAGLUE gsecret gtoken AKIACLIENT csecret ctoken us-east-1")).Error()
	if msg != "i/o error: x: *** *** *** *** *** *** us-east-1" {
		t.Errorf("%q", msg)
	}
}
