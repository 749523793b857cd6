/**
 * Views loaded when first shown: each is a chunk of its own (a Vite dynamic
 * import), so the first load of the dashboard (the sign-in form; the shell is a chunk too)
 * carries none of them (docs/dashboard.md, "First load").
 * Once someone is signed in, preloadViews fetches them all while the browser
 * is idle, so that a page opened later, offline too, needs no request.
 */
import { backoffDelay } from "@riskapi/sdk/retry";
import type { ComponentType, JSX } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";

const loaders: (() => Promise<unknown>)[] = [];

/**
 * How many times the browser has come back online since the page loaded. An
 * import begun in an earlier generation may still fail of that old outage
 * (a request that was already out when the connection dropped), so it is
 * neither joined nor taken as the last word once the browser is back.
 */
let onlineGeneration = 0;
addEventListener("online", () => onlineGeneration++);

/**
 * How many times a view tries again by itself, backing off with jitter, after
 * a load fails while the browser says it is online: the `online` event can come
 * before requests go through again (an interface up before its route), so the
 * first try after it may fail of the outage it ends. Five tries wait 15.5 s
 * at most in all (full jitter under ceilings of 0.5, 1, 2, 4 and 8 s, from
 * backoffDelay); after them the error and its button stay until the next
 * reconnect.
 */
const AUTO_RETRIES = 5;

/**
 * lazy is a component that renders the one load() resolves to, and says
 * "Loading…" until it has; a failed load (offline before the chunk came) says
 * so — that the browser is offline, when it is — with a button to try again,
 * and tries again by itself when the browser is back online, and a few times
 * more, backing off, while it stays online (AUTO_RETRIES). A quiet one (a
 * panel beside the page) shows nothing until it is there.
 */
export function lazy<P extends object>(
  load: () => Promise<ComponentType<P>>,
  opts: { quiet?: boolean } = {},
): ComponentType<P> & { preload: () => void } {
  let loaded: ComponentType<P> | undefined;
  let pending: { p: Promise<ComponentType<P>>; since: number } | undefined;
  const begin = () => {
    if (pending && pending.since === onlineGeneration) return pending;
    const a: { p: Promise<ComponentType<P>>; since: number } = {
      since: onlineGeneration,
      p: load().then(
        (c) => (loaded = c),
        (err: unknown) => {
          if (pending === a) pending = undefined; // the next attempt imports again
          throw err;
        },
      ),
    };
    pending = a;
    return a;
  };
  const get = () => begin().p;
  loaders.push(get);
  function Lazy(props: P): JSX.Element | null {
    const [, setLoads] = useState(0); // a re-render once the chunk is there
    const [failed, setFailed] = useState(false);
    const [attempt, setAttempt] = useState(0);
    const autoRetries = useRef(0);
    useEffect(() => {
      // Come between the render that said "Loading…" and this effect (a
      // preload's import, resolved a frame before it): that render is the last
      // unless this one asks for another, and the page stayed on "Loading…"
      // for good (issue 43, a risk opened right after sign-in).
      if (loaded) return void setLoads((n) => n + 1);
      let live = true;
      const a = begin();
      a.p.then(
        () => live && setLoads((n) => n + 1),
        () => {
          if (!live) return;
          // Begun before the browser came back online: that outage's failure, so try again now.
          if (navigator.onLine && a.since !== onlineGeneration) setAttempt((n) => n + 1);
          else setFailed(true);
        },
      );
      return () => {
        live = false;
      };
    }, [attempt]);
    useEffect(() => {
      if (!failed) return;
      const retry = () => {
        setFailed(false);
        setAttempt((n) => n + 1);
      };
      const reconnected = () => {
        autoRetries.current = 0; // a new connection: a new budget of tries
        retry();
      };
      addEventListener("online", reconnected);
      let timer: ReturnType<typeof setTimeout> | undefined;
      if (navigator.onLine && autoRetries.current < AUTO_RETRIES) {
        timer = setTimeout(retry, backoffDelay(autoRetries.current++, undefined));
      }
      return () => {
        removeEventListener("online", reconnected);
        clearTimeout(timer);
      };
    }, [failed]);
    if (loaded) {
      const C = loaded;
      return <C {...props} />;
    }
    if (opts.quiet) return null;
    if (failed) {
      return (
        <p class={navigator.onLine ? "error" : "offline-note"} role="alert">
          {navigator.onLine
            ? "Could not load this part of the dashboard: check the connection and try again."
            : "You are offline: this part of the dashboard has not been loaded yet; it opens when you are back online."}{" "}
          <button type="button" class="secondary" onClick={() => { setFailed(false); setAttempt((n) => n + 1); }}>Try again</button>
        </p>
      );
    }
    return <p class="loading">Loading…</p>;
  }
  /** preload fetches the chunk now, before the view is shown (a failure is retried on showing it). */
  const preload = () => void get().catch(() => undefined);
  return Object.assign(Lazy, { preload });
}

/**
 * preloadViews fetches every lazy view's chunk when the browser is idle (a
 * failure is retried on showing it). Once all have come it sets
 * data-views-loaded on <html>: from then on every view opens offline (the
 * dashboard's end-to-end tests wait for it before going offline).
 */
export function preloadViews(): void {
  const run = () => {
    void Promise.all(loaders.map((get) => get())).then(
      () => (document.documentElement.dataset.viewsLoaded = "true"),
      () => undefined,
    );
  };
  if ("requestIdleCallback" in window) requestIdleCallback(run, { timeout: 2000 });
  else setTimeout(run, 200);
}
