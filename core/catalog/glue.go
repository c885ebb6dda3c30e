package catalog

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	icecat "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/glue"
	"github.com/apache/iceberg-go/table"
	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	gluetypes "github.com/aws/aws-sdk-go-v2/service/glue/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/logging"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// The AWS Glue catalog's properties, as PyIceberg 0.12's GlueCatalog spells
// them: glue.* first, then the client.* fallbacks. iceberg-go's Glue catalog
// uses the same glue.* names for the client; glue.id and glue.skip-archive
// reach it unchanged.
const (
	glueRegionKey    = "glue.region"
	glueEndpointKey  = "glue.endpoint"
	glueKeyIDKey     = "glue.access-key-id"
	glueSecretKey    = "glue.secret-access-key"
	glueTokenKey     = "glue.session-token"
	glueProfileKey   = "glue.profile-name"
	glueRetriesKey   = "glue.max-retries"
	glueRetryModeKey = "glue.retry-mode"

	clientRegionKey   = "client.region"
	clientKeyIDKey    = "client.access-key-id"
	clientSecretKey   = "client.secret-access-key"
	clientTokenKey    = "client.session-token"
	clientProfileKey  = "client.profile-name"
	clientProviderKey = "client.credentials-provider"

	s3KeyIDKey  = "s3.access-key-id"
	s3SecretKey = "s3.secret-access-key"
	s3TokenKey  = "s3.session-token"
)

// glueDefaultAttempts is PyIceberg's GlueCatalog default (boto3
// max_attempts 10): Glue throttles busy accounts.
const glueDefaultAttempts = 10

// defaultChainProviders are Iceberg Java's client.credentials-provider
// classes whose credentials the Go SDK's default chain finds the same way.
var defaultChainProviders = map[string]bool{
	"software.amazon.awssdk.auth.credentials.defaultcredentialsprovider":             true,
	"software.amazon.awssdk.auth.credentials.environmentvariablecredentialsprovider": true,
}

// glueSettings is what opening a Glue catalog reads from its properties.
type glueSettings struct {
	region, endpoint, profile string
	keyID, secret, token      string
	attempts                  int
	mode                      aws.RetryMode
	// props go to iceberg-go's Glue catalog and to the tables' FileIO:
	// the catalog's properties with PyIceberg's client.* credentials as the
	// S3 FileIO's fallback, without the Glue-only secrets.
	props iceberg.Properties
}

// firstProp is the first non-empty value of keys in p.
func firstProp(p iceberg.Properties, keys ...string) string {
	for _, k := range keys {
		if v := strings.TrimSpace(p[k]); v != "" {
			return v
		}
	}
	return ""
}

