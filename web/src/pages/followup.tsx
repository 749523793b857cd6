/**
 * A risk's follow-up on its page (docs/dashboard.md, "Reviews, actions and
 * acceptances"): its reviews with a form to record one, its treatment actions
 * (owner, due date, status) with forms to add and edit them, and its
 * acceptances with a request form and, for an admin other than the
 * requester, approve and reject. Every change goes through the outbox like
 * the rest: queued with its author, an edit of an action with If-Match of the
 * version it was typed over, and shown as pending until the server settles it.
 */
import { useCallback, useEffect, useState } from "preact/hooks";
import { api, etag, type Acceptance, type Action, type Review, type Risk } from "../api";
import { actorName, cadence } from "../audit";
import { useActorNames } from "./audit";
import { today } from "../day";
import { isOverdue } from "../register/view";
import type { Change } from "../outbox/change";
import { withPending } from "../outbox/merge";
import { identity } from "../session";
import { outbox } from "../state";
import { useSettled } from "../settled";
import { Field, fieldErrors, ownerName, useOwnerChoices, useRefusal, useSubmitOnce, type FieldErrors, type OwnerChoice } from "./common";

/** How many of each a risk's page lists: the newest reviews and acceptances, the first actions. */
const SHOWN = 50;

/** firstOf reads up to n items of a list the SDK pages through. */
export async function firstOf<T>(items: AsyncGenerator<T, void, undefined>, n = SHOWN): Promise<T[]> {
  const out: T[] = [];
  for await (const x of items) {
    out.push(x);
    if (out.length >= n) break;
  }
  return out;
}

/**
 * validUntilBounds are the first and last days an acceptance requested on
 * `now`'s UTC day may be valid until: the server takes a day after today and
 * at most one year from today, the same date a year on (docs/register.md,
 * "Acceptances"; a 29 February's year on is 1 March, as the server counts it).
 */
export function validUntilBounds(now = new Date()): { min: string; max: string } {
  const [y, m, d] = [now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()];
  const day = (yy: number, dd: number) => new Date(Date.UTC(yy, m, dd)).toISOString().slice(0, 10);
  return { min: day(y, d + 1), max: day(y + 1, d) };
}

/** useRead reads with fetch now, when a change settles, and when key changes. */
function useRead<T>(key: string, fetch: () => Promise<T[]>): { items: T[]; error: string; reload: () => void } {
  const [items, setItems] = useState<T[]>([]);
  const [error, setError] = useState("");
  const reload = useCallback(() => {
    fetch().then(
      (x) => {
        setItems(x);
        setError("");
      },
      (err: unknown) => setError(err instanceof Error ? err.message : String(err)),
    );
  }, [key]);
  useEffect(reload, [reload]);
  useSettled(reload);
  return { items, error, reload };
}

/** FollowUp is the risk page's reviews, actions and acceptances. */
export function FollowUp({ risk, changes, admin }: { risk: Risk; changes: Change[]; admin: boolean }) {
  const users = useOwnerChoices(admin);
  return (
    <>
      <Reviews risk={risk} changes={changes} admin={admin} />
      <Actions risk={risk} changes={changes} users={users} />
      <Acceptances risk={risk} changes={changes} admin={admin} />
    </>
  );
}

const pendingOf = (changes: Change[], method: string, path: string) => changes.filter((c) => c.state === "pending" && c.method === method && c.path === path);

