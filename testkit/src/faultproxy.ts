// A reverse proxy in front of a real riskapi server that injects faults into
// chosen requests, like the Go SDK's (sdk/faultproxy_test.go). A request is
// matched by method, path and attempt number (the how-many-th request with
// that method and path the proxy has received, from 1); unmatched requests are
// forwarded untouched. Every request it receives is recorded.

import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join, normalize } from "node:path";

/** What the proxy does with a matched request. */
export type Fault =
  /** Forward, read the server's whole answer (its write and idempotency record are committed), then cut the client's connection without a byte of it. */
  | { action: "cut-after-answer" }
  /** Forward, read the whole answer, then hold it back for ms, or until the client hangs up. */
  | { action: "hold-answer"; ms: number }
  /** Answer with a problem of status and code (and Retry-After) without forwarding: the server never sees it. */
  | { action: "answer"; status: number; code: string; retryAfter?: string };

/** One request the proxy received and what became of it. */
export interface Proxied {
  method: string;
  path: string;
  /** The Idempotency-Key header, "" when absent. */
  key: string;
  attempt: number;
  action: Fault["action"] | "forward";
  bodySha256: string;
  /** Whether the request reached the server; status and replayed are then the server's answer, whether or not the client got it. */
  forwarded: boolean;
  status: number;
  replayed: boolean;
}

/** A running fault proxy. */
export class FaultProxy {
  readonly seen: Proxied[] = [];
  private readonly rules: { method: string; path: string; attempt: number; fault: Fault }[] = [];
  private readonly counts = new Map<string, number>();
  private readonly agent = new http.Agent({ keepAlive: false });
  private files: { prefix: string; dir: string } | undefined;

  private constructor(
    private readonly server: http.Server,
    private readonly target: URL,
  ) {}

  /** Starts a proxy for target (a base URL) on a free loopback port. */
  static async start(target: string): Promise<FaultProxy> {
    const server = http.createServer();
    const p = new FaultProxy(server, new URL(target));
    server.on("request", (req, res) => void p.serve(req, res));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return p;
  }

  /** The proxy's base URL. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /**
   * Answers GET requests under prefix (e.g. "/sdk/") with the files of dir,
   * unrecorded, so that a browser page loaded from the proxy calls the API on
   * the same origin.
   */
  serveFiles(prefix: string, dir: string): void {
    this.files = { prefix, dir };
  }

  /** Applies fault to the attempt-th request (from 1) with method and path. */
  on(method: string, path: string, attempt: number, fault: Fault): void {
    this.rules.push({ method, path, attempt, fault });
  }

  /** The recorded requests with method and path. */
  requests(method: string, path: string): Proxied[] {
    return this.seen.filter((s) => s.method === method && s.path === path);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
    this.agent.destroy();
  }

  private async serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const method = req.method ?? "GET";
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (this.files && method === "GET" && path.startsWith(this.files.prefix)) {
      await serveFile(res, this.files.dir, path.slice(this.files.prefix.length));
      return;
    }
    const id = `${method} ${path}`;
    const attempt = (this.counts.get(id) ?? 0) + 1;
    this.counts.set(id, attempt);
    const fault = this.rules.find((r) => r.method === method && r.path === path && r.attempt === attempt)?.fault;
    const body = Buffer.concat(await collect(req));
    const rec: Proxied = {
      method, path, attempt,
      key: String(req.headers["idempotency-key"] ?? ""),
      action: fault?.action ?? "forward",
      bodySha256: createHash("sha256").update(body).digest("hex"),
      forwarded: false, status: 0, replayed: false,
    };
    this.seen.push(rec);

    if (fault?.action === "answer") {
      const headers: http.OutgoingHttpHeaders = { "Content-Type": "application/problem+json", "X-Request-Id": "proxy" };
      if (fault.retryAfter !== undefined) headers["Retry-After"] = fault.retryAfter;
      res.writeHead(fault.status, headers);
      res.end(JSON.stringify({ type: "about:blank", title: "injected", status: fault.status, detail: "injected by the fault proxy", code: fault.code, requestId: "proxy" }));
      return;
    }
    const answer = await this.forward(req, body);
    rec.forwarded = true;
    rec.status = answer.status;
    rec.replayed = answer.headers["idempotent-replayed"] === "true";
    if (fault?.action === "cut-after-answer") {
      req.socket.destroy();
      return;
    }
    if (fault?.action === "hold-answer") {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, fault.ms);
        req.socket.once("close", () => (clearTimeout(t), resolve()));
      });
      if (req.socket.destroyed) return;
    }
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body);
  }

  private forward(req: http.IncomingMessage, body: Buffer): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const headers = { ...req.headers, host: this.target.host };
      delete headers["connection"];
      const out = http.request(
        { host: this.target.hostname, port: this.target.port, method: req.method, path: req.url, headers, agent: this.agent },
        async (up) => {
          const chunks = await collect(up);
          const h = { ...up.headers };
          delete h["connection"];
          delete h["transfer-encoding"];
          resolve({ status: up.statusCode ?? 502, headers: h, body: Buffer.concat(chunks) });
        },
      );
      out.on("error", reject);
      out.end(body);
    });
  }
}

async function collect(stream: AsyncIterable<Buffer>): Promise<Buffer[]> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c);
  return chunks;
}

const fileTypes: Record<string, string> = { ".js": "text/javascript", ".html": "text/html", ".map": "application/json" };

async function serveFile(res: http.ServerResponse, dir: string, rel: string): Promise<void> {
  const clean = normalize("/" + rel).slice(1);
  const type = fileTypes[clean.slice(clean.lastIndexOf("."))] ?? "application/octet-stream";
  try {
    const body = await readFile(join(dir, clean));
    res.writeHead(200, { "Content-Type": type, "Cache-Control": "no-store" });
    res.end(body);
  } catch {
    res.writeHead(404, { "Content-Type": "text/plain" });
    res.end("not found");
  }
}
