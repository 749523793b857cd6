package app

import (
	"context"

	"github.com/riskapi/riskapi/internal/appetite"
	"github.com/riskapi/riskapi/internal/auth"
)

// credentialAppetite reads a tenant's appetite for a risk's write
// (appetite.Recorder): as its request's credential read it (auth.Principal.Appetite,
// the one statement that reads an API key or a session), else from Next. The credential's read is
// the request's own, made as it began, so a write judges by the appetite committed
// when its request was authenticated and never by an older request's (docs/register.md,
// Appetite); it saves a scored write one statement and one round trip
// (docs/performance.md, issue 44).
type credentialAppetite struct {
	Next appetite.Reader
}

// Get implements appetite.Reader.
func (r credentialAppetite) Get(ctx context.Context, tenantID string) (appetite.Appetite, error) {
	if p := auth.FromContext(ctx); p != nil && p.Appetite != nil && p.Scope == tenantID {
		return appetite.Appetite{Overall: p.Appetite.Overall, Categories: p.Appetite.Categories, Version: p.Appetite.Version}, nil
	}
	return r.Next.Get(ctx, tenantID)
}