function Reviews({ risk, changes, admin }: { risk: Risk; changes: Change[]; admin: boolean }) {
  const { items } = useRead<Review>(risk.id, () => firstOf(api().reviews.list(risk.id)));
  const names = useActorNames(admin && items.some((r) => r.reviewer.type === "api_key"));
  const path = `/risks/${risk.id}/reviews`;
  const [outcome, setOutcome] = useState("unchanged");
  const [note, setNote] = useState("");
  const [errors, setErrors] = useState<FieldErrors>({});
  useRefusal(changes, "review", risk.id, (c) => {
    setOutcome(c.form!.values.outcome ?? "unchanged");
    setNote(c.form!.values.note ?? "");
    setErrors(fieldErrors(c));
  });
  const submit = useSubmitOnce(async () => {
    setErrors({});
    await outbox().enqueue({
      method: "POST", path, body: { kind: "json", json: { outcome, note } }, label: `Review risk “${risk.title}”`,
      form: { name: "review", target: risk.id, values: { outcome, note } },
    });
    setNote("");
    setOutcome("unchanged");
  });
  const pending = pendingOf(changes, "POST", path);
  return (
    <section class="reviews" aria-labelledby="reviews-title">
      <h2 id="reviews-title">Reviews</h2>
      <p>
        Reviewed: {risk.reviewEvery ? cadence(risk.reviewEvery) : "no cadence set"} · next review:{" "}
        {risk.reviewDate ? <time dateTime={risk.reviewDate}>{risk.reviewDate}</time> : "none"}
        {isOverdue(risk) && <span class="badge overdue"> overdue</span>}
      </p>
      <ul aria-label="Reviews">
        {pending.map((c) => (
          <li key={c.key} class="pending">{String((c.body?.kind === "json" && (c.body.json as { outcome?: string }).outcome) || "")} <span class="badge pending">pending</span></li>
        ))}
        {items.map((r) => (
          <li key={r.id}>
            <time dateTime={r.createdAt}>{new Date(r.createdAt).toLocaleString()}</time> — {actorName(r.reviewer, names)}: {r.outcome}
            {r.note ? ` — ${r.note}` : ""}
          </li>
        ))}
        {items.length === 0 && pending.length === 0 && <li class="empty">Not reviewed yet.</li>}
      </ul>
      <form class="row" onSubmit={submit} aria-label="Record review">
        {errors.form && <p class="error form-error" role="alert">Not recorded: {errors.form}</p>}
        <Field label="Outcome" name="outcome" errors={errors}>
          {(a) => (
            <select value={outcome} onChange={(e) => setOutcome(e.currentTarget.value)} {...a}>
              <option value="unchanged">unchanged</option><option value="changed">changed</option>
            </select>
          )}
        </Field>
        <Field label="Review note" name="note" errors={errors}>
          {(a) => <input type="text" maxLength={10000} value={note} onInput={(e) => setNote(e.currentTarget.value)} {...a} />}
        </Field>
        <button type="submit">Record review</button>
      </form>
    </section>
  );
}

/** actionOwner is who owns an action, as text: the email the action carries (a member cannot list users to find it). */
export function actionOwner(a: { ownerId: string; ownerEmail?: string }): string {
  return a.ownerEmail || ownerName({ userId: a.ownerId });
}

/**
 * OwnerSelect picks an action's owner among the tenant's users (the signed-in
 * user when they may not list them); `current` names the stored owner when
 * they are not among them.
 */
function OwnerSelect(props: { label: string; value: string; users: OwnerChoice[]; onChange: (v: string) => void; a: Record<string, unknown>; current?: Action }) {
  const known = props.users.some((u) => u.id === props.value);
  const name = props.current?.ownerId === props.value ? actionOwner(props.current) : ownerName({ userId: props.value });
  return (
    <select value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)} aria-label={props.label} {...props.a}>
      {!known && <option value={props.value}>{name}</option>}
      {props.users.map((u) => <option key={u.id} value={u.id}>{u.email}</option>)}
    </select>
  );
}

