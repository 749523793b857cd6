/**
 * The signed-in shell: the navigation, the pending-changes indicator, the test
 * data banner and the page for the current path. A chunk of its own, so that the
 * first load of a signed-out visitor is the sign-in form alone (docs/performance.md,
 * first load); it is fetched at start-up for a browser that has a signed-in user,
 * else when the sign-in form is submitted, and it preloads every page's chunk.
 */
import { useEffect, useState } from "preact/hooks";
import { PendingIndicator } from "./changes";
import { lazy, preloadViews } from "./lazy";
import { offlineCopy, onOfflineCopy } from "./offline";
import { setMode, type Mode } from "./mode";
import { onLinkClick } from "./router";
import { isAdmin, type Session } from "./session";

// Every page is a chunk of its own, loaded when first shown, or preloaded
// once someone is signed in (lazy.tsx): the first load is the sign-in form
// and the shell. The risk list, the page after signing in, is fetched as soon
// as someone is known or about to be: at start-up when this browser has a
// signed-in user, else when the sign-in form is submitted.
const RisksPage = lazy(() => import("./pages/risks").then((m) => m.RisksPage));
RisksPage.preload();
const RiskPage = lazy(() => import("./pages/risk").then((m) => m.RiskPage));
const RequestsPage = lazy(() => import("./pages/requests").then((m) => m.RequestsPage));
const EventsPage = lazy(() => import("./pages/events").then((m) => m.EventsPage));
const AuditPage = lazy(() => import("./pages/audit").then((m) => m.AuditPage));
const TrendsPage = lazy(() => import("./pages/trends").then((m) => m.TrendsPage));
const ReportPage = lazy(() => import("./pages/report").then((m) => m.ReportPage));
const AccountPage = lazy(() => import("./pages/account").then((m) => m.AccountPage));
const MyWorkPage = lazy(() => import("./pages/mywork").then((m) => m.MyWorkPage));
const AdminPage = lazy(() => import("./pages/admin").then((m) => m.AdminPage));
// Seldom shown: the sign-out question about unsent changes, and the app's own "Page
// not found". They ride in the risk list's chunk, which is fetched at start-up for
// anyone signed in (above), so the question is there when signing out offline.
const ConfirmSignOut = lazy(() => import("./pages/risks").then((m) => m.ConfirmSignOut), { quiet: true });
const NotFound = lazy(() => import("./pages/risks").then((m) => m.NotFound));
const ChangesPanel = lazy(() => import("./changes-panel").then((m) => m.ChangesPanel), { quiet: true });

/** Shell draws the dashboard for a signed-in session (app.tsx keeps who is signed in). */
export function Shell(props: {
  path: string; session: Session; online: boolean; mode: Mode; error: string;
  confirmSignOut: number; onSignOut: (c: "ask" | "keep" | "discard") => void; onCancelSignOut: () => void;
}) {
  const { path, session, mode, error, confirmSignOut } = props;
  // Signed in: the other pages' chunks come while the browser is idle, so they open offline too.
  useEffect(() => preloadViews(), []);
  return (
    <div class="shell" onClick={(e) => onLinkClick(e as unknown as MouseEvent)}>
      <a class="skip" href="#main">Skip to content</a>
      <Header path={path} session={session} online={props.online} mode={mode} onSignOut={() => props.onSignOut("ask")} />
      {mode === "test" && (
        <p class="test-banner" role="status" data-testid="test-banner">
          Test data: you are viewing the sandbox. Nothing here touches live data; changes made now are saved to the sandbox.
        </p>
      )}
      {/* One row under the header for them all: each had the row to itself, and an error covered the sign-out question. */}
      <div class="notices">
        {confirmSignOut > 0 && (
          <ConfirmSignOut count={confirmSignOut} onChoose={props.onSignOut} onCancel={props.onCancelSignOut} />
        )}
        {error && <p class="error" role="alert">{error}</p>}
        <OfflineCopy />
      </div>
      {/* Keyed by mode: every page reads again when the switch moves. */}
      <main id="main" tabIndex={-1} key={mode}>{page(path, session)}</main>
      <ChangesPanel />
    </div>
  );
}

function page(path: string, session: Session) {
  const risk = /^\/risks\/([^/]+)$/.exec(path);
  if (risk) return <RiskPage id={decodeURIComponent(risk[1]!)} admin={isAdmin(session)} />;
  if (path === "/my-work") return <MyWorkPage session={session} />;
  if (path === "/") return <RisksPage />;
  if (path === "/requests") return <RequestsPage />;
  if (path === "/events") return <EventsPage admin={isAdmin(session)} />;
  if (path === "/audit") return <AuditPage />;
  if (path === "/trends") return <TrendsPage />;
  if (path === "/report") return <ReportPage />;
  if (path === "/account/password") return <AccountPage session={session} />;
  if (path === "/admin" || path.startsWith("/admin/")) return <AdminPage path={path} session={session} />;
  return <NotFound />;
}

/**
 * OfflineCopy marks what the page shows as possibly out of date while it
 * comes from the service worker's cache (offline.ts): a reload offline shows
 * the lists and risks as this browser last read them.
 */
function OfflineCopy() {
  const [at, setAt] = useState(offlineCopy);
  useEffect(() => onOfflineCopy(() => setAt(offlineCopy())), []);
  if (!at) return null;
  return (
    <p class="offline-copy" role="status" data-testid="offline-copy">
      Saved copy: what you see was read <time dateTime={at}>{new Date(at).toLocaleString()}</time> and may be out of date.
    </p>
  );
}

/** Header: navigation (Audit log and Admin for admins only), the pending-changes indicator, the user's menu. */
function Header(props: { path: string; session: Session; online: boolean; mode: Mode; onSignOut: () => void }) {
  const { path, session } = props;
  const email = session.me?.user.email ?? session.owner.email;
  return (
    <header>
      <a href="/" class="brand">riskapi</a>
      <nav aria-label="Main">
        <a href="/" aria-current={path === "/" ? "page" : undefined}>Risks</a>
        <a href="/my-work" aria-current={path === "/my-work" ? "page" : undefined}>My work</a>
        <a href="/requests" aria-current={path === "/requests" ? "page" : undefined}>Request log</a>
        <a href="/events" aria-current={path === "/events" ? "page" : undefined}>Events</a>
        <a href="/trends" aria-current={path === "/trends" ? "page" : undefined}>Trends</a>
        <a href="/report" aria-current={path === "/report" ? "page" : undefined}>Report</a>
        {isAdmin(session) && <a href="/audit" aria-current={path === "/audit" ? "page" : undefined}>Audit log</a>}
        {isAdmin(session) && (
          <a href="/admin/users" aria-current={path.startsWith("/admin") ? "page" : undefined}>Admin</a>
        )}
      </nav>
      <PendingIndicator />
      {!props.online && <span class="badge offline">Offline</span>}
      <label class="test-switch">
        <input type="checkbox" role="switch" checked={props.mode === "test"}
          onChange={(e) => setMode((e.currentTarget as HTMLInputElement).checked ? "test" : "live")} />
        Test data
      </label>
      <details class="user-menu">
        <summary class="who">{email}{session.me ? ` (${session.me.user.role})` : ""}</summary>
        <div class="menu">
          <a href="/account/password">Change password</a>
        </div>
      </details>
      <button type="button" class="secondary" onClick={props.onSignOut}>Sign out</button>
    </header>
  );
}
