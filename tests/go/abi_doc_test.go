package gotests

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/pyiceberg-go/pyiceberg-go/core/config"
	"github.com/pyiceberg-go/pyiceberg-go/core/host"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
)

// docKeys returns the backticked names in the first column of the tables
// of docs/abi.md's section that starts with heading (up to the next
// heading of the same or a higher level).
func docKeys(t *testing.T, doc, heading string) []string {
	t.Helper()
	i := strings.Index(doc, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("docs/abi.md has no section %q", heading)
	}
	level := strings.Index(heading, " ")
	body := doc[i+len(heading)+2:]
	if j := regexp.MustCompile(`(?m)^#{1,` + string(rune('0'+level)) + `} `).FindStringIndex(body); j != nil {
		body = body[:j[0]]
	}
	var keys []string
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first := strings.Split(line, "|")[1]
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(first, -1) {
			keys = append(keys, m[1])
		}
	}
	slices.Sort(keys)
	return keys
}

// jsonKeys lists the JSON keys a decoder of t accepts, nested structs (and
// slices of them) as prefix.key and prefix[].key.
func jsonKeys(t reflect.Type, prefix string) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name := strings.Split(f.Tag.Get("json"), ",")[0]
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			// An embedded struct's keys are the outer document's.
			out = append(out, jsonKeys(f.Type, prefix)...)
			continue
		}
		if name == "" || name == "-" {
			continue
		}
		key := prefix + name
		out = append(out, key)
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft == reflect.TypeFor[iceberg.Schema]():
			// An Iceberg schema in the spec's JSON form, documented as one key.
		case ft.Kind() == reflect.Struct:
			out = append(out, jsonKeys(ft, key+".")...)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			out = append(out, jsonKeys(ft.Elem(), key+"[].")...)
		}
	}
	slices.Sort(out)
	return out
}

// docs/abi.md names every key the decoders accept and every operation, and
// nothing else.
func TestABIDocumentMatchesTheDecoders(t *testing.T) {
	b, err := os.ReadFile("../../docs/abi.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	var ops []string
	for _, op := range request.Ops() {
		if !strings.HasPrefix(op, "__") { // test-only operations
			ops = append(ops, op)
		}
	}
	slices.Sort(ops)
	for _, c := range []struct {
		what, heading string
		want          []string
	}{
		{"session document", "## Session (`pig_session_new`)", jsonKeys(reflect.TypeFor[config.Session](), "")},
		{"runtime settings", "## Runtime settings (`pig_runtime_configure`)", jsonKeys(reflect.TypeFor[host.Settings](), "")},
		{"request keys", "### Request keys", jsonKeys(reflect.TypeFor[request.Request](), "")},
		{"operations", "### Operations", ops},
	} {
		got := docKeys(t, doc, c.heading)
		if !slices.Equal(got, c.want) {
			var missing, extra []string
			for _, k := range c.want {
				if !slices.Contains(got, k) {
					missing = append(missing, k)
				}
			}
			for _, k := range got {
				if !slices.Contains(c.want, k) {
					extra = append(extra, k)
				}
			}
			t.Errorf("%s: docs/abi.md lacks %v and documents %v that the decoder does not accept", c.what, missing, extra)
		}
	}
}
