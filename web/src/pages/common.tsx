/**
 * Pieces the read-only pages share: loading a list that may not exist on
 * this server, and saying so.
 */
import { useCallback, useEffect, useState } from "preact/hooks";
import { explain, isUnavailable, type Page } from "../api";
import type { Change } from "../outbox/change";
import { outbox, useSettled } from "../state";

const outboxAck = (key: string) => outbox().acknowledge(key);

/** Loaded is what useList returns: the page, or why there is none. */
export interface Loaded<T> {
  page: Page<T> | undefined;
  unavailable: boolean;
  error: string;
  reload: () => void;
}

/**
 * useList reads a page with fetch (an SDK call) whenever `key` changes, and
 * again when a change settles; a null key reads nothing.
 */
export function useList<T>(key: string | null, fetch: () => Promise<Page<T>>): Loaded<T> {
  const [page, setPage] = useState<Page<T> | undefined>();
  const [unavailable, setUnavailable] = useState(false);
  const [error, setError] = useState("");
  const reload = useCallback(() => {
    if (key === null) return;
    fetch().then(
      (p) => {
        setPage(p);
        setError("");
        setUnavailable(false);
      },
      (err: unknown) => {
        if (isUnavailable(err)) setUnavailable(true);
        else setError(explain(err));
      },
    );
    // fetch is a new closure each render; key says when it reads something else.
  }, [key]);
  useEffect(reload, [reload]);
  useSettled(reload);
  return { page, unavailable, error, reload };
}

/** Unavailable says this server does not offer a feature (its route answered 404). */
export function Unavailable({ what, route }: { what: string; route: string }) {
  return (
    <div class="unavailable" role="note">
      <strong>{what} is not available on this server.</strong> <code>{route}</code> answered 404; a newer riskapi serves it.
    </div>
  );
}

/** Secret shows a secret that the server returns only once, with a copy button. */
export function Secret({ label, value, onDone }: { label: string; value: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="secret" role="alert">
      <p>
        <strong>{label}</strong> — shown only this once; it is not stored in this browser and cannot be shown again.
      </p>
      <code data-testid="secret">{value}</code>{" "}
      <button type="button" onClick={() => void navigator.clipboard.writeText(value).then(() => setCopied(true))}>
        {copied ? "Copied" : "Copy"}
      </button>{" "}
      <button type="button" class="secondary" onClick={onDone}>Done</button>
    </div>
  );
}

/** OnlineOnly explains why a form that creates a secret is not queued. */
export function OnlineOnly({ online }: { online: boolean }) {
  return (
    <p class="hint">
      Needs a connection: the response carries a secret shown once, so this is never queued for later
      {online ? "." : " — you are offline now."}
    </p>
  );
}

/** FieldErrors maps a field's name to what the server said is wrong with it. */
export type FieldErrors = Record<string, string>;

/** fieldErrors of a refused change: its VALIDATION_FAILED fields, else its detail under "form". */
export function fieldErrors(c: Change): FieldErrors {
  const errs = c.problem?.errors ?? [];
  if (errs.length) return Object.fromEntries(errs.map((e) => [e.field, e.detail]));
  return { form: c.problem?.detail || c.lastReason || "The server refused this change." };
}

/**
 * useRefusal calls restore with each refused change of the form `name` (for
 * `target`) not yet put back, then marks it put back: the form takes back
 * what the user typed from it and shows its errors beside the fields.
 */
export function useRefusal(changes: Change[], name: string, target: string | undefined, restore: (c: Change) => void): void {
  const c = [...changes].reverse().find((x) => x.state === "refused" && !x.restored && x.form?.name === name && x.form.target === target);
  useEffect(() => {
    if (!c) return;
    restore(c);
    void outboxAck(c.key);
    // restore is a new closure each render; the change's key says when to run.
  }, [c?.key]);
}

/** A field with its label and, when the server named it, the error beside it. */
export function Field(props: { label: string; name: string; errors: FieldErrors; children: (a11y: Record<string, unknown>) => preact.ComponentChildren }) {
  const err = props.errors[props.name];
  const id = `err-${props.name}`;
  return (
    <label>
      {props.label}
      {props.children(err ? { "aria-invalid": true, "aria-describedby": id } : {})}
      {err && <span class="field-error" id={id}>{err}</span>}
    </label>
  );
}

/** ScoreSelect is a 1–5 select with a visible label (likelihood, impact), and the server's error beside it. */
export function ScoreSelect(props: { label: string; value: string; onChange: (v: string) => void; error?: string | undefined }) {
  const id = `err-${props.label.toLowerCase()}`;
  return (
    <label>
      {props.label}
      <select value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}
        aria-invalid={props.error ? true : undefined} aria-describedby={props.error ? id : undefined}>
        {["1", "2", "3", "4", "5"].map((v) => (
          <option key={v} value={v}>{v}</option>
        ))}
      </select>
      {props.error && <span class="field-error" id={id}>{props.error}</span>}
    </label>
  );
}
