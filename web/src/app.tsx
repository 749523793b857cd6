/**
 * The app shell: who is signed in, the navigation, the pending-changes
 * indicator, and the page for the current path.
 */
import { useCallback, useEffect, useState } from "preact/hooks";
import { ApiError, request, UNAUTHENTICATED } from "./api";
import { ChangesPanel, PendingIndicator } from "./changes";
import { AdminPage } from "./pages/admin";
import { EventsPage } from "./pages/events";
import { RequestsPage } from "./pages/requests";
import { RiskPage } from "./pages/risk";
import { RisksPage } from "./pages/risks";
import { SignIn } from "./pages/signin";
import { onLinkClick, navigate, usePath } from "./router";
import { isAdmin, whoAmI, type Session } from "./session";
import { outbox, useOnline } from "./state";

/** App renders the dashboard. */
export function App() {
  const path = usePath();
  const online = useOnline();
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [error, setError] = useState("");

  const refresh = useCallback(() => {
    whoAmI().then(setSession, (err: unknown) => {
      // Offline at start-up: show what we can; the outbox keeps working.
      setSession({ me: undefined });
      setError(err instanceof Error ? err.message : String(err));
    });
  }, []);
  useEffect(refresh, [refresh]);
  useEffect(() => {
    const signedOut = () => setSession(null);
    addEventListener(UNAUTHENTICATED, signedOut);
    return () => removeEventListener(UNAUTHENTICATED, signedOut);
  }, []);

  const signedIn = () => {
    outbox().retryNow();
    refresh();
    navigate("/");
  };
  const [confirmSignOut, setConfirmSignOut] = useState(0);
  const signOut = async (discardPending: boolean) => {
    const pending = (await outbox().list()).filter((c) => c.state === "pending");
    if (pending.length > 0 && !discardPending) {
      setConfirmSignOut(pending.length);
      return;
    }
    // Changes left queued would otherwise be sent by whoever signs in next.
    for (const c of pending) await outbox().discard(c.key, "discarded at sign-out");
    setConfirmSignOut(0);
    try {
      await request("DELETE", "/v1/sessions");
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 401)) {
        setError(err instanceof Error ? err.message : String(err));
        return;
      }
    }
    setSession(null);
  };

  if (session === undefined) return <p class="loading">Loading…</p>;
  if (session === null) return <SignIn onSignedIn={signedIn} />;
  return (
    <div class="shell" onClick={(e) => onLinkClick(e as unknown as MouseEvent)}>
      <Header path={path} session={session} online={online} onSignOut={() => void signOut(false)} />
      {confirmSignOut > 0 && (
        <ConfirmSignOut count={confirmSignOut} onConfirm={() => void signOut(true)} onCancel={() => setConfirmSignOut(0)} />
      )}
      {error && <p class="error" role="alert">{error}</p>}
      <main>{page(path, session)}</main>
      <ChangesPanel />
    </div>
  );
}

function page(path: string, session: Session) {
  const risk = /^\/risks\/([^/]+)$/.exec(path);
  if (risk) return <RiskPage id={decodeURIComponent(risk[1]!)} />;
  if (path === "/requests") return <RequestsPage />;
  if (path === "/events") return <EventsPage admin={isAdmin(session)} />;
  if (path.startsWith("/admin")) return <AdminPage path={path} session={session} />;
  return <RisksPage />;
}

/** Header: navigation (Admin for admins only), the pending-changes indicator, who is signed in. */
function Header(props: { path: string; session: Session; online: boolean; onSignOut: () => void }) {
  const { path, session } = props;
  return (
    <header>
      <a href="/" class="brand">riskapi</a>
      <nav aria-label="Main">
        <a href="/" aria-current={path === "/" ? "page" : undefined}>Risks</a>
        <a href="/requests" aria-current={path === "/requests" ? "page" : undefined}>Request log</a>
        <a href="/events" aria-current={path === "/events" ? "page" : undefined}>Events</a>
        {isAdmin(session) && (
          <a href="/admin/users" aria-current={path.startsWith("/admin") ? "page" : undefined}>Admin</a>
        )}
      </nav>
      <PendingIndicator />
      {!props.online && <span class="badge offline">Offline</span>}
      <span class="who">{session.me ? `${session.me.user.email} (${session.me.user.role})` : ""}</span>
      <button type="button" class="secondary" onClick={props.onSignOut}>Sign out</button>
    </header>
  );
}

/** ConfirmSignOut asks before discarding changes not yet sent. */
function ConfirmSignOut(props: { count: number; onConfirm: () => void; onCancel: () => void }) {
  const n = props.count;
  return (
    <div class="confirm row" role="alertdialog" aria-label="Sign out with unsent changes">
      <span>
        {n === 1 ? "1 change has" : `${n} changes have`} not reached the server yet. Signing out discards {n === 1 ? "it" : "them"}.
      </span>
      <button type="button" class="danger" onClick={props.onConfirm}>Discard and sign out</button>
      <button type="button" class="secondary" onClick={props.onCancel}>Cancel</button>
    </div>
  );
}