function Actions({ risk, changes, users }: { risk: Risk; changes: Change[]; users: OwnerChoice[] }) {
  const { items } = useRead<Action>(risk.id, () => firstOf(api().actions.listForRisk(risk.id)));
  const path = `/risks/${risk.id}/actions`;
  const me = identity()?.userId ?? "";
  const [title, setTitle] = useState("");
  const [ownerId, setOwnerId] = useState(me);
  const [dueDate, setDueDate] = useState("");
  const [errors, setErrors] = useState<FieldErrors>({});
  useRefusal(changes, "new-action", risk.id, (c) => {
    setTitle(c.form!.values.title ?? "");
    setOwnerId(c.form!.values.ownerId ?? me);
    setDueDate(c.form!.values.dueDate ?? "");
    setErrors(fieldErrors(c));
  });
  const submit = useSubmitOnce(async () => {
    setErrors({});
    const values = { title, ownerId, dueDate };
    await outbox().enqueue({
      method: "POST", path, body: { kind: "json", json: { title, ownerId, dueDate: dueDate || null } }, label: `Add action “${title}”`,
      form: { name: "new-action", target: risk.id, values },
    });
    setTitle("");
    setDueDate("");
  });
  const pending = pendingOf(changes, "POST", path);
  return (
    <section class="actions" aria-labelledby="actions-title">
      <h2 id="actions-title">Actions</h2>
      <table aria-label="Actions">
        <thead><tr><th scope="col">Action</th><th scope="col">Owner</th><th scope="col">Due</th><th scope="col">Status</th><th scope="col"><span class="sr-only">Edit</span></th></tr></thead>
        <tbody>
          {pending.map((c) => {
            const j = (c.body?.kind === "json" ? c.body.json : {}) as { title?: string; ownerId?: string; dueDate?: string | null };
            return (
              <tr key={c.key} class="pending">
                <td>{j.title}</td><td>{ownerName({ userId: j.ownerId })}</td><td>{j.dueDate ?? "none"}</td><td><span class="badge pending">pending</span></td><td />
              </tr>
            );
          })}
          {items.map((a) => <ActionRow key={a.id} action={withPending(a, `/actions/${a.id}`, changes)} stored={a} changes={changes} users={users} />)}
          {items.length === 0 && pending.length === 0 && <tr><td colSpan={5} class="empty">No actions.</td></tr>}
        </tbody>
      </table>
      <form class="row" onSubmit={submit} aria-label="Add action">
        {errors.form && <p class="error form-error" role="alert">Not added: {errors.form}</p>}
        <Field label="Action title" name="title" errors={errors}>
          {(a) => <input type="text" required maxLength={200} value={title} onInput={(e) => setTitle(e.currentTarget.value)} {...a} />}
        </Field>
        <Field label="Action owner" name="ownerId" errors={errors}>
          {(a) => <OwnerSelect label="Action owner" value={ownerId} users={users} onChange={setOwnerId} a={a} />}
        </Field>
        <Field label="Due date" name="dueDate" errors={errors}>
          {(a) => <input type="date" value={dueDate} onInput={(e) => setDueDate(e.currentTarget.value)} {...a} />}
        </Field>
        <button type="submit">Add action</button>
      </form>
    </section>
  );
}

