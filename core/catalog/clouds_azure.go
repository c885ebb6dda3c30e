//go:build pyiceberg_azure

package catalog

// abfs(s):// and wasb(s):// FileIO, left out of the default build to keep
// the library small.
import _ "github.com/apache/iceberg-go/io/gocloud/azure"
