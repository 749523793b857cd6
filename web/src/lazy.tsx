/**
 * Views loaded when first shown: each is a chunk of its own (a Vite dynamic
 * import), so the first load of the dashboard (the sign-in form and the shell)
 * carries none of them (docs/dashboard.md, "First load").
 * Once someone is signed in, preloadViews fetches them all while the browser
 * is idle, so that a page opened later, offline too, needs no request.
 */
import type { ComponentType, JSX } from "preact";
import { useEffect, useState } from "preact/hooks";

const loaders: (() => Promise<unknown>)[] = [];

/**
 * lazy is a component that renders the one load() resolves to, and says
 * "Loading…" until it has; a failed load (offline before the chunk came) says
 * so — that the browser is offline, when it is — with a button to try again,
 * and tries again by itself when the browser is back online. A quiet one (a
 * panel beside the page) shows nothing until it is there.
 */
export function lazy<P extends object>(
  load: () => Promise<ComponentType<P>>,
  opts: { quiet?: boolean } = {},
): ComponentType<P> & { preload: () => void } {
  let loaded: ComponentType<P> | undefined;
  let pending: Promise<ComponentType<P>> | undefined;
  const get = () =>
    (pending ??= load().then(
      (c) => (loaded = c),
      (err: unknown) => {
        pending = undefined; // the next attempt imports again
        throw err;
      },
    ));
  loaders.push(get);
  function Lazy(props: P): JSX.Element | null {
    const [, setLoads] = useState(0); // a re-render once the chunk is there
    const [failed, setFailed] = useState(false);
    const [attempt, setAttempt] = useState(0);
    useEffect(() => {
      if (loaded) return;
      let live = true;
      get().then(
        () => live && setLoads((n) => n + 1),
        () => live && setFailed(true),
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
      addEventListener("online", retry);
      return () => removeEventListener("online", retry);
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
