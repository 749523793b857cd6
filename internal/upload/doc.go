// Package upload reads multipart/form-data request bodies as a stream: each file part
// is spooled to a temporary file while its SHA-256 is computed, form fields are kept
// in memory up to a small bound, and nothing is ever buffered whole. The spooled form
// is memoised in the request context, so the idempotency fingerprint and the handler
// share one pass over the body, and its temporary files are removed when the request
// ends unless the handler moved them into place.
//
// It also defines the canonical encoding of a spooled form (Form.WriteCanonical) that
// the multipart fingerprint hashes, and HashBody, which plugs it into the idempotency
// engine's Fingerprinter (docs/uploads-and-webhooks.md, Idempotency of uploads): it
// spools the form for a request that may run, or only hashes it, writing nothing to
// disk, for one a stored record answers.
//
// It knows nothing of risks, attachments, tenants or the database: a route says which
// form names it accepts (Config.Rules) and decides itself where files end up.
package upload
