/**
 * Pieces the read-only pages share: loading a list that may not exist on
 * this server, and saying so.
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { api, explain, isUnavailable, NetworkError, type Page, type User } from "../api";
import type { Change } from "../outbox/change";
import { canRead } from "../offline";
import { identity } from "../session";
import { outbox, useOnline } from "../state";
import { useSettled } from "../settled";

const outboxAck = (key: string) => outbox().acknowledge(key);

/** Loaded is what useList returns: the page, or why there is none. */
export interface Loaded<T> {
  page: Page<T> | undefined;
  unavailable: boolean;
  /** Why the page could not be read, in words ("" when it was). */
  error: string;
  /** True when it could not be read because the browser is offline (error says so too). */
  offline: boolean;
  reload: () => void;
}

/**
 * offlineMessage says that what (e.g. "risks") cannot be read now — the
 * browser is offline, or online but the server cannot be reached — and that
 * the user's changes are not lost: the outbox sends them later.
 */
export function offlineMessage(what: string): string {
  return navigator.onLine
    ? `Cannot reach the server: ${what} cannot be loaded now; changes you make are kept and sent when it answers again.`
    : `You are offline: ${what} cannot be loaded now; changes you make are kept and sent when you are back online.`;
}

/**
 * useOneAtATime returns a runner that does work unless earlier work it was
 * given is still running, in which case it does nothing and answers
 * undefined: a second click while the first is on its way (a double click)
 * must not mint a second idempotency key and so make a second object.
 */
export function useOneAtATime(): <T>(work: () => Promise<T>) => Promise<T | undefined> {
  const running = useRef(false);
  return async (work) => {
    if (running.current) return undefined;
    running.current = true;
    try {
      return await work();
    } finally {
      running.current = false;
    }
  };
}

/** useSubmitOnce wraps a form's async submit to run one at a time (useOneAtATime). */
export function useSubmitOnce(submit: (e: Event) => Promise<void>): (e: Event) => Promise<void> {
  const once = useOneAtATime();
  return async (e: Event) => {
    e.preventDefault();
    await once(() => submit(e));
  };
}

/** isOffline is true when the browser is offline, or err is a request that reached no server (NetworkError). */
export function isOffline(err?: unknown): boolean {
  return !navigator.onLine || err instanceof NetworkError;
}

/**
 * useList reads a page with fetch (an SDK call) whenever `key` changes, and
 * again when a change settles or the browser comes back online; a null key
 * reads nothing. Offline it reads once, answered by the service worker from
 * the user's cache (offline.ts), and says at once when that has no copy; with
 * no service worker it does not try.
 */
export function useList<T>(key: string | null, fetch: () => Promise<Page<T>>): Loaded<T> {
  const [page, setPage] = useState<Page<T> | undefined>();
  const [unavailable, setUnavailable] = useState(false);
  const [error, setError] = useState("");
  const [offline, setOffline] = useState(false);
  const online = useOnline();
  const reload = useCallback(() => {
    if (key === null) return;
    const gone = () => {
      setOffline(true);
      setError(offlineMessage("this list"));
    };
    if (!canRead()) return gone();
    fetch().then(
      (p) => {
        setPage(p);
        setError("");
        setOffline(false);
        setUnavailable(false);
      },
      (err: unknown) => {
        if (isUnavailable(err)) setUnavailable(true);
        else if (isOffline(err)) gone();
        else {
          // Refused: the rows of the query before are no answer to this one.
          setPage(undefined);
          setOffline(false);
          setError(explain(err));
        }
      },
    );
    // fetch is a new closure each render; key says when it reads something else.
  }, [key]);
  useEffect(reload, [reload, online]);
  useSettled(reload);
  return { page, unavailable, error, offline, reload };
}

