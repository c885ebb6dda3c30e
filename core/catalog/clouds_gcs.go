//go:build pyiceberg_gcs

package catalog

// gs:// FileIO, left out of the default build to keep the library small.
import _ "github.com/apache/iceberg-go/io/gocloud/gcs"
