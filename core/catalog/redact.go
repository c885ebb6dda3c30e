package catalog

import (
	"cmp"
	"slices"
	"strings"
	"sync"
)

// secretKeys are the catalog properties whose values are secrets. Keys
// ending in one of secretSuffixes are secrets too (s3.secret-access-key,
// adls.account-key, gcs.oauth2.token, ...).
var secretKeys = map[string]bool{
	"credential": true, "token": true, "s3.access-key-id": true, "s3.session-token": true,
	"header.authorization": true, "uri-password": true,
	"glue.access-key-id": true, "client.access-key-id": true,
}

var secretSuffixes = []string{"secret", "secret-access-key", "token", "password", "key", "sas-token", "credential", "credentials"}

// isSecret reports whether property key holds a secret.
func isSecret(key string) bool {
	k := strings.ToLower(key)
	// iceberg-go's Azure keys end in the account or host: adls.sas-token.<host>.
	if secretKeys[k] || strings.HasPrefix(k, "adls.connection-string") || strings.HasPrefix(k, "adls.sas-token") {
		return true
	}
	for _, s := range secretSuffixes {
		if strings.HasSuffix(k, "."+s) || strings.HasSuffix(k, "-"+s) || k == s {
			return true
		}
	}
	return false
}

// redactor scrubs the secret values of one catalog from messages.
type redactor struct{ values []string }

// minSecret is the shortest value treated as a secret: replacing a one- or
// two-letter value everywhere would mangle messages without hiding much.
const minSecret = 3

func newRedactor(props map[string]string) *redactor {
	r := &redactor{}
	for k, v := range props {
		if !isSecret(k) || len(v) < minSecret {
			continue
		}
		r.values = append(r.values, v)
		// An Azure connection string's key or SAS may show up alone.
		for _, part := range strings.Split(v, ";") {
			name, secret, _ := strings.Cut(strings.TrimSpace(part), "=")
			if (strings.EqualFold(name, "AccountKey") || strings.EqualFold(name, "SharedAccessSignature")) && len(secret) >= minSecret {
				r.values = append(r.values, secret)
			}
		}
		// A client credential is id:secret; either half may show up alone.
		if id, secret, ok := strings.Cut(v, ":"); ok {
			for _, part := range []string{id, secret} {
				if len(part) >= minSecret {
					r.values = append(r.values, part)
				}
			}
		}
	}
	// Longest first, so a value containing another is replaced whole.
	slices.SortFunc(r.values, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	registerSecrets(r.values)
	return r
}

// clean replaces every secret value in s by "***".
func (r *redactor) clean(s string) string {
	if r == nil {
		return s
	}
	for _, v := range r.values {
		s = strings.ReplaceAll(s, v, "***")
	}
	return s
}

// wrap returns an error of kind (nil: none added) describing what failed
// because of cause, with secrets scrubbed from its message. errors.Is and
// errors.As still see kind and cause.
func (r *redactor) wrap(what string, kind, cause error) error {
	msg := what + ": " + cause.Error()
	if kind != nil {
		msg = kind.Error() + ": " + msg
	}
	return &scrubbed{msg: r.clean(msg), kind: kind, cause: cause}
}

// scrubbed is an error whose message had secrets removed.
type scrubbed struct {
	msg   string
	kind  error
	cause error
}

func (e *scrubbed) Error() string { return e.msg }

func (e *scrubbed) Unwrap() []error {
	if e.kind == nil {
		return []error{e.cause}
	}
	return []error{e.kind, e.cause}
}

var (
	secretsMu sync.RWMutex
	secrets   = map[string]bool{}
)

func registerSecrets(values []string) {
	secretsMu.Lock()
	defer secretsMu.Unlock()
	for _, v := range values {
		secrets[v] = true
	}
}

// Redact replaces, in msg, every secret value of every catalog opened in
// this process (credentials, tokens, access keys) by "***". The C ABI
// layer runs error messages through it as a last line of defence.
func Redact(msg string) string {
	secretsMu.RLock()
	values := make([]string, 0, len(secrets))
	for v := range secrets {
		values = append(values, v)
	}
	secretsMu.RUnlock()
	slices.SortFunc(values, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	for _, v := range values {
		msg = strings.ReplaceAll(msg, v, "***")
	}
	return msg
}

// RedactError is err with its message passed through Redact; errors.Is and
// errors.As still see err's chain. It returns err itself when nothing
// changes.
func RedactError(err error) error {
	if err == nil {
		return nil
	}
	msg := Redact(err.Error())
	if msg == err.Error() {
		return err
	}
	return &scrubbed{msg: msg, cause: err}
}
