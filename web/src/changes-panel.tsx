/**
 * The changes panel: each change the outbox holds, as pending, done or
 * refused, with what the server said; and the progress bar of an upload. A
 * chunk of its own, loaded once someone is signed in (lazy.tsx).
 */
import "./changes-panel.css";
import { redone, unsettled, type Change } from "./outbox/change";
import { ownerName } from "./pages/common";
import { outbox, useChanges, useOnline, type Progress } from "./state";

/** ChangesPanel lists the changes, newest first, with their state and what the server said. */
export function ChangesPanel() {
  const { changes, progress } = useChanges();
  const online = useOnline();
  if (changes.length === 0) return null;
  const settled = changes.filter((c) => !unsettled(c));
  return (
    <aside class="changes" aria-label="Changes">
      <h2>Changes</h2>
      <p class="hint">
        Each change is kept in this browser with its idempotency key and sent until the server settles it, so
        it is applied exactly once, even after going offline or reloading.
      </p>
      <ul>
        {[...changes].reverse().map((c) => (
          <ChangeRow key={c.key} c={c} progress={progress[c.key]} online={online} again={redone(c, changes)} />
        ))}
      </ul>
      <div class="row">
        {changes.some((c) => c.state === "pending") && (
          <button type="button" class="secondary" onClick={() => outbox().retryNow()}>Retry now</button>
        )}
        {settled.length > 0 && (
          <button type="button" class="secondary" onClick={() => settled.forEach((c) => void outbox().dismiss(c.key))}>
            Clear settled
          </button>
        )}
      </div>
    </aside>
  );
}

function ChangeRow({ c, progress, online, again }: { c: Change; progress: Progress | undefined; online: boolean; again: boolean }) {
  const uploading = c.state === "pending" && c.body?.kind === "file" && progress;
  return (
    <li class={"change " + c.state} data-key={c.key}>
      <span class={"badge " + c.state}>{c.state}</span> <span class="label">{c.label}</span>
      {c.mode === "test" && <span class="badge test" title="Made with Test data on: sent to the sandbox"> test data</span>}
      {uploading && <UploadProgress p={progress} />}
      <div class="meta">
        <span>made {new Date(c.createdAt).toLocaleString()}</span>
        {c.state === "pending" && !online && <span>offline: sent when the connection is back</span>}
        {c.attempts > 0 && <span>{c.attempts === 1 ? "1 attempt" : `${c.attempts} attempts`}</span>}
        {c.lastReason && <span>{reason(c)}</span>}
        {c.problem?.code && <code>{c.problem.code}</code>}
        <span title="Idempotency-Key">key <code>{c.key}</code></span>
        <a href={`/requests?idempotencyKey=${encodeURIComponent(c.key)}`}>Log</a>
        {/* What it typed stays readable here: after a 404 its form is gone with the thing, and a reload takes it from beside its form. */}
        {c.state === "refused" && c.form && !again && <span>{c.lastStatus === 404 ? "it is gone, and its form with it; " : ""}what you typed: {typed(c)}</span>}
        {again && <span>made again and saved since</span>}
        {c.state === "conflict" && <a href={c.path}>Choose on its page</a>}
        {/* Here too, for a conflict whose page is gone (the thing deleted since): it would stay held for ever. */}
        {c.state === "conflict" && (
          <button type="button" class="secondary" title="Drop your fields that clash, send any others" onClick={() => void outbox().resolve(c.key, "theirs")}>
            Keep theirs
          </button>
        )}
      </div>
    </li>
  );
}

/**
 * typed lists the fields a JSON change sent, as `title “Flood”`: all a refused edit of a deleted risk has left.
 * A risk's owner reads as it was typed in its form (kept with the change, so after a reload too), else as
 * ownerName says (a name, or a user's email once this tab has listed them), as an action's ownerId does — never
 * a bare usr_… where the dashboard knows better.
 */
function typed(c: Pick<Change, "body" | "form">): string {
  if (c.body?.kind !== "json") return "";
  const show = (k: string, v: unknown) =>
    k === "owner" ? (c.form?.values.owner || ownerName(v))
    : k === "ownerId" && typeof v === "string" ? ownerName({ userId: v })
    : typeof v === "object" && v !== null ? JSON.stringify(v) : String(v);
  return Object.entries(c.body.json as Record<string, unknown>).map(([k, v]) => `${k} “${show(k, v)}”`).join(", ");
}

/** reason says what the last attempt got, in words: a rate limit as "try again in 3 s". */
function reason(c: Change): string {
  if (c.state === "pending" && c.lastStatus === 429) {
    const s = Math.max(1, Math.ceil((c.nextAttemptAt - Date.now()) / 1000));
    return `Too many requests: trying again in ${s} s`;
  }
  // A redelivery's answer says how many endpoints it went to: "applied" alone hid that none did.
  const sent = (c.result as { deliveries?: unknown } | undefined)?.deliveries;
  if (c.state === "done" && typeof sent === "number") {
    return `${c.lastStatus}: ${sent === 0 ? "no endpoint is subscribed to this event, so nothing was sent" : sent === 1 ? "queued for 1 endpoint" : `queued for ${sent} endpoints`}`;
  }
  return `${c.lastStatus ? `${c.lastStatus}: ` : ""}${c.lastReason}`;
}

/** UploadProgress is a progress bar for an upload in flight. */
export function UploadProgress({ p }: { p: Progress }) {
  const pct = p.total > 0 ? Math.floor((p.loaded / p.total) * 100) : 0;
  return (
    <span class="progress">
      <progress aria-label="Upload progress" max={100} value={pct} /> {pct}%
    </span>
  );
}
