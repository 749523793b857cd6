/**
 * The app shell: who is signed in, the navigation, the pending-changes
 * indicator, and the page for the current path.
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { explain, UNAUTHENTICATED } from "./api";
import { unsettled } from "./outbox/change";
import { lazy } from "./lazy";
import { mode as currentMode, onModeChange, type Mode } from "./mode";
import { SignIn } from "./pages/signin";
import { navigate, usePath } from "./router";
import { identity, onIdentityChange, signOut as endSession, signOutPending, whoAmI, type Session } from "./session";
import { outbox, useOnline } from "./state";
import { pageTitle, titled } from "./title";

// The signed-in shell and every page are chunks of their own (shell.tsx, lazy.tsx):
// the first load is the sign-in form. The shell comes as soon as someone is known
// or about to be: at start-up when this browser has a signed-in user, else when the
// sign-in form is submitted.
const Shell = lazy(() => import("./shell").then((m) => m.Shell));
if (identity()) Shell.preload();

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
        // Offline, the header says so and the pages show what this browser kept (offline.ts).
        setError(navigator.onLine ? explain(err) : "");
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

  // Each page's title names it; a risk's page puts the risk's own title once read (useTitle).
  const titleKey = session === undefined ? "" : session === null ? "signed-out" : path;
  useEffect(() => {
    if (titleKey) document.title = titleKey === "signed-out" ? titled("Sign in") : pageTitle(titleKey);
  }, [titleKey]);

  if (session === undefined) return <p class="loading">Loading…</p>;
  if (session === null) return <SignIn onSubmit={Shell.preload} onSignedIn={signedIn} signOutWaits={signOutWaits} />;
  return (
    <Shell path={path} session={session} online={online} mode={mode} error={error} confirmSignOut={confirmSignOut}
      onSignOut={(c) => void signOut(c)} onCancelSignOut={() => setConfirmSignOut(0)} />
  );
}