// glueSettingsOf maps PyIceberg's GlueCatalog properties (and the Iceberg
// Java ones a Spark configuration carries) onto the Glue client's settings.
// Errors name properties, never values.
func glueSettingsOf(p iceberg.Properties) (glueSettings, error) {
	s := glueSettings{
		region:   firstProp(p, glueRegionKey, clientRegionKey),
		endpoint: strings.TrimSpace(p[glueEndpointKey]),
		profile:  firstProp(p, glueProfileKey, clientProfileKey),
		keyID:    firstProp(p, glueKeyIDKey, clientKeyIDKey),
		secret:   firstProp(p, glueSecretKey, clientSecretKey),
		token:    firstProp(p, glueTokenKey, clientTokenKey),
		attempts: glueDefaultAttempts,
		mode:     aws.RetryModeStandard,
	}
	if s.endpoint != "" {
		u, err := url.Parse(s.endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return s, fmt.Errorf("%w: %s is not an http(s) URL", errs.ErrInvalidArgument, glueEndpointKey)
		}
	}
	switch {
	case s.keyID != "" && s.secret == "":
		return s, fmt.Errorf("%w: an access key id (%s or %s) needs its secret (%s or %s)", errs.ErrInvalidArgument, glueKeyIDKey, clientKeyIDKey, glueSecretKey, clientSecretKey)
	case s.keyID == "" && s.secret != "":
		return s, fmt.Errorf("%w: a secret access key (%s or %s) needs its key id (%s or %s)", errs.ErrInvalidArgument, glueSecretKey, clientSecretKey, glueKeyIDKey, clientKeyIDKey)
	case s.keyID == "" && s.token != "":
		return s, fmt.Errorf("%w: a session token (%s or %s) needs an access key id and secret", errs.ErrInvalidArgument, glueTokenKey, clientTokenKey)
	}
	if v := strings.TrimSpace(p[clientProviderKey]); v != "" && !defaultChainProviders[strings.ToLower(v)] {
		return s, fmt.Errorf("%w: %s = %s is a Java class; give the credentials as %s / %s (or %s / %s), or leave it unset for the default chain (environment, ~/.aws, instance role)",
			errs.ErrNotSupported, clientProviderKey, v, glueKeyIDKey, glueSecretKey, clientKeyIDKey, clientSecretKey)
	}
	if v, err := strconv.ParseBool(firstProp(p, "glue.lakeformation-enabled")); err == nil && v {
		return s, fmt.Errorf("%w: glue.lakeformation-enabled: Lake Formation credential vending is not supported", errs.ErrNotSupported)
	}
	if v := strings.TrimSpace(p[glueRetriesKey]); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return s, fmt.Errorf("%w: %s = %q is not a positive number of attempts", errs.ErrInvalidArgument, glueRetriesKey, v)
		}
		s.attempts = n
	}
	switch v := strings.ToLower(strings.TrimSpace(p[glueRetryModeKey])); v {
	case "", "standard", "legacy":
	case "adaptive":
		s.mode = aws.RetryModeAdaptive
	default:
		return s, fmt.Errorf("%w: %s = %q: expected standard, adaptive or legacy", errs.ErrInvalidArgument, glueRetryModeKey, v)
	}
	s.props = maps.Clone(p)
	// PyIceberg's S3 FileIO falls back to the client.* credentials.
	if p[s3KeyIDKey] == "" && p[s3SecretKey] == "" && p[clientKeyIDKey] != "" {
		s.props[s3KeyIDKey] = p[clientKeyIDKey]
		s.props[s3SecretKey] = p[clientSecretKey]
		if v := p[clientTokenKey]; v != "" && p[s3TokenKey] == "" {
			s.props[s3TokenKey] = v
		}
	}
	// The Glue client has its own credentials; nothing downstream needs them.
	for _, k := range []string{glueKeyIDKey, glueSecretKey, glueTokenKey} {
		delete(s.props, k)
	}
	return s, nil
}

// awsConfig is the Glue client's configuration: the SDK's default chain
// (environment, ~/.aws, instance role) under the catalog's settings.
func (s glueSettings) awsConfig(ctx context.Context) (aws.Config, error) {
	opts := []func(*config.LoadOptions) error{
		config.WithHTTPClient(awshttp.NewBuildableClient().
			WithDialerOptions(func(d *net.Dialer) { d.Timeout = 30 * time.Second }).
			WithTransportOptions(func(t *http.Transport) { t.ResponseHeaderTimeout = 2 * time.Minute })),
		config.WithRetryer(s.retryer),
	}
	if s.region != "" {
		opts = append(opts, config.WithRegion(s.region))
	}
	if s.profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(s.profile))
	}
	if s.keyID != "" {
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(s.keyID, s.secret, s.token)))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return cfg, fmt.Errorf("%w: loading the AWS configuration: %v", errs.ErrInvalidArgument, err)
	}
	// The SDK's warnings (a response body it could not drain, ...) would
	// land on the host program's stderr; failures reach the caller.
	cfg.Logger = logging.Nop{}
	if cfg.Region == "" {
		return cfg, fmt.Errorf("%w: no AWS region: set %s (or %s), or AWS_REGION", errs.ErrInvalidArgument, glueRegionKey, clientRegionKey)
	}
	if s.endpoint != "" {
		// The endpoint is Glue's alone: iceberg-go reads table metadata
		// with this configuration too, and S3 must not be sent to Glue's
		// endpoint (s3.endpoint, when set, is S3's).
		cfg.ConfigSources = append([]any{glueEndpoint(s.endpoint)}, cfg.ConfigSources...)
		if _, all := os.LookupEnv("AWS_ENDPOINT_URL"); all {
			// The SDK then skips service endpoints from configuration
			// sources unless AWS_ENDPOINT_URL_GLUE is set.
			cfg.BaseEndpoint = aws.String(s.endpoint)
		}
	}
	return cfg, nil
}

