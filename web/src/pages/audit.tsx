/**
 * The audit log (admins; docs/audit-log.md): who changed what and when,
 * newest first, with its filters and page in the URL, links to each target
 * and to the request that made the change, and the export. A member who opens
 * it is told it is for admins: the server answers them 403.
 */
import "./audit.css";
import "./log.css";
import { useEffect, useState } from "preact/hooks";
import { api, RiskApiError, type AuditEntry } from "../api";
import { actorName, auditPath, changeLines, exportHref, filtersOf, listParams, requestHref, targetHref, type AuditFilters } from "../audit";
import { trimmed, typed, useDraft } from "../draft";
import { AUDIT_ACTIONS } from "../lists";
import { navigate, useQuery } from "../router";
import { Unavailable, useList } from "./common";

/** AuditPage shows one page of the tenant's audit log. */
export function AuditPage() {
  const q = useQuery();
  const applied = filtersOf(q);
  const cursors = q.getAll("cursor");
  const cursor = cursors.at(-1);
  const [forbidden, setForbidden] = useState(false);
  const names = useActorNames();
  const list = useList<AuditEntry>(JSON.stringify([applied, cursor]), () =>
    api().auditLog.listPage({ limit: 50, ...listParams(applied), ...(cursor ? { cursor } : {}) }).then(
      (p) => (setForbidden(false), p),
      (err: unknown) => {
        setForbidden(err instanceof RiskApiError && err.status === 403);
        throw err;
      },
    ));
  if (forbidden) {
    return (
      <section>
        <h1>Audit log</h1>
        <p class="notice" role="note"><strong>Admins only.</strong> The audit log is shown to the tenant's administrators; ask one of them.</p>
      </section>
    );
  }
  return (
    <section class="audit">
      <h1>Audit log</h1>
      <AuditFilterForm applied={applied} onApply={(f) => {
        const next = auditPath(f);
        if (next === location.pathname + location.search) list.reload();
        else navigate(next);
      }} />
      <p class="row exports">
        Export what the filters match: <a href={exportHref(applied, "csv")} download>CSV</a>{" "}
        <a href={exportHref(applied, "ndjson")} download>NDJSON</a>
      </p>
      {list.unavailable ? (
        <Unavailable what="The audit log" route="GET /v1/audit-log" />
      ) : (
        <>
          {list.error && <p class="error" role="alert">{list.error}</p>}
          <div class="table-wrap">
            <table class="log audit-log">
              <thead><tr><th>Time</th><th>Actor</th><th>Action</th><th>Target</th><th>Changes</th><th>Request</th><th>Client</th></tr></thead>
              <tbody>
                {list.page?.data.map((e) => <Row key={e.id} e={e} applied={applied} names={names} />)}
                {list.page?.data.length === 0 && <tr><td colSpan={7} class="empty">No entry matches.</td></tr>}
              </tbody>
            </table>
          </div>
          <div class="row pager">
            <button type="button" class="secondary" disabled={cursors.length < 1} onClick={() => navigate(auditPath(applied, cursors.slice(0, -1)))}>Previous</button>
            <span>Page {cursors.length + 1}</span>
            <button type="button" class="secondary" disabled={!list.page?.hasMore} onClick={() => list.page?.nextCursor && navigate(auditPath(applied, [...cursors, list.page.nextCursor]))}>Next</button>
          </div>
        </>
      )}
    </section>
  );
}

/**
 * useActorNames reads the tenant's API keys and webhook sources once (the page
 * is an admin's, who may list them), so that an actor reads as “deploy”, not
 * as its ID; an actor it does not find keeps the end of its ID (so does every
 * actor for a member, who may not list them). Not needed: nothing is read.
 */
export function useActorNames(needed = true): ReadonlyMap<string, string> {
  const [names, setNames] = useState<ReadonlyMap<string, string>>(new Map());
  useEffect(() => {
    if (!needed) return;
    let live = true;
    const add = (pairs: [string, string][]) => live && setNames((m) => new Map([...m, ...pairs]));
    api().apiKeys.listPage({ limit: 100 }).then((p) => add(p.data.filter((k) => k.name).map((k) => [k.id, k.name!])), () => undefined);
    api().webhookSources.listPage({ limit: 100 }).then((p) => add(p.data.map((w) => [w.id, w.source])), () => undefined);
    return () => {
      live = false;
    };
  }, [needed]);
  return names;
}

