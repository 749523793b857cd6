/**
 * The document's title: each page names itself first ("Risks · riskapi"), so
 * a tab, the history list and a screen reader's page announcement say which
 * page it is, not only the app's name.
 */
import { useEffect } from "preact/hooks";

const APP = "riskapi";

/** titled is the document title of a page called name. */
export function titled(name: string): string {
  return name ? `${name} · ${APP}` : APP;
}

/** PAGES names the app's pages by path; an /admin/… path is the Admin page. */
const PAGES: Record<string, string> = {
  "/": "Risks", "/my-work": "My work", "/requests": "Request log", "/events": "Events", "/audit": "Audit log", "/account/password": "Change password",
  "/trends": "Trends", "/report": "Risk report",
};

/**
 * pageTitle is the title of the page at path for a signed-in user (a risk's
 * page says "Risk" until the risk is read, then its title: useTitle).
 */
export function pageTitle(path: string): string {
  if (/^\/risks\/[^/]+$/.test(path)) return titled("Risk");
  if (path === "/admin" || path.startsWith("/admin/")) return titled("Admin");
  return titled(PAGES[path] ?? "Page not found");
}

/** useTitle sets the document title to name's (nothing while name is undefined: a page still loading). */
export function useTitle(name: string | undefined): void {
  useEffect(() => {
    if (name !== undefined) document.title = titled(name);
  }, [name]);
}
