package maintenance

import (
	"context"
	"fmt"
	"time"

	"github.com/pyiceberg-go/pyiceberg-go/core/errs"
	"github.com/pyiceberg-go/pyiceberg-go/core/request"
)

// Handles reports whether op is a maintenance operation (Run runs it).
func Handles(op string) bool {
	return op == request.OpExpireSnapshots || op == request.OpRemoveOrphanFiles || op == request.OpRewriteManifests
}

// Run runs the maintenance operation req on tg; now is the current time
// every age is measured from.
func Run(ctx context.Context, tg Target, req *request.Request, now time.Time) (any, error) {
	switch req.Op {
	case request.OpExpireSnapshots:
		return ExpireSnapshots(ctx, tg, req, now)
	case request.OpRemoveOrphanFiles:
		return RemoveOrphanFiles(ctx, tg, req, now)
	case request.OpRewriteManifests:
		return RewriteManifests(ctx, tg, req)
	}
	return nil, fmt.Errorf("%w: %s is not a maintenance operation", errs.ErrInvalidArgument, req.Op)
}
