package catalog

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

func TestPostgresURLForms(t *testing.T) {
	for _, c := range []struct {
		uri   string
		props iceberg.Properties
		want  string
	}{
		{"postgresql+psycopg2://u:p%40ss@h:5432/db", nil, "postgres://u:p%40ss@h:5432/db"},
		{"postgresql://u@h/db?sslmode=disable", nil, "postgres://u@h/db?sslmode=disable"},
		{"jdbc:postgresql://h:5432/db", iceberg.Properties{"jdbc.user": "u", "jdbc.password": "pw"}, "postgres://u:pw@h:5432/db"},
		{"jdbc:postgresql://h/db?user=u&password=pw&ssl=false", nil, "postgres://u:pw@h/db?ssl=false"},
	} {
		u, ok, err := postgresURL(c.uri, c.props)
		if err != nil || !ok || u.String() != c.want {
			t.Fatalf("%s: %v %v %v, want %s", c.uri, u, ok, err, c.want)
		}
	}
	if _, ok, err := postgresURL("sqlite:////x.db", nil); ok || err != nil {
		t.Fatalf("sqlite taken as PostgreSQL: %v %v", ok, err)
	}
	_, _, err := postgresURL("postgresql://u:secret-pw@h:bad-port/db", nil)
	if !errors.Is(err, errs.ErrInvalidArgument) || strings.Contains(err.Error(), "secret-pw") {
		t.Fatalf("bad url: %v", err)
	}
}

func TestPostgresSecretsJoinTheCatalogs(t *testing.T) {
	p := iceberg.Properties{"s3.secret-access-key": "s3-secret-value"}
	u, _, err := postgresURL("postgresql://u:uri-secret-pw@h/db", p)
	if err != nil {
		t.Fatal(err)
	}
	red := postgresRedactor(p, u, newRedactor(p))
	got := red.clean("failed with uri-secret-pw and s3-secret-value")
	if strings.Contains(got, "uri-secret-pw") || strings.Contains(got, "s3-secret-value") {
		t.Fatalf("secrets kept: %s", got)
	}
}
