/**
 * Other users' changes, followed (docs/dashboard.md, "Live"): while someone
 * is signed in and the tab is visible and online, the tab asks every 1.5 s for
 * the tenant's newest event (GET /v1/events?limit=1). An event it has not seen
 * means the tenant's data changed, here or elsewhere, and every page re-reads
 * what it shows as after a settled change (state.ts, useSettled) — a risk's
 * page keeps what the user is typing over the version it re-reads. The server
 * offers no event stream, so this asks for the events it already records; one
 * small read per tab every 1.5 s (a change elsewhere shows within 2 s), none
 * while hidden, offline or signed out.
 */
import { api } from "./api";
import { identity } from "./session";

/** How often the tab asks, in ms: a change elsewhere shows within this (and one read). */
export const LIVE_INTERVAL_MS = 1_500;

const listeners = new Set<() => void>();
/** The newest event id seen; undefined until the first answer (which is nothing new). */
let newest: string | undefined;
let timer: ReturnType<typeof setInterval> | undefined;
let asking = false;

async function tick(): Promise<void> {
  if (asking || document.visibilityState !== "visible" || !navigator.onLine || !identity()) return;
  asking = true;
  try {
    const p = await api().events.listPage({ limit: 1 }, { maxRetries: 0 });
    const id = p.data[0]?.id ?? "";
    const changed = newest !== undefined && id !== newest;
    newest = id;
    if (changed) for (const fn of [...listeners]) fn();
  } catch {
    // Unreachable now: the next tick asks again; pages say offline on their own.
  } finally {
    asking = false;
  }
}

/** onRemoteChange calls fn whenever the tenant has a new event; returns the unsubscribe. */
export function onRemoteChange(fn: () => void): () => void {
  listeners.add(fn);
  if (!timer) {
    // The newest id seen stays: a page's re-subscribing must not miss a change in between.
    void tick();
    timer = setInterval(() => void tick(), LIVE_INTERVAL_MS);
  }
  return () => {
    listeners.delete(fn);
    if (listeners.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}
