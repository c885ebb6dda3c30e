package catalog

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"

	icebergio "github.com/apache/iceberg-go/io"
	// S3 (s3://, s3a://, s3n://) FileIO; GCS and Azure are behind the
	// pyiceberg_gcs and pyiceberg_azure build tags (clouds_*.go).
	_ "github.com/apache/iceberg-go/io/gocloud/s3"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// catalogOnly are catalog properties that must not reach a FileIO: the
// REST credentials would otherwise be offered to object stores (iceberg-go's
// S3 FileIO sends a "token" property as a bearer token).
var catalogOnly = map[string]bool{"credential": true, "token": true, "type": true, "uri": true}

// normalizeProps maps PyIceberg's FileIO property names onto iceberg-go's:
// s3.path-style-access=true is s3.force-virtual-addressing=false.
func normalizeProps(p map[string]string) error {
	if v, ok := p["s3.path-style-access"]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%w: s3.path-style-access=%q is not a boolean", errs.ErrInvalidArgument, v)
		}
		if _, set := p["s3.force-virtual-addressing"]; !set {
			p["s3.force-virtual-addressing"] = strconv.FormatBool(!b)
		}
	}
	return nil
}

// FileIOProps are the properties a table's FileIO is opened with: the
// catalog's (without its own credentials and headers), then the table's.
func FileIOProps(catalogProps, tableProps map[string]string) map[string]string {
	out := make(map[string]string, len(catalogProps)+len(tableProps))
	for k, v := range catalogProps {
		if !catalogOnly[k] && !strings.HasPrefix(k, "header.") {
			out[k] = v
		}
	}
	maps.Copy(out, tableProps)
	_ = normalizeProps(out)
	return out
}

// WriteFS opens a writable FileIO for location with the catalog's and the
// table's properties. Errors are typed (errs.ErrIO, errs.ErrNotSupported)
// and carry no secret.
func (c *Catalog) WriteFS(ctx context.Context, tableProps map[string]string, location string) (icebergio.WriteFileIO, error) {
	props := FileIOProps(c.Props, tableProps)
	fs, err := icebergio.LoadFS(ctx, props, location)
	if err != nil {
		if errors.Is(err, icebergio.ErrIOSchemeNotFound) {
			return nil, fmt.Errorf("%w: storage for %s is not in this build (S3 and local files are; GCS and Azure need the pyiceberg_gcs / pyiceberg_azure build tags)", errs.ErrNotSupported, location)
		}
		return nil, newRedactor(props).wrap("opening "+location, errs.ErrIO, err)
	}
	wfs, ok := fs.(icebergio.WriteFileIO)
	if !ok {
		return nil, fmt.Errorf("%w: %s is read-only", errs.ErrIO, location)
	}
	return wfs, nil
}
