/**
 * The request log as a compact table — each request id links to its entry,
 * each key to the idempotency inspector, each risk path to the risk — with
 * its filters, its page and what is inspected in the URL; the entry and the
 * inspector above the table.
 */
import "./log.css";
import { useEffect, useState } from "preact/hooks";
import { api, explain, RiskApiError, type RequestListParams, type RequestLogEntry } from "../api";
import { trimmed, typed, useDraft } from "../draft";
import { instant } from "../instant";
import { OUTCOMES } from "../lists";
import { navigate, useQuery, withQuery } from "../router";
import { Unavailable, useList } from "./common";

const OUTCOME_CHOICES = ["", ...OUTCOMES];
const METHODS = ["", "GET", "POST", "PUT", "PATCH", "DELETE"];
const FILTERS = ["idempotencyKey", "status", "method", "outcome", "since", "until"] as const;
type Filters = Record<(typeof FILTERS)[number], string>;

/** RequestsPage shows the request log, one entry, and the idempotency inspector. */
export function RequestsPage() {
  const q = useQuery();
  const applied = Object.fromEntries(FILTERS.map((k) => [k, q.get(k) ?? ""])) as Filters;
  const cursors = q.getAll("cursor");
  const cursor = cursors.at(-1);
  const entryId = q.get("id");
  const inspect = q.get("inspect") ? { key: q.get("inspect")!, method: q.get("inspectMethod") ?? "POST", path: q.get("inspectPath") ?? "/v1/risks" } : undefined;
  const url = (over: Record<string, string | string[] | undefined>) =>
    withQuery("/requests", { ...applied, cursor: cursors, id: entryId ?? undefined, inspect: inspect?.key, inspectMethod: inspect?.method, inspectPath: inspect?.path, ...over });
  const key = JSON.stringify([applied, cursor]);
  const list = useList<RequestLogEntry>(key, () => api().requests.listPage({ limit: 50, ...params(applied), ...(cursor ? { cursor } : {}) }));
  return (
    <section class="requests">
      <h1>Request log</h1>
      <FilterForm applied={applied} onApply={(f) => {
        const next = withQuery("/requests", { ...f });
        // Filtering again with the same filters re-reads: entries arrive within about a second.
        if (next === location.pathname + location.search) list.reload();
        else navigate(next);
      }} />
      {entryId && <Entry id={entryId} close={url({ id: undefined })} />}
      <Inspector initial={inspect} onInspect={(i) => navigate(url({ inspect: i.key, inspectMethod: i.method, inspectPath: i.path }), true)} />
      {list.unavailable ? (
        <Unavailable what="The request log" route="GET /v1/requests" />
      ) : (
        <>
          {list.error && <p class="error" role="alert">{list.error}</p>}
          <div class="table-wrap">
            <table class="log">
              <thead><tr><th>Time</th><th>Method</th><th>Path</th><th>Status</th><th>ms</th><th>Idempotency</th><th>Error</th><th>Request</th></tr></thead>
              <tbody>
                {list.page?.data.map((r) => <Row key={r.id} r={r} url={url} />)}
                {list.page?.data.length === 0 && <tr><td colSpan={8} class="empty">No request matches.</td></tr>}
              </tbody>
            </table>
          </div>
          <div class="row pager">
            <button type="button" class="secondary" disabled={cursors.length < 1} onClick={() => navigate(url({ cursor: cursors.slice(0, -1) }))}>Previous</button>
            <span>Page {cursors.length + 1}</span>
            <button type="button" class="secondary" disabled={!list.page?.hasMore} onClick={() => list.page?.nextCursor && navigate(url({ cursor: [...cursors, list.page.nextCursor] }))}>Next</button>
          </div>
        </>
      )}
    </section>
  );
}

function params(f: Filters): RequestListParams {
  const p: RequestListParams = {};
  if (f.idempotencyKey) p.idempotencyKey = f.idempotencyKey;
  if (f.status) p.status = Number(f.status);
  if (f.method) p.method = f.method;
  if (f.outcome) p.outcome = f.outcome as RequestListParams["outcome"] & string;
  const since = instant(f.since);
  const until = instant(f.until);
  if (since) p.since = since;
  if (until) p.until = until;
  return p;
}

