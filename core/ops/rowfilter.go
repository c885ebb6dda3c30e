package ops

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go/table"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
)

// runFiltered runs overwrite(filter), delete and update.
func (w *writer) runFiltered(ctx context.Context, p *plan, t *table.Table) (*Result, error) {
	return nil, fmt.Errorf("%w: %s is not available yet", errs.ErrNotSupported, w.req.Op)
}
