/**
 * A minimal client-side router on the History API: the server answers every
 * dashboard path with index.html (web/handler.go), and the app picks the page.
 * A page's state that a reload or a shared link must keep (filters, the page
 * of a list) lives in the query string.
 */
import { useEffect, useState } from "preact/hooks";

const listeners = new Set<() => void>();

/** navigate shows path (with its query) without reloading the page; replace keeps the history entry. */
export function navigate(path: string, replace = false): void {
  if (path === location.pathname + location.search) return;
  if (replace) history.replaceState(null, "", path);
  else history.pushState(null, "", path);
  for (const fn of listeners) fn();
}

function useLocationPart(read: () => string): string {
  const [v, setV] = useState(read);
  useEffect(() => {
    const update = () => setV(read());
    listeners.add(update);
    addEventListener("popstate", update);
    return () => {
      listeners.delete(update);
      removeEventListener("popstate", update);
    };
  }, []);
  return v;
}

/** usePath returns the current path and re-renders when it changes. */
export function usePath(): string {
  return useLocationPart(() => location.pathname);
}

/** useQuery returns the current query and re-renders when it changes. */
export function useQuery(): URLSearchParams {
  return new URLSearchParams(useLocationPart(() => location.search));
}

/** withQuery is path with the non-empty params as its query string. */
export function withQuery(path: string, params: Record<string, string | string[] | number | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    for (const x of Array.isArray(v) ? v : [v]) if (x !== undefined && x !== null && x !== "") q.append(k, String(x));
  }
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

/** onLinkClick turns a plain left click on an <a href="/…"> into navigate(). */
export function onLinkClick(e: MouseEvent): void {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = (e.target as Element | null)?.closest("a");
  if (!a || a.target || a.hasAttribute("download") || a.origin !== location.origin) return;
  if (a.pathname.startsWith("/v1/")) return;
  // A link within this page (the skip link) is the browser's to follow.
  if (a.hash && a.pathname === location.pathname && a.search === location.search) return;
  e.preventDefault();
  navigate(a.pathname + a.search);
}
