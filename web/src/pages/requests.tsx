/**
 * The request log with its filters, and the idempotency inspector: what the
 * server knows about a key, without sending the body again.
 */
import { useState } from "preact/hooks";
import { ApiError, get, query } from "../api";
import { useList, Unavailable } from "./common";

/** LogEntry is one request-log entry (docs/openapi.yaml). */
interface LogEntry {
  id: string;
  method: string;
  path: string;
  route: string;
  status: number;
  durationMs: number;
  credential: { type: string; id: string };
  idempotencyKey: string | null;
  idempotencyOutcome: string | null;
  errorCode: string | null;
  createdAt: string;
}

const OUTCOMES = ["", "executed", "replayed", "in_progress", "key_reused", "failed", "store_unavailable"];
const METHODS = ["", "GET", "POST", "PUT", "PATCH", "DELETE"];

/** RequestsPage shows the request log and the idempotency inspector. */
export function RequestsPage() {
  const initial = new URLSearchParams(location.search);
  const [filters, setFilters] = useState({
    idempotencyKey: initial.get("idempotencyKey") ?? "", status: "", method: "", outcome: "", since: "", until: "",
  });
  const [applied, setApplied] = useState(filters);
  const [cursor, setCursor] = useState<string | null>(null);
  const q = query({ limit: 50, cursor, ...applied, since: iso(applied.since), until: iso(applied.until) });
  const list = useList<LogEntry>("/v1/requests" + q);
  // Filter again with the same filters reloads: entries arrive within about a second.
  const refilter = () => {
    if (cursor === null && JSON.stringify(filters) === JSON.stringify(applied)) list.reload();
    else { setCursor(null); setApplied(filters); }
  };
  const set = (k: keyof typeof filters) => (e: Event) => setFilters({ ...filters, [k]: (e.currentTarget as HTMLInputElement).value });
  return (
    <section>
      <h1>Request log</h1>
      <form class="filters row" aria-label="Filters" onSubmit={(e) => { e.preventDefault(); refilter(); }}>
        <label>Idempotency key<input value={filters.idempotencyKey} onInput={set("idempotencyKey")} /></label>
        <label>Status<input inputMode="numeric" size={4} value={filters.status} onInput={set("status")} /></label>
        <label>Method<select value={filters.method} onChange={set("method")}>{METHODS.map((m) => <option key={m} value={m}>{m || "any"}</option>)}</select></label>
        <label>Outcome<select value={filters.outcome} onChange={set("outcome")}>{OUTCOMES.map((o) => <option key={o} value={o}>{o || "any"}</option>)}</select></label>
        <label>Since<input type="datetime-local" value={filters.since} onInput={set("since")} /></label>
        <label>Until<input type="datetime-local" value={filters.until} onInput={set("until")} /></label>
        <button type="submit">Filter</button>
      </form>
      {list.unavailable ? (
        <Unavailable what="The request log" route="GET /v1/requests" />
      ) : (
        <>
          {list.error && <p class="error" role="alert">{list.error}</p>}
          <table>
            <thead><tr><th>Time</th><th>Method</th><th>Path</th><th>Status</th><th>ms</th><th>Idempotency</th><th>Error</th><th>Request id</th></tr></thead>
            <tbody>
              {list.page?.data.map((r) => (
                <tr key={r.id}>
                  <td>{new Date(r.createdAt).toLocaleString()}</td><td>{r.method}</td><td>{r.path}</td><td>{r.status}</td>
                  <td>{r.durationMs}</td>
                  <td>{r.idempotencyKey ? <><code>{r.idempotencyKey}</code> {r.idempotencyOutcome}</> : ""}</td>
                  <td>{r.errorCode ?? ""}</td><td><code>{r.id}</code></td>
                </tr>
              ))}
            </tbody>
          </table>
          <div class="row pager">
            {cursor && <button type="button" class="secondary" onClick={() => setCursor(null)}>First page</button>}
            <button type="button" class="secondary" disabled={!list.page?.hasMore} onClick={() => setCursor(list.page?.nextCursor ?? null)}>Next</button>
          </div>
        </>
      )}
      <Inspector initialKey={filters.idempotencyKey} />
    </section>
  );
}

function iso(local: string): string {
  return local ? new Date(local).toISOString() : "";
}

/** Inspector looks up one idempotency record: GET /v1/idempotency-keys/{key}?method=&path=. */
function Inspector({ initialKey }: { initialKey: string }) {
  const [key, setKey] = useState(initialKey);
  const [method, setMethod] = useState("POST");
  const [path, setPath] = useState("/v1/risks");
  const [result, setResult] = useState<string>("");
  const inspect = async (e: Event) => {
    e.preventDefault();
    try {
      const r = await get<unknown>(`/v1/idempotency-keys/${encodeURIComponent(key)}` + query({ method, path }));
      setResult(JSON.stringify(r, null, 2));
    } catch (err) {
      setResult(
        err instanceof ApiError && err.status === 404
          ? "No live record for this key, method and path (never sent, expired, or this server has no inspector)."
          : String(err),
      );
    }
  };
  return (
    <section class="inspector">
      <h2>Idempotency inspector</h2>
      <form class="row" onSubmit={inspect} aria-label="Idempotency inspector">
        <label>Key<input required value={key} onInput={(e) => setKey(e.currentTarget.value)} /></label>
        <label>Method<select value={method} onChange={(e) => setMethod(e.currentTarget.value)}>{METHODS.slice(2).map((m) => <option key={m}>{m}</option>)}</select></label>
        <label>Path<input required value={path} onInput={(e) => setPath(e.currentTarget.value)} /></label>
        <button type="submit">Inspect</button>
      </form>
      {result && <pre>{result}</pre>}
    </section>
  );
}
