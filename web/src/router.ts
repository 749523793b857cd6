/**
 * A minimal client-side router on the History API: the server answers every
 * dashboard path with index.html (web/handler.go), and the app picks the page.
 */
import { useEffect, useState } from "preact/hooks";

const listeners = new Set<() => void>();

/** navigate shows path without reloading the page. */
export function navigate(path: string): void {
  if (path === location.pathname + location.search) return;
  history.pushState(null, "", path);
  for (const fn of listeners) fn();
}

/** usePath returns the current path and re-renders when it changes. */
export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const update = () => setPath(location.pathname);
    listeners.add(update);
    addEventListener("popstate", update);
    return () => {
      listeners.delete(update);
      removeEventListener("popstate", update);
    };
  }, []);
  return path;
}

/** onLinkClick turns a plain left click on an <a href="/…"> into navigate(). */
export function onLinkClick(e: MouseEvent): void {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = (e.target as Element | null)?.closest("a");
  if (!a || a.target || a.hasAttribute("download") || a.origin !== location.origin) return;
  if (a.pathname.startsWith("/v1/")) return;
  e.preventDefault();
  navigate(a.pathname + a.search);
}
