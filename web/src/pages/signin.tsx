/**
 * The sign-in form. Signing in is online-only: the password is never kept
 * in the outbox, and POST /v1/sessions takes no Idempotency-Key.
 */
import { useState } from "preact/hooks";
import { ApiError, request } from "../api";

/** SignIn posts the credentials; the server sets the HttpOnly session cookie. */
export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError("");
    try {
      await request("POST", "/v1/sessions", { email, password });
      onSignedIn();
    } catch (err) {
      setError(
        err instanceof ApiError
          ? err.detail || err.code
          : "Cannot reach the server: signing in needs a connection.",
      );
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="signin">
      <h1>riskapi</h1>
      <form onSubmit={submit}>
        <label>
          Email
          <input type="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
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
