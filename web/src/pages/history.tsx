/**
 * A risk's history on its page: who changed it, when, and what changed,
 * oldest first (GET /v1/risks/{id}/history; every user may read it). Read
 * again when a change settles, so the user's own edit appears once saved,
 * and on reconnecting; offline it says so instead of loading.
 */
import { useCallback, useEffect, useState } from "preact/hooks";
import { api, explain, RiskApiError, type AuditEntry } from "../api";
import { actorName, requestHref } from "../audit";
import { useOnline } from "../state";
import { useSettled } from "../settled";
import { ChangeList, useActorNames, When } from "./audit";
import { canRead } from "../offline";
import { isOffline, Offline } from "./common";

const PAGE = 50;

/**
 * actorNamesWanted is true when the entries name an API key or a webhook
 * source and the user is an admin, who may list them (GET /v1/api-keys and
 * /v1/webhook-sources are admin-only): a member would only be answered 403,
 * and keeps the end of the actor's ID.
 */
export function actorNamesWanted(entries: AuditEntry[] | undefined, admin: boolean): boolean {
  return admin && (entries?.some((e) => e.actor.type === "api_key" || e.actor.type === "webhook_source") ?? false);
}

/** RiskHistory lists the risk's audit-log entries, a page at a time; admin: the signed-in user is one. */
export function RiskHistory({ riskId, admin }: { riskId: string; admin: boolean }) {
  const [entries, setEntries] = useState<AuditEntry[] | undefined>();
  const [next, setNext] = useState<string | null>(null);
  const [note, setNote] = useState("");
  const [offline, setOffline] = useState(false);
  const online = useOnline();
  const load = useCallback((cursor?: string) => {
    if (!canRead()) return setOffline(true);
    api().auditLog.historyPage(riskId, { limit: PAGE, ...(cursor ? { cursor } : {}) }).then(
      (p) => {
        setEntries((was) => (cursor ? [...(was ?? []), ...p.data] : p.data));
        setNext(p.hasMore ? p.nextCursor : null);
        setNote("");
        setOffline(false);
      },
      (err: unknown) => {
        // 404: nothing recorded for it (made before the log, or its entries expired).
        if (err instanceof RiskApiError && err.status === 404) {
          setEntries([]);
          setNote("");
        } else if (isOffline(err)) setOffline(true);
        else setNote(explain(err));
      },
    );
  }, [riskId]);
  useEffect(() => load(), [load, online]);
  useSettled(useCallback(() => load(), [load]));
  // An API key or webhook source by its name, not the end of its ID (an admin's lists; a member keeps the ID's end).
  const names = useActorNames(actorNamesWanted(entries, admin));
  return (
    <section class="history" aria-labelledby="history-h">
      <h2 id="history-h">History</h2>
      {offline ? <Offline what="the history" /> : note && <p class="error" role="alert">{note}</p>}
      {entries === undefined && !note && !offline && <p class="loading">Loading…</p>}
      {entries?.length === 0 && <p class="empty">No change of this risk is recorded.</p>}
      {entries && entries.length > 0 && (
        <ol class="history-list">
          {entries.map((e) => {
            const request = requestHref(e.requestId);
            return (
              <li key={e.id}>
                <div class="entry-head">
                  <When at={e.occurredAt} /> — {e.actor.type === "system" && FOUND[e.action]
                    ? FOUND[e.action]
                    : <><strong>{actorName(e.actor, names)}</strong> {verb(e.action)}</>}
                  {request && <> (<a href={request}>request</a>)</>}
                </div>
                {/* What the schedule found records the risk as it was, no change: the head says it all. */}
                {!(e.actor.type === "system" && FOUND[e.action]) && <ChangeList changes={e.changes} action={e.action} />}
              </li>
            );
          })}
        </ol>
      )}
      {next && <button type="button" class="secondary" onClick={() => load(next)}>Load more</button>}
    </section>
  );
}

/** FOUND says in words what riskapi's own schedule found of the risk: no one acted. */
const FOUND: Partial<Record<AuditEntry["action"], string>> = {
  "risk.review_due": "Its review falls due soon",
  "risk.review_overdue": "Its review is overdue",
  "risk.appetite_exceeded": "Its score went above its appetite",
};

/** verb says what an entry did to the risk: "created it", "updated it", "uploaded an attachment", … */
function verb(action: AuditEntry["action"]): string {
  if (action === "attachment.created") return "uploaded an attachment";
  if (action === "attachment.deleted") return "deleted an attachment";
  const [what, done] = action.split(".") as [string, string];
  return what === "risk" ? `${done.replaceAll("_", " ")} it` : `${what} ${done.replaceAll("_", " ")}`;
}
