/**
 * The user's own account: changing the password (POST /v1/me/password). It is
 * sent now or not at all — a password is never kept in the outbox.
 */
import { useState } from "preact/hooks";
import { api, explain, RiskApiError } from "../api";
import type { Session } from "../session";
import { useOnline } from "../state";
import { useSubmitOnce } from "./common";

/** AccountPage changes the signed-in user's password; their other sessions end, this one stays. */
export function AccountPage({ session }: { session: Session }) {
  const online = useOnline();
  const [f, setF] = useState({ currentPassword: "", newPassword: "", repeat: "" });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [done, setDone] = useState(false);
  // One request at a time: a double click's second would send the old password again, be told it is wrong, and count as a failed attempt.
  const submit = useSubmitOnce(async () => {
    setDone(false);
    if (f.newPassword !== f.repeat) return setErrors({ repeat: "The two new passwords differ." });
    setErrors({});
    try {
      await api().account.changePassword(f.currentPassword, f.newPassword, { maxRetries: 0 });
      setF({ currentPassword: "", newPassword: "", repeat: "" });
      setDone(true);
    } catch (err) {
      const fields = err instanceof RiskApiError ? err.errors : [];
      setErrors(fields.length ? Object.fromEntries(fields.map((x) => [x.field, x.detail])) : { form: explain(err) });
    }
  });
  const field = (name: "currentPassword" | "newPassword" | "repeat", label: string, auto: string) => (
    <label>
      {label}
      <input type="password" autocomplete={auto} required minLength={name === "currentPassword" ? undefined : 8} maxLength={72}
        value={f[name]} aria-invalid={errors[name] ? true : undefined} aria-describedby={errors[name] ? `${name}-error` : undefined}
        onInput={(e) => setF({ ...f, [name]: e.currentTarget.value })} />
      {errors[name] && <span class="field-error" id={`${name}-error`}>{errors[name]}</span>}
    </label>
  );
  return (
    <section>
      <h1>Change password</h1>
      <p class="hint">For {session.owner.email}. Your other sessions end; this one stays. Needs a connection: a password is never kept in this browser.</p>
      <form class="stack" onSubmit={submit} aria-label="Change password">
        {field("currentPassword", "Current password", "current-password")}
        {field("newPassword", "New password", "new-password")}
        {field("repeat", "New password again", "new-password")}
        {errors.form && <p class="error" role="alert">{errors.form}</p>}
        {done && <p class="done" role="status">Password changed.</p>}
        <button type="submit" disabled={!online}>Change password</button>
      </form>
    </section>
  );
}
