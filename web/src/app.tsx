/**
 * The app shell: who is signed in, the navigation, the pending-changes
 * indicator, and the page for the current path.
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { explain, UNAUTHENTICATED } from "./api";
import { PendingIndicator } from "./changes";
import { unsettled } from "./outbox/change";
import { lazy, preloadViews } from "./lazy";
import { mode as currentMode, onModeChange, setMode, type Mode } from "./mode";
import { SignIn } from "./pages/signin";
import { onLinkClick, navigate, usePath } from "./router";
import { identity, isAdmin, onIdentityChange, signOut as endSession, signOutPending, whoAmI, type Session } from "./session";
import { outbox, useOnline } from "./state";
import { pageTitle, titled } from "./title";

// Every page is a chunk of its own, loaded when first shown, or preloaded
// once someone is signed in (lazy.tsx): the first load is the sign-in form
// and the shell. The risk list, the page after signing in, is fetched as soon
// as someone is known or about to be: at start-up when this browser has a
// signed-in user, else when the sign-in form is submitted.
const RisksPage = lazy(() => import("./pages/risks").then((m) => m.RisksPage));
if (identity()) RisksPage.preload();
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

/** App renders the dashboard. */
export function App() {
  const path = usePath();
  const online = useOnline();
  // Nobody signed in as this browser last knew it: the sign-in form shows at
  // once, while the server is asked (a cookie it still honours, rare without
  // that record, swaps in the app when the answer comes). Someone signed in:
  // "Loading…" until the server says whether their session still holds.
  const [session, setSession] = useState<Session | null | undefined>(() => (identity() ? undefined : null));
  const [error, setError] = useState("");
  // A sign-out made offline: signed out here, the server's session ended on reconnecting.
  const [signOutWaits, setSignOutWaits] = useState(signOutPending);
  // The Test data switch (mode.ts): the page is drawn again, from the sandbox or live data.
  const [mode, setModeState] = useState<Mode>(currentMode);
  useEffect(() => onModeChange(() => setModeState(currentMode())), []);

  const refresh = useCallback(() => {
    whoAmI().then(
      (s) => {
        setSession(s);
        setSignOutWaits(signOutPending());
      },
      (err: unknown) => {
        // Offline at start-up: the last known user goes on working; the outbox keeps their changes.
        const owner = identity();
        setSession(owner ? { me: undefined, owner } : null);
        setError(explain(err));
        setSignOutWaits(signOutPending());
      },
    );
  }, []);
  useEffect(refresh, [refresh]);
  // An error that was the connection's (a start-up while offline) is stale once
  // it is back, and a sign-out made offline can now reach the server.
  useEffect(() => {
    if (!online) return;
    setError("");
    if (signOutPending()) refresh();
  }, [online, refresh]);
  useEffect(() => {
    // A 401 while someone is signed in, or another tab signing in or out: ask the
    // server whose the cookie is now. A 401 with nobody signed in is the answer
    // already (asking again on it looped, hundreds of requests a second).
    const onUnauthenticated = () => {
      if (identity()) refresh();
    };
    addEventListener(UNAUTHENTICATED, onUnauthenticated);
    const off = onIdentityChange(refresh);
    return () => {
      removeEventListener(UNAUTHENTICATED, onUnauthenticated);
      off();
    };
  }, [refresh]);

  const signedIn = (s: Session) => {
    setError("");
    setSession(s);
    // A new user sees nothing of earlier users' settled changes.
    void outbox().forgetOthersHistory(s.owner);
    outbox().retryNow();
    navigate("/");
  };
  const [confirmSignOut, setConfirmSignOut] = useState(0);
  const signOut = async (pendingChanges: "ask" | "keep" | "discard") => {
    const owner = identity();
    const pending = (await outbox().list()).filter(unsettled);
    if (pending.length > 0 && pendingChanges === "ask") {
      setConfirmSignOut(pending.length);
      return;
    }
    setConfirmSignOut(0);
    if (owner && pendingChanges === "discard") await outbox().forget(owner, true);
    try {
      await endSession();
    } catch (err) {
      setError(explain(err));
      return;
    }
    // The user's history of settled changes goes with them.
    if (owner) await outbox().forget(owner, false);
    setSignOutWaits(signOutPending());
    setSession(null);
  };

  // A new page (not a new query: filters keep their focus) takes keyboard focus
  // to its content, as a full page load would start there, not on <body>.
  const shown = useRef(path);
  useEffect(() => {
    if (shown.current === path) return;
    shown.current = path;
    document.getElementById("main")?.focus({ preventScroll: true });
  }, [path]);
  // Signed in: the other pages' chunks come while the browser is idle, so they open offline too.
  const signedInNow = !!session;
  useEffect(() => {
    if (signedInNow) preloadViews();
  }, [signedInNow]);

  // Each page's title names it; a risk's page puts the risk's own title once read (useTitle).
  const titleKey = session === undefined ? "" : session === null ? "signed-out" : path;
  useEffect(() => {
    if (titleKey) document.title = titleKey === "signed-out" ? titled("Sign in") : pageTitle(titleKey);
  }, [titleKey]);

  if (session === undefined) return <p class="loading">Loading…</p>;
  if (session === null) return <SignIn onSubmit={RisksPage.preload} onSignedIn={signedIn} signOutWaits={signOutWaits} />;
  return (
    <div class="shell" onClick={(e) => onLinkClick(e as unknown as MouseEvent)}>
      <a class="skip" href="#main">Skip to content</a>
      <Header path={path} session={session} online={online} mode={mode} onSignOut={() => void signOut("ask")} />
      {mode === "test" && (
        <p class="test-banner" role="status" data-testid="test-banner">
          Test data: you are viewing the sandbox. Nothing here touches live data; changes made now are saved to the sandbox.
        </p>
      )}
      {confirmSignOut > 0 && (
        <ConfirmSignOut count={confirmSignOut} onChoose={(c) => void signOut(c)} onCancel={() => setConfirmSignOut(0)} />
      )}
      {error && <p class="error" role="alert">{error}</p>}
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
