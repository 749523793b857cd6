/**
 * The browser transport of the outbox: one XMLHttpRequest per attempt, which
 * (unlike fetch) reports upload progress. The session cookie goes with it
 * (same origin); the change's idempotency key goes in Idempotency-Key.
 */
import { parseRetryAfter } from "@riskapi/sdk/retry";
import { UNAUTHENTICATED } from "../api";
import type { Attempt, Change } from "./change";
import type { Transport } from "./outbox";

/** How long a JSON write may take before the attempt counts as a network failure. */
const JSON_TIMEOUT_MS = 60_000;

/** xhrTransport sends changes with XMLHttpRequest. */
export const xhrTransport: Transport = {
  send(c: Change, onProgress: (loaded: number, total: number) => void): Promise<Attempt> {
    return new Promise((resolve) => {
      const xhr = new XMLHttpRequest();
      xhr.open(c.method, c.path);
      xhr.setRequestHeader("Idempotency-Key", c.key);
      xhr.setRequestHeader("Accept", "application/json");
      // A failed attempt is a TypeError, as fetch reports a network failure, so
      // the SDK's classify retries it.
      const failed = (why: string) => () => resolve({ error: new TypeError("network error: " + why) });
      xhr.onerror = failed("no response");
      xhr.ontimeout = failed("timed out");
      xhr.onabort = failed("aborted");
      xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : 0);
      xhr.onload = () => {
        if (xhr.status === 401) dispatchEvent(new Event(UNAUTHENTICATED));
        let json: unknown;
        try {
          json = xhr.responseText ? JSON.parse(xhr.responseText) : undefined;
        } catch {
          json = undefined;
        }
        const a: Attempt = {
          status: xhr.status,
          replayed: xhr.getResponseHeader("Idempotent-Replayed") === "true",
          json,
        };
        const rid = xhr.getResponseHeader("X-Request-Id");
        if (rid) a.requestId = rid;
        const ra = parseRetryAfter(xhr.getResponseHeader("Retry-After"));
        if (ra !== undefined) a.retryAfterMs = ra;
        resolve(a);
      };
      if (c.body?.kind === "file") {
        const form = new FormData();
        for (const [k, v] of Object.entries(c.body.fields)) form.append(k, v);
        form.append("file", c.body.file, c.body.filename);
        xhr.send(form);
      } else if (c.body?.kind === "json") {
        xhr.timeout = JSON_TIMEOUT_MS;
        xhr.setRequestHeader("Content-Type", "application/json");
        xhr.send(JSON.stringify(c.body.json));
      } else {
        xhr.timeout = JSON_TIMEOUT_MS;
        xhr.send();
      }
    });
  },
};
