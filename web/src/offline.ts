/**
 * The page's side of the service worker (src/sw/sw.ts; docs/dashboard.md,
 * "Offline"): registering it, labelling each read with whose it is, telling it
 * whose cache is current at every sign-in and sign-out, and noticing when what
 * the page shows came from that cache (possibly out of date).
 */
import type { Owner } from "./outbox/change";
import { identity } from "./session";

/** The label of a read, stripped by the service worker before it goes out. */
const OWNER_HEADER = "Riskapi-Offline-Owner";
/** Set by the service worker on an answer it served from the cache: when it was stored. */
const COPY_HEADER = "Riskapi-Offline-Copy";

const label = (o: Owner) => `${o.tenantId}/${o.userId}`;

/** registerServiceWorker installs the worker, once the page has loaded (no part of the first load). */
export function registerServiceWorker(): void {
  if (!("serviceWorker" in navigator)) return;
  const register = () => void navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch(() => undefined);
  if (document.readyState === "complete") register();
  else addEventListener("load", register, { once: true });
  // A worker that starts controlling this page after sign-in learns whose reads it keeps.
  navigator.serviceWorker.addEventListener("controllerchange", () => void cacheBelongsTo(identity()));
}

/**
 * cacheBelongsTo tells the service worker whose cache is current (null:
 * nobody's, signed out); it deletes every other user's. Resolves when it has,
 * or after a second without an answer (no worker yet: it has nothing stored).
 */
export function cacheBelongsTo(owner: Owner | null): Promise<void> {
  const worker = navigator.serviceWorker?.controller;
  if (!worker) return Promise.resolve();
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    const timer = setTimeout(resolve, 1000);
    channel.port1.onmessage = () => {
      clearTimeout(timer);
      resolve();
    };
    worker.postMessage({ type: "owner", owner: owner ? label(owner) : null }, [channel.port2]);
  });
}

/**
 * canRead is false when a read cannot be answered at all: offline, with no
 * service worker to answer from this user's cache.
 */
export function canRead(): boolean {
  return navigator.onLine || !!navigator.serviceWorker?.controller;
}

let copiedAt: string | undefined;
const listeners = new Set<() => void>();

/** offlineCopy is when the last read shown was stored, if it came from the cache; undefined when it came from the server. */
export function offlineCopy(): string | undefined {
  return copiedAt;
}

/** onOfflineCopy calls fn when offlineCopy changes; returns the unsubscribe. */
export function onOfflineCopy(fn: () => void): () => void {
  listeners.add(fn);
  return () => void listeners.delete(fn);
}

function noteCopy(at: string | undefined): void {
  if (at === copiedAt) return;
  copiedAt = at;
  for (const fn of listeners) fn();
}

/**
 * offlineFetch is the SDK's fetch (api.ts): a read under /v1 carries the
 * signed-in user's label, so the service worker keeps it in, and serves it
 * from, that user's cache only; an answer from the cache is noted.
 */
export async function offlineFetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
  const owner = identity();
  const method = (init?.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase();
  const url = new URL(input instanceof Request ? input.url : String(input), globalThis.location?.href ?? "http://localhost/");
  if (owner && method === "GET" && url.pathname.startsWith("/v1/")) {
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    headers.set(OWNER_HEADER, label(owner));
    init = { ...init, headers };
  }
  const res = await fetch(input, init);
  if (method === "GET" && url.pathname.startsWith("/v1/") && url.pathname !== "/v1/me") noteCopy(res.headers.get(COPY_HEADER) ?? undefined);
  return res;
}