/** How many changes a row shows before the rest fold under "N more": a creation lists every field it set. */
const ROW_CHANGES = 3;

function Row({ e, applied, names }: { e: AuditEntry; applied: AuditFilters; names: ReadonlyMap<string, string> }) {
  const target = targetHref(e.target);
  const request = requestHref(e.requestId);
  return (
    <tr>
      <td class="when"><When at={e.occurredAt} /></td>
      <td class="actor">
        {e.actor.id ? (
          <a href={auditPath({ ...applied, actorId: e.actor.id })} title={`Only this actor's entries (${e.actor.id})`}>{actorName(e.actor, names)}</a>
        ) : actorName(e.actor, names)}
      </td>
      <td><code>{e.action}</code></td>
      <td class="target">
        {e.target.type} {target ? <a href={target} class="short" title={e.target.id}>{e.target.id}</a> : <span class="short" title={e.target.id}>{e.target.id}</span>}
      </td>
      <td class="changes"><ChangeList changes={e.changes} action={e.action} fold={ROW_CHANGES} /></td>
      <td class="rid">{request ? <a href={request} class="short" title="This request in the request log">{e.requestId}</a> : "—"}</td>
      <td class="client">{e.ip ?? "—"}{e.via === "mcp" && <span class="meta" title={e.client ?? undefined}> via MCP</span>}</td>
    </tr>
  );
}

/** When shows an entry's time in the user's clock, the exact instant kept for machines. */
export function When({ at }: { at: string }) {
  return <time dateTime={at}>{new Date(at).toLocaleString()}</time>;
}

/**
 * ChangeList shows each changed member by its name in words: from → to, only
 * the new value when it had none (a creation's values, a field first set), or
 * only "changed" for a secret; a creation's empty members are left out.
 */
export function ChangeList({ changes, action, fold }: { changes: AuditEntry["changes"]; action?: AuditEntry["action"]; fold?: number }) {
  const lines = changeLines(changes, action);
  if (lines.length === 0) return <span class="meta">—</span>;
  const item = (l: (typeof lines)[number]) => (
    <li key={l.field}>
      <span class="field" title={l.field}>{l.label}</span>{": "}
      {l.secret ? <em>changed</em> : l.added ? <span class="to">{l.to}</span> : <><span class="from">{l.from}</span> → <span class="to">{l.to}</span></>}
    </li>
  );
  // Folded past `fold` lines (with one to spare: "1 more" would hide no room).
  const shown = fold !== undefined && lines.length > fold + 1 ? lines.slice(0, fold) : lines;
  const rest = lines.slice(shown.length);
  return (
    <ul class="changes">
      {shown.map(item)}
      {rest.length > 0 && (
        <li><details><summary>{rest.length} more</summary><ul class="changes">{rest.map(item)}</ul></details></li>
      )}
    </ul>
  );
}

function AuditFilterForm({ applied, onApply }: { applied: AuditFilters; onApply: (f: AuditFilters) => void }) {
  const [f, edit] = useDraft(applied, JSON.stringify(applied));
  const set = (k: keyof AuditFilters) => typed(edit, k);
  return (
    <form class="filters row" aria-label="Filters" onSubmit={(e) => { e.preventDefault(); onApply(trimmed(f)); }}>
      <label>Action<select value={f.action} onChange={set("action")}>
        <option value="">any</option>
        {AUDIT_ACTIONS.map((a) => <option key={a} value={a}>{a}</option>)}
      </select></label>
      <label>Actor ID<input value={f.actorId} onInput={set("actorId")} /></label>
      <label>Target ID<input value={f.targetId} onInput={set("targetId")} /></label>
      <label>Since<input type="datetime-local" value={f.since} onInput={set("since")} /></label>
      <label>Until<input type="datetime-local" value={f.until} onInput={set("until")} /></label>
      <button type="submit">Filter</button>
      {/* The form empties even when the address is already /audit (nothing applied yet). */}
      <a href="/audit" onClick={() => edit(() => filtersOf(new URLSearchParams()))}>Clear</a>
    </form>
  );
}