// glueEndpoint is a configuration source that names Glue's endpoint and no
// other service's.
type glueEndpoint string

// GetServiceBaseEndpoint answers the SDK's question for one service.
func (e glueEndpoint) GetServiceBaseEndpoint(_ context.Context, sdkID string) (string, bool, error) {
	if sdkID == "Glue" {
		return string(e), true, nil
	}
	return "", false, nil
}

// retryer is the SDK's retryer with the catalog's attempts and mode, a
// refused connection final, and Glue's table writes not retried after an
// error that may have followed their success (glueRetryer).
func (s glueSettings) retryer() aws.Retryer {
	std := func(o *retry.StandardOptions) {
		o.MaxAttempts = s.attempts
		o.Retryables = append([]retry.IsErrorRetryable{retry.IsErrorRetryableFunc(refusedIsFinal)}, o.Retryables...)
	}
	if s.mode == aws.RetryModeAdaptive {
		return glueRetryer{retry.NewAdaptiveMode(func(o *retry.AdaptiveModeOptions) {
			o.StandardOptions = append(o.StandardOptions, std)
		})}
	}
	return glueRetryer{retry.NewStandard(std)}
}

// glueWrites are the Glue calls that change the catalog without a guard
// the server checks on a retry: a retried UpdateTable whose first try
// landed fails its VersionId check and reads as a conflict (the commit loop
// would apply the change again), a retried CreateTable reads as "already
// exists".
var glueWrites = map[string]bool{"UpdateTable": true, "CreateTable": true}

// errNotRetried stops the SDK from retrying a Glue table write.
var errNotRetried = errors.New("not retried: the write may have been applied")

// glueRetryer retries Glue's table writes only after errors that prove the
// server did not apply them: throttling and connections never made.
type glueRetryer struct{ aws.RetryerV2 }

// GetRetryToken refuses a retry of a table write after an error that may
// have followed its success.
func (r glueRetryer) GetRetryToken(ctx context.Context, err error) (func(error) error, error) {
	if glueWrites[awsmiddleware.GetOperationName(ctx)] && !notApplied(err) {
		return nil, errNotRetried
	}
	return r.RetryerV2.GetRetryToken(ctx, err)
}

// notApplied reports whether a failed Glue call certainly changed nothing:
// it never reached the server, or the server throttled it.
func notApplied(err error) bool {
	if notSent(err) {
		return true
	}
	return retry.IsErrorThrottles(retry.DefaultThrottles).IsErrorThrottle(err) == aws.TrueTernary
}

// openGlue opens an AWS Glue Data Catalog: iceberg-go's Glue catalog (an
// optimistic UpdateTable guarded by the Glue table's VersionId per commit;
// a conflict is retried by the commit loop, a lost answer settled by
// reading the table again) with errors typed and scrubbed of secrets, and
// tables' files through the project's FileIO (S3).
func openGlue(ctx context.Context, name string, p iceberg.Properties, red *redactor) (*Catalog, error) {
	s, err := glueSettingsOf(p)
	if err != nil {
		return nil, fmt.Errorf("catalog %q: %w", name, err)
	}
	cfg, err := s.awsConfig(ctx)
	if err != nil {
		return nil, red.wrap(fmt.Sprintf("opening Glue catalog %q", name), nil, err)
	}
	gc, err := glue.NewCatalog(glue.WithAwsConfig(cfg), glue.WithAwsProperties(glue.AwsProperties(s.props)))
	if err != nil {
		return nil, red.wrap(fmt.Sprintf("opening Glue catalog %q", name), errs.ErrInvalidArgument, err)
	}
	c := &glueCatalog{typedCatalog: &typedCatalog{Catalog: gc, red: red, props: s.props, classify: classifyGlue, lostAnswer: lostGlueAnswer}}
	return &Catalog{Catalog: c, Name: name, Props: s.props, close: gc.Close}, nil
}

// glueCatalog is iceberg-go's Glue catalog behind typedCatalog (loads,
// commits, creates and drops typed; old metadata files dropped after a
// commit as the table asks), its other calls typed here too. Committers
// are not queued: Glue's VersionId check arbitrates between machines.
type glueCatalog struct {
	*typedCatalog
}

