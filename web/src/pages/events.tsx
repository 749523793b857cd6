/** The tenant's events, newest first, with a type filter and redelivery. */
import { useState } from "preact/hooks";
import { api, type Event as Event_ } from "../api";
import { EVENT_TYPES } from "../lists";
import { outbox } from "../state";
import { useList, Unavailable } from "./common";

const TYPES = ["", ...EVENT_TYPES];

/** EventsPage lists events; for admins, Redeliver queues POST /v1/events/{id}/redeliver. */
export function EventsPage({ admin }: { admin: boolean }) {
  const [type, setType] = useState("");
  const [cursor, setCursor] = useState<string | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const list = useList<Event_>(`${type}|${cursor ?? ""}`, () =>
    api().events.listPage({ limit: 50, ...(cursor ? { cursor } : {}), ...(type ? { type: type as Event_["type"] } : {}) }));
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
                  <button type="button" class="secondary" onClick={() => void outbox().enqueue({ method: "POST", path: `/events/${ev.id}/redeliver`, body: null, label: `Redeliver ${ev.id}` })}>
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
