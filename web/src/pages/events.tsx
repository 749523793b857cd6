/** The tenant's events, newest first, with a type filter and redelivery. */
import { useState } from "preact/hooks";
import { query } from "../api";
import { outbox } from "../state";
import { useList, Unavailable } from "./common";

/** Event is one event (docs/openapi.yaml). */
interface Event_ {
  id: string;
  type: string;
  createdAt: string;
  data: { object: unknown };
  request: { id: string; idempotencyKey: string | null };
}

const TYPES = ["", "risk.created", "risk.updated", "risk.deleted", "attachment.created", "attachment.deleted"];

/** EventsPage lists events; for admins, Redeliver queues POST /v1/events/{id}/redeliver. */
export function EventsPage({ admin }: { admin: boolean }) {
  const [type, setType] = useState("");
  const [cursor, setCursor] = useState<string | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const list = useList<Event_>("/v1/events" + query({ limit: 50, cursor, type }));
  return (
    <section>
      <h1>Events</h1>
      <label>
        Type
        <select value={type} onChange={(e) => { setCursor(null); setType(e.currentTarget.value); }}>
          {TYPES.map((t) => <option key={t} value={t}>{t || "any"}</option>)}
        </select>
      </label>
      {list.unavailable ? (
        <Unavailable what="The event list" route="GET /v1/events" />
      ) : (
        <>
          {list.error && <p class="error" role="alert">{list.error}</p>}
          <ul class="events">
            {list.page?.data.map((ev) => (
              <li key={ev.id}>
                <button type="button" class="link" onClick={() => setOpen(open === ev.id ? null : ev.id)}>{ev.type}</button>{" "}
                <code>{ev.id}</code> {new Date(ev.createdAt).toLocaleString()}{" "}
                {admin && (
                  <button type="button" class="secondary" onClick={() => void outbox().enqueue({ method: "POST", path: `/v1/events/${ev.id}/redeliver`, body: null, label: `Redeliver ${ev.id}` })}>
                    Redeliver
                  </button>
                )}
                {open === ev.id && <pre>{JSON.stringify(ev, null, 2)}</pre>}
              </li>
            ))}
          </ul>
          <div class="row pager">
            {cursor && <button type="button" class="secondary" onClick={() => setCursor(null)}>First page</button>}
            <button type="button" class="secondary" disabled={!list.page?.hasMore} onClick={() => setCursor(list.page?.nextCursor ?? null)}>Next</button>
          </div>
        </>
      )}
    </section>
  );
}