/** ActionRow is one action, shown with the user's pending edits laid over it, and its edit form. */
function ActionRow({ action, stored, changes, users }: { action: Action; stored: Action; changes: Change[]; users: OwnerChoice[] }) {
  const [editing, setEditing] = useState(false);
  const form = () => ({ title: action.title, ownerId: action.ownerId, dueDate: action.dueDate ?? "", status: action.status as string });
  const [f, setF] = useState(form);
  const [basis, setBasis] = useState({ form: form(), ifMatch: etag(stored) });
  const [errors, setErrors] = useState<FieldErrors>({});
  const open = () => {
    setF(form());
    setBasis({ form: form(), ifMatch: etag(stored) });
    setErrors({});
    setEditing(true);
  };
  useRefusal(changes, "edit-action", action.id, (c) => {
    setF({ ...form(), ...c.form!.values });
    setErrors(fieldErrors(c));
    setEditing(true);
  });
  const submit = useSubmitOnce(async () => {
    const json: Record<string, unknown> = {};
    for (const k of ["title", "ownerId", "status"] as const) if (f[k] !== basis.form[k]) json[k] = f[k];
    if (f.dueDate !== basis.form.dueDate) json.dueDate = f.dueDate || null;
    setEditing(false);
    if (Object.keys(json).length === 0) return;
    await outbox().enqueue({
      method: "PATCH", path: `/actions/${action.id}`, body: { kind: "json", json }, label: `Edit action “${f.title}”`,
      form: { name: "edit-action", target: action.id, values: Object.fromEntries(Object.keys(json).map((k) => [k, f[k as keyof typeof f]])) },
      // The version the edit was typed over: a newer one is refused (412), never overwritten.
      ifMatch: basis.ifMatch,
    });
  });
  const overdue = action.status === "open" && !!action.dueDate && action.dueDate < today();
  const pending = changes.some((c) => c.state === "pending" && c.path === `/actions/${action.id}`);
  return (
    <>
      <tr data-action={action.id}>
        <td>{action.title}</td>
        <td>{actionOwner(action)}</td>
        <td>{action.dueDate ?? "none"}{overdue && <span class="badge overdue"> overdue</span>}</td>
        <td>{action.status}{pending && <span class="badge pending"> pending</span>}</td>
        <td><button type="button" class="secondary small" onClick={open} aria-label={`Edit action ${action.title}`}>Edit</button></td>
      </tr>
      {editing && (
        <tr>
          <td colSpan={5}>
            <form class="row" onSubmit={submit} aria-label={`Edit action ${action.title}`}>
              {errors.form && <p class="error form-error" role="alert">Not saved: {errors.form}</p>}
              <Field label="Title" name="title" errors={errors}>
                {(a) => <input type="text" required maxLength={200} value={f.title} onInput={(e) => setF({ ...f, title: e.currentTarget.value })} {...a} />}
              </Field>
              <Field label="Owner" name="ownerId" errors={errors}>
                {(a) => <OwnerSelect label="Owner" value={f.ownerId} users={users} onChange={(v) => setF({ ...f, ownerId: v })} a={a} current={action} />}
              </Field>
              <Field label="Due date" name="dueDate" errors={errors}>
                {(a) => <input type="date" value={f.dueDate} onInput={(e) => setF({ ...f, dueDate: e.currentTarget.value })} {...a} />}
              </Field>
              <Field label="Status" name="status" errors={errors}>
                {(a) => (
                  <select value={f.status} onChange={(e) => setF({ ...f, status: e.currentTarget.value })} {...a}>
                    <option value="open">open</option><option value="done">done</option><option value="cancelled">cancelled</option>
                  </select>
                )}
              </Field>
              <button type="submit">Save action</button>
              <button type="button" class="secondary" onClick={() => setEditing(false)}>Cancel</button>
            </form>
          </td>
        </tr>
      )}
    </>
  );
}

function Acceptances({ risk, changes, admin }: { risk: Risk; changes: Change[]; admin: boolean }) {
  const { items } = useRead<Acceptance>(risk.id, () => firstOf(api().acceptances.listForRisk(risk.id)));
  const names = useActorNames(admin && namesAKey(items));
  const path = `/risks/${risk.id}/acceptances`;
  const [justification, setJustification] = useState("");
  const [validUntil, setValidUntil] = useState(() => today(90));
  const [errors, setErrors] = useState<FieldErrors>({});
  useRefusal(changes, "request-acceptance", risk.id, (c) => {
    setJustification(c.form!.values.justification ?? "");
    setValidUntil(c.form!.values.validUntil ?? today(90));
    setErrors(fieldErrors(c));
  });
  const submit = useSubmitOnce(async () => {
    setErrors({});
    const values = { justification, validUntil };
    await outbox().enqueue({
      method: "POST", path, body: { kind: "json", json: values }, label: `Request acceptance of “${risk.title}”`,
      form: { name: "request-acceptance", target: risk.id, values },
    });
    setJustification("");
  });
  const pending = pendingOf(changes, "POST", path);
  return (
    <section class="acceptances" aria-labelledby="acceptances-title">
      <h2 id="acceptances-title">Acceptance</h2>
      <ul aria-label="Acceptances">
        {pending.map((c) => (
          <li key={c.key} class="pending">Requested: {String((c.body?.kind === "json" && (c.body.json as { justification?: string }).justification) || "")} <span class="badge pending">pending</span></li>
        ))}
        {items.map((a) => <AcceptanceItem key={a.id} acceptance={a} changes={changes} admin={admin} names={names} />)}
        {items.length === 0 && pending.length === 0 && <li class="empty">Never accepted.</li>}
      </ul>
      <form class="row" onSubmit={submit} aria-label="Request acceptance">
        {errors.form && <p class="error form-error" role="alert">Not requested: {errors.form}</p>}
        <Field label="Justification" name="justification" errors={errors}>
          {(a) => <input type="text" required maxLength={10000} value={justification} onInput={(e) => setJustification(e.currentTarget.value)} {...a} />}
        </Field>
        <Field label="Valid until" name="validUntil" errors={errors}>
          {(a) => <input type="date" required {...validUntilBounds()} value={validUntil} onInput={(e) => setValidUntil(e.currentTarget.value)} {...a} />}
        </Field>
        <button type="submit">Request acceptance</button>
      </form>
    </section>
  );
}

