// Package riskapi is the official Go client for the riskapi REST API (the
// public /v2 routes, authenticated with an API key "rk_…").
//
// The client exists mainly to make writes safe to retry without the caller
// thinking about it: every write call (POST, PUT, PATCH, DELETE) carries one
// Idempotency-Key, minted once per call unless the caller supplies one, and
// the very same key is sent on every retry of that call. The server stores the
// first outcome under that key and replays it, so a request whose response was
// lost on the way back is never applied twice.
//
// Usage:
//
//	c, err := riskapi.NewClient(apiKey, riskapi.WithBaseURL("http://127.0.0.1:8080"))
//	if err != nil { … }
//	r, err := c.Risks.Create(ctx, &riskapi.RiskCreateParams{
//		Title: "Vendor contract missing a DPA", Likelihood: riskapi.Ptr(3), Impact: riskapi.Ptr(4),
//	})
//	var apiErr *riskapi.Error
//	if errors.As(err, &apiErr) { … apiErr.Status, apiErr.Code, apiErr.RequestID … }
//
// Retry policy (see [Client] and docs/sdk.md): network errors, including a
// connection cut after the request was sent, and the statuses 409, 429, 502,
// 503 and 504 are retried with exponential backoff and full jitter, honouring
// Retry-After; 500, 422 and every other 4xx are returned at once.
//
// Every returned resource carries a LastResponse ([APIResponse]) telling the
// request id, the idempotency key that was sent and whether the server
// replayed a stored response.
//
// The package speaks only HTTP and the JSON shapes of the public contract. It
// must never know about the server's internals (storage, handlers, the
// idempotency record layout): integrators build against it, so its surface
// follows the contract, not the implementation.
package riskapi
