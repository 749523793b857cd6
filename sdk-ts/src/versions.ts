/**
 * Versions of risks (docs/sdk-typescript.md, "Versions"): the ETag of a
 * version, the typed 412 of a write over a newer one, and the safe
 * read-change-write that retries on it, as the Go SDK's Risks.Modify.
 */

import { RiskApiError } from "./errors.js";
import type { Risk } from "./types.js";

/**
 * etag is the entity tag of a risk's version, `"<version>"` (quotes
 * included): what the server sends as ETag and what `opts.ifMatch` takes.
 */
export function etag(risk: Pick<Risk, "version">): string {
  return `"${risk.version}"`;
}

/**
 * StaleRiskError is the 412 PRECONDITION_FAILED of a risk write whose
 * `ifMatch` named a version the risk no longer has: someone else changed it
 * since it was read, and nothing was changed. `current` is the risk as stored
 * now; redo the change on it and send it with `etag(current)`, or let
 * `risks.modify` do so. It is a RiskApiError, so code that branches on
 * `status` or `code` keeps working.
 */
export class StaleRiskError extends RiskApiError {
  /** The risk as stored when the write was refused. */
  readonly current: Risk;

  constructor(err: RiskApiError, current: Risk) {
    super({
      status: err.status,
      statusText: err.title,
      body: err.body,
      headerRequestId: err.requestId,
      idempotencyKey: err.idempotencyKey,
      retryAfterMs: err.retryAfterMs,
      attempts: err.attempts,
    });
    this.name = "StaleRiskError";
    this.current = current;
  }
}

/** staleRisk turns a 412 whose problem carries a `current` risk into a StaleRiskError; anything else passes unchanged. */
export function staleRisk(err: unknown): unknown {
  if (!(err instanceof RiskApiError) || err.code !== "PRECONDITION_FAILED") return err;
  let current: unknown;
  try {
    current = (JSON.parse(err.body) as { current?: unknown }).current;
  } catch {
    return err;
  }
  if (typeof current !== "object" || current === null || typeof (current as Risk).version !== "number") return err;
  return new StaleRiskError(err, current as Risk);
}

/**
 * MAX_MODIFY_ATTEMPTS bounds the writes of one `risks.modify` before it
 * rejects with the last StaleRiskError: each refused write means another
 * writer changed the risk in between.
 */
export const MAX_MODIFY_ATTEMPTS = 5;