/** Offline says that what cannot be loaded while offline (or the server is unreachable), in place of an empty list. */
export function Offline({ what }: { what: string }) {
  return <p class="offline-note" role="status">{offlineMessage(what)}</p>;
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

/** STALE_EDIT is what a form says of an edit refused 412: the API's detail names If-Match, which a form's user never sees. */
export const STALE_EDIT = "someone changed it after you opened this form, so nothing was saved. Press Edit to start again from it as it is now.";

/** fieldErrors of a refused change: its VALIDATION_FAILED fields, else its detail under "form" (in words for a 412). */
export function fieldErrors(c: Change): FieldErrors {
  const errs = c.problem?.errors ?? [];
  if (errs.length) return Object.fromEntries(errs.map((e) => [e.field, e.detail]));
  if (c.problem?.code === "PRECONDITION_FAILED") return { form: STALE_EDIT };
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

/**
 * ScoreSelect is a 1–5 select with a visible label (likelihood, impact), and the
 * server's error beside it; with `unset`, also "not assessed" (the value ""), so a
 * factor nobody has assessed is shown as such, not as a made-up number.
 */
export function ScoreSelect(props: { label: string; value: string; onChange: (v: string) => void; error?: string | undefined; unset?: boolean }) {
  const id = `err-${props.label.toLowerCase()}`;
  return (
    <label>
      {props.label}
      <select value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}
        aria-invalid={props.error ? true : undefined} aria-describedby={props.error ? id : undefined}>
        {[...(props.unset ? [""] : []), "1", "2", "3", "4", "5"].map((v) => (
          <option key={v} value={v}>{v || "not assessed"}</option>
        ))}
      </select>
      {props.error && <span class="field-error" id={id}>{props.error}</span>}
    </label>
  );
}

/**
 * Aside is a form's values kept beside it rather than in it: a refused
 * change's while the user already has a newer draft in the form, or that
 * draft once the refused values were put back. Neither is lost.
 */
export interface Aside {
  /** The group's accessible name: "Refused change" or "Your draft". */
  label: string;
  /** What the values are, in a sentence. */
  note: string;
  values: Record<string, string>;
  /** The server's errors by field, as fieldErrors returns them. */
  errors: FieldErrors;
}

/** sameValues is true when the two forms hold the same value in every field of a. */
export function sameValues(a: Record<string, string>, b: Record<string, string>): boolean {
  return Object.keys(a).every((k) => a[k] === b[k]);
}

/**
 * KeptAside shows an Aside's values (those of fields, when not empty) with
 * the server's errors, a button that puts them back into the form and one
 * that dismisses them.
 */
export function KeptAside(props: { aside: Aside; fields: [string, string][]; onRestore: () => void; onDismiss: () => void }) {
  const { aside } = props;
  const shown = props.fields.filter(([k]) => aside.values[k]);
  return (
    <div class="kept-aside" role="group" aria-label={aside.label}>
      <p><strong>{aside.label}</strong> — {aside.note}</p>
      {aside.errors.form && <p class="error">{aside.errors.form}</p>}
      <dl>
        {shown.map(([k, label]) => (
          <div key={k}>
            <dt>{label}</dt>
            <dd>{aside.values[k]}{aside.errors[k] && <span class="field-error"> — {aside.errors[k]}</span>}</dd>
          </div>
        ))}
      </dl>
      <div class="row">
        <button type="button" class="secondary small" onClick={props.onRestore}>Put these back in the form</button>
        <button type="button" class="secondary small" onClick={props.onDismiss}>Dismiss</button>
      </div>
    </div>
  );
}

/*
 * Owners as the dashboard shows and writes them. The dashboard speaks the
 * newest API version (docs/api-versions.md), where an owner is one of the
 * tenant's users or a name: read as `{userId, name}`, written as `{userId}` or
 * `{name}`. The Owner field stays text that suggests the tenant's users: a
 * user's email picks that user, any other text is a name owner
 * (docs/dashboard.md, "Owners"). Changes queued before the move still carry a
 * string owner and are sent in the version they were made in, so a string is
 * read here too.
 */

/** A user as an owner field offers them. */
export interface OwnerChoice {
  id: string;
  email: string;
}

// Emails of the users this tab has listed, so an owner written as {userId}
// alone (a queued edit laid over the risk) still shows as a name.
const known = new Map<string, string>();
let listing: Promise<OwnerChoice[]> | undefined;

/** ownerName is an owner as text: a user's email, a name, or "" when there is none. */
export function ownerName(o: unknown): string {
  if (typeof o === "string") return o; // 2026-12-01's shape, of a change queued before the move
  if (o && typeof o === "object") {
    const { userId, name } = o as { userId?: string | null; name?: string };
    if (typeof name === "string") return name;
    if (userId) return known.get(userId) ?? (identity()?.userId === userId ? identity()!.email : userId);
  }
  return "";
}

/** ownerWrite is the owner to send for what the field holds: a listed user's email picks that user. */
export function ownerWrite(text: string, users: OwnerChoice[]): { userId: string } | { name: string } {
  const t = text.trim().toLowerCase();
  const u = t ? users.find((x) => x.email.toLowerCase() === t) : undefined;
  return u ? { userId: u.id } : { name: text };
}

/**
 * ownerChoices lists the tenant's users once per tab (at most 100, the first
 * page). Only admins may list users (GET /v1/users; docs/openapi.yaml gives a
 * member no other list of them): anyone else is offered themselves, without
 * asking the server for a 403, and types any other owner as a name.
 */
export function ownerChoices(admin: boolean): Promise<OwnerChoice[]> {
  const listed = admin
    ? (listing ??= api().users.listPage({ limit: 100 }).then(
      (p) => p.data.map((u: User) => ({ id: u.id, email: u.email })),
      () => {
        listing = undefined; // a member after all (403), or offline: asked again next time
        return [];
      },
    ))
    : Promise.resolve([]);
  return listed.then((list) => {
    const me = identity();
    const all = me && !list.some((u) => u.id === me.userId) ? [...list, { id: me.userId, email: me.email }] : list;
    for (const u of all) known.set(u.id, u.email);
    return all;
  });
}

/** useOwnerChoices is ownerChoices as state: [] until the list is read. */
export function useOwnerChoices(admin: boolean): OwnerChoice[] {
  const [users, setUsers] = useState<OwnerChoice[]>([]);
  useEffect(() => {
    let live = true;
    void ownerChoices(admin).then((u) => live && setUsers(u));
    return () => {
      live = false;
    };
  }, [admin]);
  return users;
}

/** OwnerOptions is the datalist an owner field names with `list`: the tenant's users by email. */
export function OwnerOptions({ id, users }: { id: string; users: OwnerChoice[] }) {
  return (
    <datalist id={id}>
      {users.map((u) => <option key={u.id} value={u.email} />)}
    </datalist>
  );
}