/** namesAKey is true when an API key requested or decided one of the acceptances: an admin's page then asks for the keys' names. */
export function namesAKey(acceptances: Acceptance[]): boolean {
  return acceptances.some((a) => a.requestedBy.type === "api_key" || a.decidedBy?.type === "api_key");
}

/**
 * AcceptanceItem is one acceptance; a pending one offers approve and reject to an admin who did not request it.
 * names maps API key IDs to their names (useActorNames), so a key that requested or decided is named as History names it.
 */
export function AcceptanceItem({ acceptance: a, changes, admin, withRisk, riskTitle, names }: { acceptance: Acceptance; changes: Change[]; admin: boolean; withRisk?: boolean; riskTitle?: string | undefined; names?: ReadonlyMap<string, string> }) {
  const [note, setNote] = useState("");
  const me = identity()?.userId;
  const deciding = changes.find((c) => c.state === "pending" && (c.path === `/acceptances/${a.id}/approve` || c.path === `/acceptances/${a.id}/reject`));
  const decide = (verb: "approve" | "reject") => () =>
    void outbox().enqueue({
      method: "POST", path: `/acceptances/${a.id}/${verb}`, body: { kind: "json", json: { note } },
      label: `${verb === "approve" ? "Approve" : "Reject"} acceptance “${a.justification.slice(0, 40)}”`,
    });
  const mayDecide = a.status === "pending" && admin && a.requestedBy.id !== me && !deciding;
  const title = riskTitle ?? a.riskSnapshot?.title;
  // What the Approve and Reject buttons name: a list of several needs more than "Approve".
  const what = withRisk ? `“${title ?? a.riskId}”` : `“${a.justification.slice(0, 60)}”`;
  const until = <time dateTime={a.validUntil}>{a.validUntil}</time>;
  return (
    <li data-acceptance={a.id}>
      {withRisk && <><a href={`/risks/${encodeURIComponent(a.riskId)}`}>{title ?? a.riskId}</a>: </>}
      <strong>{a.status}</strong>{" "}
      {a.status === "approved" ? <>until {until}</> : a.status === "expired" ? <>after {until}</> : <>(asked until {until})</>}
      {" "}— “{a.justification}”, requested by {actorName(a.requestedBy, names)}
      {a.decidedBy && <>; {a.status === "rejected" ? "rejected" : "decided"} by {actorName(a.decidedBy, names)}{a.decisionNote ? ` (${a.decisionNote})` : ""}</>}
      {deciding && <span class="badge pending"> {deciding.path.endsWith("/approve") ? "approval" : "rejection"} pending</span>}
      {a.status === "pending" && a.requestedBy.id === me && <span class="hint"> — another admin decides it.</span>}
      {mayDecide && (
        <div class="row" role="group" aria-label="Decide acceptance">
          <label>Decision note<input type="text" value={note} onInput={(e) => setNote(e.currentTarget.value)} /></label>
          <button type="button" onClick={decide("approve")} aria-label={`Approve the acceptance of ${what}`}>Approve</button>
          <button type="button" class="danger" onClick={decide("reject")} aria-label={`Reject the acceptance of ${what}`}>Reject</button>
        </div>
      )}
    </li>
  );
}