// defaultLocation puts a new table under its Glue database's location
// when the database has one, as PyIceberg and Java do; otherwise the
// warehouse layout (<warehouse>/<db>.db/<table>) applies.
func (g *glueCatalog) defaultLocation(ctx context.Context, ident table.Identifier) (string, bool, error) {
	props, err := g.Catalog.LoadNamespaceProperties(ctx, icecat.NamespaceFromIdent(ident))
	switch {
	case errors.Is(err, icecat.ErrNoSuchNamespace):
		return "", false, nil // created with the table, without a location
	case err != nil:
		return "", false, g.fail(fmt.Sprintf("loading namespace %s", strings.Join(icecat.NamespaceFromIdent(ident), ".")), err)
	}
	if loc := strings.TrimSuffix(props[glue.PropsKeyLocation], "/"); loc != "" {
		return loc + "/" + icecat.TableNameFromIdent(ident), true, nil
	}
	return "", false, nil
}

// RenameTable renames from to to.
func (g *glueCatalog) RenameTable(ctx context.Context, from, to table.Identifier) (*table.Table, error) {
	t, err := g.Catalog.RenameTable(ctx, from, to)
	return t, g.fail(fmt.Sprintf("renaming table %s", strings.Join(from, ".")), err)
}

// CheckTableExists reports whether ident exists.
func (g *glueCatalog) CheckTableExists(ctx context.Context, ident table.Identifier) (bool, error) {
	ok, err := g.Catalog.CheckTableExists(ctx, ident)
	return ok, g.fail(fmt.Sprintf("checking table %s", strings.Join(ident, ".")), err)
}

// ListTables lists the tables of ns.
func (g *glueCatalog) ListTables(ctx context.Context, ns table.Identifier) iter.Seq2[table.Identifier, error] {
	return func(yield func(table.Identifier, error) bool) {
		for id, err := range g.Catalog.ListTables(ctx, ns) {
			if !yield(id, g.fail(fmt.Sprintf("listing tables of %s", strings.Join(ns, ".")), err)) {
				return
			}
		}
	}
}

// ListNamespaces lists the namespaces under parent.
func (g *glueCatalog) ListNamespaces(ctx context.Context, parent table.Identifier) ([]table.Identifier, error) {
	if len(parent) > 0 {
		return nil, fmt.Errorf("%w: Glue databases are not nested (listing namespaces under %s)", errs.ErrNotSupported, strings.Join(parent, "."))
	}
	out, err := g.Catalog.ListNamespaces(ctx, parent)
	return out, g.fail("listing namespaces", err)
}

// CreateNamespace creates ns.
func (g *glueCatalog) CreateNamespace(ctx context.Context, ns table.Identifier, props iceberg.Properties) error {
	if len(ns) != 1 {
		return fmt.Errorf("%w: a Glue namespace is one database name, got %s", errs.ErrInvalidArgument, strings.Join(ns, "."))
	}
	return g.fail(fmt.Sprintf("creating namespace %s", strings.Join(ns, ".")), g.Catalog.CreateNamespace(ctx, ns, props))
}

// DropNamespace drops ns.
func (g *glueCatalog) DropNamespace(ctx context.Context, ns table.Identifier) error {
	return g.fail(fmt.Sprintf("dropping namespace %s", strings.Join(ns, ".")), g.Catalog.DropNamespace(ctx, ns))
}

// CheckNamespaceExists reports whether ns exists.
func (g *glueCatalog) CheckNamespaceExists(ctx context.Context, ns table.Identifier) (bool, error) {
	if len(ns) != 1 {
		return false, nil
	}
	ok, err := g.Catalog.CheckNamespaceExists(ctx, ns)
	return ok, g.fail(fmt.Sprintf("checking namespace %s", strings.Join(ns, ".")), err)
}

// LoadNamespaceProperties returns the properties of ns.
func (g *glueCatalog) LoadNamespaceProperties(ctx context.Context, ns table.Identifier) (iceberg.Properties, error) {
	p, err := g.Catalog.LoadNamespaceProperties(ctx, ns)
	return p, g.fail(fmt.Sprintf("loading namespace %s", strings.Join(ns, ".")), err)
}

// UpdateNamespaceProperties changes the properties of ns.
func (g *glueCatalog) UpdateNamespaceProperties(ctx context.Context, ns table.Identifier, removals []string, updates iceberg.Properties) (icecat.PropertiesUpdateSummary, error) {
	s, err := g.Catalog.UpdateNamespaceProperties(ctx, ns, removals, updates)
	return s, g.fail(fmt.Sprintf("updating namespace %s", strings.Join(ns, ".")), err)
}