function Row({ r, url }: { r: RequestLogEntry; url: (over: Record<string, string | undefined>) => string }) {
  const risk = /^\/v[12]\/risks\/(risk_[0-9a-f]+)/.exec(r.path);
  const t = new Date(r.createdAt);
  return (
    <tr class={r.status >= 400 ? "failed" : ""}>
      <td><time dateTime={r.createdAt} title={t.toLocaleString()}>{t.toLocaleTimeString()}</time></td>
      <td>{r.method}</td>
      <td class="path">{risk ? <a href={`/risks/${risk[1]}`}>{r.path}</a> : r.path}</td>
      <td>{r.status}</td>
      <td>{Math.round(r.durationMs)}</td>
      <td class="key">
        {r.idempotencyKey && (
          <>
            <a href={url({ inspect: r.idempotencyKey, inspectMethod: r.method, inspectPath: r.path })} class="short" title="Inspect this key">
              {r.idempotencyKey}
            </a>{" "}
            {r.idempotencyOutcome}
          </>
        )}
      </td>
      <td>{r.errorCode ?? ""}</td>
      <td class="rid"><a href={url({ id: r.id })} class="short" title="This request's log entry">{r.id}</a></td>
    </tr>
  );
}

function FilterForm({ applied, onApply }: { applied: Filters; onApply: (f: Filters) => void }) {
  const [f, edit] = useDraft(applied, JSON.stringify(applied));
  const set = (k: keyof Filters) => typed(edit, k);
  return (
    <form class="filters row" aria-label="Filters" onSubmit={(e) => { e.preventDefault(); onApply(trimmed(f)); }}>
      <label>Idempotency key<input value={f.idempotencyKey} onInput={set("idempotencyKey")} /></label>
      <label>Status<input inputMode="numeric" size={4} value={f.status} onInput={set("status")} /></label>
      <label>Method<select value={f.method} onChange={set("method")}>{METHODS.map((m) => <option key={m} value={m}>{m || "any"}</option>)}</select></label>
      <label>Outcome<select value={f.outcome} onChange={set("outcome")}>{OUTCOME_CHOICES.map((o) => <option key={o} value={o}>{o || "any"}</option>)}</select></label>
      <label>Since<input type="datetime-local" value={f.since} onInput={set("since")} /></label>
      <label>Until<input type="datetime-local" value={f.until} onInput={set("until")} /></label>
      <button type="submit">Filter</button>
    </form>
  );
}

/** Entry shows one request's log entry (GET /v1/requests/{id}). */
function Entry({ id, close }: { id: string; close: string }) {
  const [text, setText] = useState("Loading…");
  useEffect(() => {
    api().requests.get(id).then((e) => setText(JSON.stringify(e, null, 2)), (err: unknown) =>
      setText(err instanceof RiskApiError && err.status === 404 ? "No entry for this request id (expired, or another tenant's)." : explain(err)));
  }, [id]);
  return (
    <section class="entry" aria-label="Request">
      <h2>Request <code>{id}</code> <a href={close} class="close">Close</a></h2>
      <pre>{text}</pre>
    </section>
  );
}

interface Inspect { key: string; method: string; path: string }

/** Inspector looks up one idempotency record: GET /v1/idempotency-keys/{key}?method=&path=. */
function Inspector({ initial, onInspect }: { initial: Inspect | undefined; onInspect: (i: Inspect) => void }) {
  const [i, setI] = useState<Inspect>(initial ?? { key: "", method: "POST", path: "/v1/risks" });
  const [result, setResult] = useState("");
  const run = (x: Inspect) =>
    api().idempotencyKeys.get(x.key, x.method, x.path).then(
      (r) => setResult(JSON.stringify(r, null, 2)),
      (err: unknown) => setResult(err instanceof RiskApiError && err.status === 404
        ? "No live record for this key, method and path (never sent, expired, or this server has no inspector)."
        : explain(err)),
    );
  useEffect(() => {
    if (!initial) return;
    setI(initial);
    void run(initial);
  }, [initial?.key, initial?.method, initial?.path]);
  return (
    <section class="inspector">
      <h2>Idempotency inspector</h2>
      <form class="row" onSubmit={(e) => { e.preventDefault(); onInspect(i); void run(i); }} aria-label="Idempotency inspector">
        <label>Key<input required value={i.key} onInput={(e) => setI({ ...i, key: e.currentTarget.value })} /></label>
        {/* Not "Method": the filters above have one, and a page's controls are listed by their names. */}
        <label>Key's method<select value={i.method} onChange={(e) => setI({ ...i, method: e.currentTarget.value })}>{METHODS.slice(2).map((m) => <option key={m}>{m}</option>)}</select></label>
        <label>Path<input required value={i.path} onInput={(e) => setI({ ...i, path: e.currentTarget.value })} /></label>
        <button type="submit">Inspect</button>
      </form>
      {result && <pre>{result}</pre>}
    </section>
  );
}
