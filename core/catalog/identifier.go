package catalog

import (
	"errors"
	"fmt"
	"strings"

	icecat "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/commit"
	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
)

// TableIdent is id as iceberg-go names a table: its namespace parts, then
// its name (a fresh slice: the caller may append to it).
func TableIdent(id request.Identifier) table.Identifier {
	return append(append(table.Identifier{}, id.Namespace...), id.Name)
}

// MapErr maps an iceberg-go catalog error about table id to this project's
// kinds (no such table or namespace, table exists); other errors are
// classified as commit failures (commit.Classify).
func MapErr(err error, id request.Identifier) error {
	switch {
	case errors.Is(err, icecat.ErrNoSuchTable):
		return fmt.Errorf("%w: table %s does not exist", errs.ErrNoSuchTable, id)
	case errors.Is(err, icecat.ErrTableAlreadyExists):
		return fmt.Errorf("%w: table %s already exists", errs.ErrTableAlreadyExists, id)
	case errors.Is(err, icecat.ErrNoSuchNamespace):
		return fmt.Errorf("%w: namespace %s of table %s does not exist", errs.ErrNoSuchNamespace, strings.Join(id.Namespace, "."), id)
	}
	return commit.Classify(err)
}
