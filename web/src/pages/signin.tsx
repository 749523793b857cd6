/**
 * The sign-in form. Signing in is online-only: the password is never kept
 * in the outbox, and POST /v1/sessions takes no Idempotency-Key. It names
 * whose changes wait in this browser for their author (never what they are).
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { explain } from "../api";
import { signIn, type Session } from "../session";
import { outbox } from "../state";

/**
 * SignIn posts the credentials; the server sets the HttpOnly session cookie.
 * onSubmit is called as the form is sent (the app fetches the next page
 * meanwhile); signOutWaits says a sign-out made offline has not reached the
 * server yet.
 */
export function SignIn({ onSignedIn, onSubmit, signOutWaits }: { onSignedIn: (s: Session) => void; onSubmit?: () => void; signOutWaits?: boolean }) {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const [waiting, setWaiting] = useState<{ email: string; count: number }[]>([]);
  // The form starts in Email, also when it replaces the app at a sign-out, where
  // the autofocus attribute of a page load does not apply.
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), []);
  useEffect(() => {
    const load = () => void outbox().waiting().then(setWaiting);
    load();
    return outbox().subscribe(load);
  }, []);
  const submit = async (e: Event) => {
    e.preventDefault();
    onSubmit?.();
    setBusy(true);
    setError("");
    try {
      onSignedIn(await signIn(email, password));
    } catch (err) {
      setError(explain(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="signin">
      <h1>riskapi</h1>
      {signOutWaits && (
        <p class="offline-note" role="status">
          Signed out in this browser. The server could not be reached: it ends the session as soon as the connection is back.
        </p>
      )}
      {waiting.length > 0 && (
        <div class="waiting" role="status">
          {waiting.map((w) => (
            <p key={w.email}>
              {w.count === 1 ? "1 change" : `${w.count} changes`} of <strong>{w.email}</strong> {w.count === 1 ? "is" : "are"} waiting
              in this browser: {w.count === 1 ? "it is" : "they are"} sent when {w.email} signs in again, and only then.
            </p>
          ))}
        </div>
      )}
      <form onSubmit={submit}>
        <label>
          Email
          <input type="email" autocomplete="username" required ref={first} value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </label>
        <label>
          Password
          <input type="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        </label>
        {error && <p class="error" role="alert">{error}</p>}
        <button type="submit" disabled={busy}>Sign in</button>
      </form>
    </main>
  );
}