// glueAuthCodes are the error codes of AWS's refusals of who is asking.
var glueAuthCodes = map[string]bool{
	"AccessDeniedException": true, "AccessDenied": true, "UnrecognizedClientException": true,
	"InvalidClientTokenId": true, "SignatureDoesNotMatch": true, "InvalidSignatureException": true,
	"ExpiredToken": true, "ExpiredTokenException": true, "IncompleteSignature": true,
	"MissingAuthenticationToken": true, "MissingAuthenticationTokenException": true,
}

// lostGlueAnswer reports whether a failed Glue commit may have landed (a
// table write that failed after it may have been applied): typedCatalog
// then settles it by reading the table again (settleCommit).
func lostGlueAnswer(err error) bool {
	return classifyGlue(err, true) == errs.ErrCommitStateUnknown
}

// errAuth is the kind of AWS's refusal of the credentials; the message
// says so because a refusal's own body may not (moto answers Glue's JSON
// protocol in XML, which the SDK cannot decode).
var errAuth = fmt.Errorf("%w: AWS refused the credentials", errs.ErrInvalidArgument)

// classifyGlue returns the errs kind of an error of iceberg-go's Glue
// catalog (nil: leave it untyped, as "requirement failed" must stay for
// the commit loop). commit says whether the failed call was a commit: a
// Glue table write that failed after it may have been applied is a commit
// in an unknown state.
func classifyGlue(err error, commit bool) error {
	var oe *smithy.OperationError
	op, service := "", ""
	if errors.As(err, &oe) {
		op, service = oe.OperationName, oe.ServiceID
	}
	var ae smithy.APIError
	decoded := errors.As(err, &ae)
	var re *awshttp.ResponseError
	status := 0
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, errs.ErrCancelled):
		return errs.ErrCancelled
	case errs.StatusOf(err) != errs.StatusUnknown:
		return nil // already typed
	case errors.Is(err, icecat.ErrNoSuchTable):
		return errs.ErrNoSuchTable
	case errors.Is(err, icecat.ErrTableAlreadyExists):
		return errs.ErrTableAlreadyExists
	case errors.Is(err, icecat.ErrNoSuchNamespace):
		return errs.ErrNoSuchNamespace
	case errors.Is(err, table.ErrCommitFailed):
		return errs.ErrCommitConflict
	case errors.Is(err, icecat.ErrNamespaceAlreadyExists), errors.Is(err, icecat.ErrNamespaceNotEmpty):
		return errs.ErrValidation
	case service != "" && service != "Glue":
		// S3 (the tables' files): a storage failure, as on every catalog.
		return errs.ErrIO
	case errors.As(err, new(*gluetypes.EntityNotFoundException)):
		if op == "CreateTable" || strings.HasSuffix(op, "Database") {
			return errs.ErrNoSuchNamespace
		}
		return errs.ErrNoSuchTable
	case status == http.StatusUnauthorized || status == http.StatusForbidden,
		decoded && glueAuthCodes[ae.ErrorCode()]:
		return errAuth
	case errors.As(err, new(*gluetypes.InvalidInputException)):
		return errs.ErrInvalidArgument
	case commit && glueWrites[op] && status >= 400 && status < 500 && !decoded:
		// Glue refused the write (a 4xx applies nothing) but its answer
		// could not be read, so whether it was the version check is not
		// known (seen under load: the connection closed while the body
		// was read): retried from a fresh load, as a conflict is.
		return errs.ErrCommitConflict
	case op != "":
		// Any other failure of a Glue call: the service could not be used. A Glue table write that failed in a way that
		// may have followed its success leaves the commit unknown.
		if commit && glueWrites[op] && !notApplied(err) && (status == 0 || status >= 500) {
			return errs.ErrCommitStateUnknown
		}
		return errs.ErrIO
	case isStorageErr(err):
		return errs.ErrIO
	case strings.Contains(strings.ToLower(err.Error()), "requirement failed"):
		return nil
	case strings.Contains(err.Error(), "is not an iceberg table"), strings.Contains(err.Error(), "is not an EXTERNAL_TABLE"):
		return errs.ErrValidation
	}
	return nil
}
