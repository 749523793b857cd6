// A scripted fetch and a fake clock for unit tests: no sockets, no real waits.

import { RiskApi, type ClientOptions } from "../src/index.js";

/** One request the fake fetch received. */
export interface Seen {
  method: string;
  url: URL;
  headers: Headers;
  body: Uint8Array<ArrayBuffer> | undefined;
  /** fetch's credentials option: whether the browser would send the session cookie. */
  credentials: RequestCredentials | undefined;
}

/** What the fake answers an attempt with: a Response, or an error to throw (a network failure). */
export type Step = Response | Error | ((req: Seen, signal: AbortSignal) => Response | Error | Promise<Response | Error>);

/** A problem+json answer as the server sends it. */
export function problem(status: number, code: string, init: { retryAfter?: string; requestId?: string; detail?: string } = {}): Response {
  const requestId = init.requestId ?? `req-${status}`;
  const h = new Headers({ "Content-Type": "application/problem+json", "X-Request-Id": requestId });
  if (init.retryAfter !== undefined) h.set("Retry-After", init.retryAfter);
  const body = {
    type: `https://riskapi.dev/problems/${code.toLowerCase().replaceAll("_", "-")}`,
    title: `title of ${code}`,
    status,
    detail: init.detail ?? `detail of ${code}`,
    code,
    requestId,
  };
  return new Response(JSON.stringify(body), { status, headers: h });
}

/** A JSON answer. */
export function json(status: number, v: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(v), { status, headers: { "Content-Type": "application/json", "X-Request-Id": "req-ok", ...headers } });
}

/** A risk as the server returns it. */
export function risk(id: string, title = "t", version = 1): Record<string, unknown> {
  return {
    id, title, description: "", category: "", likelihood: null, impact: null, riskScore: null,
    status: "open", owner: { userId: null, name: "" }, version, createdAt: "2026-12-01T08:00:00Z", updatedAt: "2026-12-01T08:00:00Z",
  };
}

/**
 * A client over a fetch that answers attempt n with steps[n] (the last step
 * repeats), whose sleep advances a fake clock instead of waiting.
 */
export function fakeClient(steps: Step[], opts: Partial<ClientOptions> = {}) {
  const seen: Seen[] = [];
  const waits: number[] = [];
  let clock = Date.parse("2026-12-01T08:00:00Z");
  const fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const headers = new Headers(init?.headers);
    let body: Uint8Array<ArrayBuffer> | undefined;
    if (init?.body != null) {
      // Encoded as fetch would, FormData with its boundary in Content-Type.
      const encoded = new Response(init.body);
      const ct = encoded.headers.get("Content-Type");
      if (ct !== null && !headers.has("Content-Type")) headers.set("Content-Type", ct);
      body = new Uint8Array(await encoded.arrayBuffer());
    }
    const req: Seen = { method: init?.method ?? "GET", url: new URL(String(input)), headers, body, credentials: init?.credentials };
    seen.push(req);
    const step = steps[Math.min(seen.length - 1, steps.length - 1)]!;
    const out = typeof step === "function" ? await step(req, init!.signal!) : step;
    if (out instanceof Error) throw out;
    return out.clone();
  };
  const client = new RiskApi({
    ...(opts.session ? {} : { apiKey: "rk_test" }),
    baseUrl: "http://riskapi.test",
    fetch,
    now: () => clock,
    sleep: async (ms, signal) => {
      signal?.throwIfAborted();
      waits.push(ms);
      clock += ms;
    },
    random: () => 0.5,
    ...opts,
  });
  return { client, seen, waits, advance: (ms: number) => (clock += ms) };
}
