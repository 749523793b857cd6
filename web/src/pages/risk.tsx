/**
 * One risk: what it is (score, residual score, version, times), edit it,
 * delete it, and its attachments (upload with a progress bar, download).
 * Every change goes through the outbox; a refused edit comes back into the
 * form with the error beside its field, and a risk deleted elsewhere leaves
 * no form behind.
 */
import "./risk.css";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { api, etag, explain, RiskApiError, type Attachment, type Risk, type RiskUpdateParams } from "../api";
import { AskFirst } from "../ask-first";
import { UploadProgress } from "../changes-panel";
import type { Change } from "../outbox/change";
import { pick, queuedTitle, seenAfterOwn, withPending } from "../outbox/merge";
import { navigate } from "../router";
import { outbox, useChanges, useOnline } from "../state";
import { useSettled } from "../settled";
import { useTitle } from "../title";
import { canRead } from "../offline";
import { Field, fieldErrors, isOffline, KeptAside, Offline, ownerName, OwnerOptions, ownerWrite, useOwnerChoices, type OwnerChoice, sameValues, ScoreSelect, useRefusal, useSubmitOnce, type Aside, type FieldErrors } from "./common";
import { Conflicts, EDIT_FIELDS } from "./conflict";
import { RiskHistory } from "./history";
import { lazy } from "../lazy";

// The chart's own chunk (charts/line.tsx), beside the page: it shows when it comes.
const ScoreHistoryChart = lazy(() => import("./score-history").then((m) => m.ScoreHistoryChart), { quiet: true });
import { AttachmentDelete } from "../register/attachment";
import { RegisterFacts, RegisterFields, registerChanges, registerForm } from "../register/fields";
import { FollowUp } from "./followup";

/** RiskPage shows and edits the risk `id`. */
export function RiskPage({ id, admin = false }: { id: string; admin?: boolean }) {
  const [risk, setRisk] = useState<Risk | undefined>();
  const [error, setError] = useState("");
  // Offline, or the server unreachable: said at once, not after the SDK's retries behind "Loading…".
  const [offline, setOffline] = useState(false);
  const online = useOnline();
  const { changes } = useChanges();
  const deletion = useDeletion(changes);
  const deleted = deletion.sent; // the same function for the page's life: load keeps its identity
  // A risk once answered 404 is gone for good (IDs are never reused): every later
  // re-read — each change anywhere in the tenant asks for one — would be 404 again.
  const gone = useRef<string | undefined>(undefined);
  const load = useCallback(() => {
    if (gone.current === id) return;
    if (!canRead()) return setOffline(true);
    api().risks.get(id).then(
      (r) => {
        setRisk(r);
        setError("");
        setOffline(false);
      },
      (err: unknown) => {
        if (isOffline(err)) return setOffline(true);
        setOffline(false);
        // Deleted here or elsewhere: nothing of it stays on the page.
        if (err instanceof RiskApiError && err.status === 404) {
          gone.current = id;
          // This page's own delete went through: its event (live.ts) may bring
          // this re-read before the outbox hears the answer.
          if (deleted(`/risks/${id}`)) return navigate("/");
          setRisk(undefined);
        }
        setError(err instanceof RiskApiError && err.status === 404 ? "This risk does not exist: it was deleted, or never was." : explain(err));
      },
    );
  }, [id, deleted]);
  useEffect(load, [load, online]);
  useSettled(load);
  // A title edit still queued (offline, or waiting for a retry) is what the
  // user last typed: the heading shows it, marked as not sent, like the list.
  const queued = risk ? queuedTitle(risk, changes) : undefined;
  useTitle(queued ?? risk?.title);
  if (offline && !risk) {
    return (
      <section>
        {/* Offline with the service worker: its copies of this user's reads had none of this risk (offline.ts). */}
        {navigator.onLine || !navigator.serviceWorker?.controller ? <Offline what="this risk" /> : (
          <p class="offline-note" role="status">
            This risk is not available offline: this browser did not read it, or a list showing it, before going offline.
            Changes you make are kept and sent when you are back online.
          </p>
        )}
        <p><a href="/">Back to risks</a></p>
      </section>
    );
  }
  if (error && !risk) return <section><p class="error" role="alert">{error}</p><p><a href="/">Back to risks</a></p></section>;
  if (!risk) return <p class="loading">Loading…</p>;
  return (
    <section>
      <p><a href="/">← Risks</a></p>
      <h1 class="title">{queued ?? risk.title}{queued !== undefined && <> <span class="badge pending">not sent yet</span></>}</h1>
      {offline && <Offline what="the risk's latest version" />}
      {error && <p class="error" role="alert">{error}</p>}
      <Facts risk={risk} />
      <Conflicts risk={risk} changes={changes} onResolved={load} />
      <EditRisk risk={risk} changes={changes} admin={admin} />
      <FollowUp risk={risk} changes={changes} admin={admin} />
      <Attachments risk={risk} changes={changes} />
      <ScoreHistoryChart riskId={risk.id} />
      <RiskHistory riskId={risk.id} admin={admin} />
      <DeleteRisk risk={risk} changes={changes} deletion={deletion} />
    </section>
  );
}

/** Facts: the risk's score, the register's fields, its version and its times. */
function Facts({ risk }: { risk: Risk }) {
  return (
    <dl class="facts">
      <div><dt>Score</dt><dd>{risk.riskScore ?? "not assessed"}</dd></div>
      <RegisterFacts risk={risk} />
      <div><dt>Version</dt><dd>{risk.version}</dd></div>
      <div><dt>Status</dt><dd>{risk.status}</dd></div>
      <div><dt>Created</dt><dd><time dateTime={risk.createdAt}>{new Date(risk.createdAt).toLocaleString()}</time></dd></div>
      <div><dt>Updated</dt><dd><time dateTime={risk.updatedAt}>{new Date(risk.updatedAt).toLocaleString()}</time></dd></div>
    </dl>
  );
}

type Form = ReturnType<typeof formOf>;

/** What a draft is typed over: the form as it was given, the risk it showed and that risk's ETag. */
type Basis = { form: Form; shown: Risk; ifMatch: string };

/**
 * EditRisk is the risk's edit form. It shows the stored risk with the user's
 * pending edits laid over it, and sends only the fields the user changed, with
 * If-Match of the version their draft was typed over and the values they saw
 * of those fields, so that a newer version is merged or shown as a conflict,
 * never overwritten (outbox/merge.ts). A re-read while a draft is open moves
 * the draft onto the new version when nobody else changed what the user typed.
 */
function EditRisk({ risk, changes, admin }: { risk: Risk; changes: Change[]; admin: boolean }) {
  const path = `/risks/${risk.id}`;
  const shown = withPending(risk, path, changes);
  const [f, setForm] = useState(() => formOf(shown));
  // The form as typed, ahead of the next render. Effects run a frame after the
  // render that scheduled them, so one that read its render's `f` would put back
  // an older form over a keystroke made in between; they read this instead.
  const latest = useRef(f);
  const setF = (v: Form) => {
    latest.current = v;
    setForm(v);
  };
  const [errors, setErrors] = useState<FieldErrors>({});
  const users = useOwnerChoices(admin);
  // While a refused edit is back in the form, a re-read of the risk does not overwrite it.
  const held = useRef(false);
  // The form follows a re-read of the risk, and a pending edit appearing (made
  // here, in another tab, or read back after a reload). An edit leaving
  // "pending" is followed by a re-read, which shows its outcome.
  const pending = changes.filter((c) => c.state === "pending" && c.path === path).map((c) => c.key);
  const known = useRef<{ keys: string[]; appeared: number }>({ keys: [], appeared: 0 });
  if (pending.some((k) => !known.current.keys.includes(k))) known.current.appeared++;
  known.current.keys = pending;
  // The version the form's draft is typed over: the fields where f differs from
  // it are the user's typing, and Save sends those only, with its ETag and the
  // values the user saw of them, so a newer version is merged or shown as a
  // conflict (outbox/merge.ts), never overwritten with what the form held.
  const basis = useRef<Basis>({ form: f, shown, ifMatch: etag(risk) });
  const asShown = (): Basis => ({ form: formOf(shown), shown, ifMatch: etag(risk) });
  useEffect(() => {
    const now = asShown();
    const next = now.form;
    const was = basis.current.form;
    const f = latest.current;
    const typed = typedFields(was, f);
    if (typed.length === 0 || (!held.current && sameValues(next, f))) {
      setF(next);
      basis.current = now;
    } else if (typed.every((k) => next[k] === was[k] || next[k] === f[k])) {
      // Nobody else changed what the user typed (or changed it to the same): the
      // draft moves onto the new version, the fields they did not touch showing
      // what is stored now.
      setF({ ...next, ...pickForm(f, typed) });
      basis.current = now;
    }
    // Else someone changed a field the user is typing in too: the draft stays on
    // the version it was typed over, so Save meets 412 and shows the conflict.
  }, [risk, known.current.appeared]);
  // Typed values come back into the form over the risk as stored now, and keep
  // the version they were typed over (seen) unless nobody else has changed those
  // fields since (the re-read's rule above): else Save meets 412 and shows the
  // conflict, never sends them over another writer's newer values.
  const putBack = (values: Partial<Form>, seen: Basis) => {
    const now = asShown();
    const keys = Object.keys(values) as (keyof Form)[];
    basis.current = keys.every((k) => now.form[k] === seen.form[k] || now.form[k] === values[k])
      ? now : { ...seen, form: { ...now.form, ...pickForm(seen.form, keys) } };
    setF({ ...now.form, ...values });
    held.current = true;
  };
  // A refused edit's typing was over the version it was sent with, and the values its base holds.
  const seenBy = (c: Change): Basis => {
    const seen = { ...shown, ...(c.base ?? {}) } as Risk;
    return { form: formOf(seen), shown: seen, ifMatch: c.ifMatch ?? etag(risk) };
  };
  // A refused edit comes back into the form only if the user has not started
  // another since; else it waits beside the form, and neither is lost.
  const [aside, setAside] = useState<(Aside & { seen: Basis }) | null>(null);
  const untouched = () => sameValues(formOf(shown), latest.current);
  useRefusal(changes, "edit-risk", risk.id, (c) => {
    const typed = c.form!.values as Partial<Form>;
    // Untouched: as the risk shows, or still what was sent (the form keeps an edit after Save).
    if (untouched() || sameValues({ ...formOf(shown), ...typed }, latest.current)) {
      putBack(typed, seenBy(c));
      setErrors(fieldErrors(c));
    } else {
      setAside({ label: "Refused change", note: "the server did not save this edit; your newer edit stays in the form.", values: typed, errors: fieldErrors(c), seen: seenBy(c) });
    }
  });
  // Put back from beside the form; the draft it replaces goes beside the form in turn, with its own version.
  const restore = () => {
    if (!aside) return;
    const was = basis.current;
    const draft = pickForm(latest.current, typedFields(was.form, latest.current));
    setAside(Object.keys(draft).length === 0 ? null : { label: "Your draft", note: "kept while the refused edit is back in the form.", values: draft, errors: {}, seen: was });
    putBack(aside.values as Partial<Form>, aside.seen);
    setErrors(aside.errors);
  };
  // Beside the form, only what differs from the risk as shown.
  const asideFields = aside ? EDIT_FIELDS.filter(([k]) => k in aside.values && aside.values[k] !== (formOf(shown) as Record<string, string>)[k]) : [];
  const set = (k: keyof Form) => (v: string) => setF({ ...latest.current, [k]: v });
  const submit = useSubmitOnce(async () => {
    const { form: was, shown: seen, ifMatch } = basis.current;
    const f = latest.current;
    const typed = typedFields(was, f);
    const json = changedFields(was, f, users);
    setErrors({});
    held.current = false;
    if (Object.keys(json).length === 0) return;
    await outbox().enqueue({
      method: "PATCH", path, body: { kind: "json", json }, label: `Edit risk “${f.title}”`,
      // Only what was typed comes back into the form if the edit is refused: the
      // other fields as the form held them may be older than what is stored then.
      form: { name: "edit-risk", target: risk.id, values: pickForm(f, typed) },
      ifMatch, base: pick(seen, Object.keys(json)),
    });
    // Queued: what the form holds is no longer a draft. The next re-read (the
    // edit appearing as pending) shows the risk as stored with it laid over,
    // and a later draft is typed over that, never over this one's version; a
    // double click's second Save finds nothing typed and queues nothing.
    basis.current = { ...basis.current, form: f };
  });
  const text = (k: "title" | "category" | "owner", label: string, max: number) => (
    <Field label={label} name={k} errors={errors}>
      {(a) => <input type="text" required={k === "title"} maxLength={max} value={f[k]} onInput={(e) => set(k)(e.currentTarget.value)}
        list={k === "owner" ? "owner-users" : undefined} {...a} />}
    </Field>
  );
  return (
    <>
      {aside && <KeptAside aside={aside} fields={asideFields} onRestore={restore} onDismiss={() => setAside(null)} />}
      <form class="edit-risk" onSubmit={submit} aria-label="Edit risk">
        {errors.form && <p class="error form-error" role="alert">Not saved: {errors.form}</p>}
        {text("title", "Title", 200)}
        <Field label="Description" name="description" errors={errors}>
          {(a) => <textarea maxLength={10000} value={f.description} onInput={(e) => set("description")(e.currentTarget.value)} {...a} />}
        </Field>
        {text("category", "Category", 100)}
        {text("owner", "Owner", 200)}
        <OwnerOptions id="owner-users" users={users} />
        <ScoreSelect label="Likelihood" value={f.likelihood} onChange={set("likelihood")} error={errors.likelihood} unset />
        <ScoreSelect label="Impact" value={f.impact} onChange={set("impact")} error={errors.impact} unset />
        <Field label="Status" name="status" errors={errors}>
          {(a) => (
            <select value={f.status} onChange={(e) => set("status")(e.currentTarget.value)} {...a}>
              <option value="open">open</option><option value="mitigated">mitigated</option><option value="closed">closed</option>
            </select>
          )}
        </Field>
        <RegisterFields f={f} set={set} errors={errors} />
        <button type="submit">Save changes</button>
      </form>
    </>
  );
}

/** typedFields are the form's fields the user changed from `was`, the form as it was given. */
function typedFields(was: Form, now: Form): (keyof Form)[] {
  return (Object.keys(now) as (keyof Form)[]).filter((k) => now[k] !== was[k]);
}

/** pickForm is the form's values of the fields named. */
function pickForm(f: Form, fields: (keyof Form)[]): Partial<Form> {
  return Object.fromEntries(fields.map((k) => [k, f[k]]));
}

function formOf(r: Risk) {
  return {
    title: r.title, description: r.description, category: r.category, owner: ownerName(r.owner), status: r.status as string,
    likelihood: r.likelihood == null ? "" : String(r.likelihood), impact: r.impact == null ? "" : String(r.impact), ...registerForm(r),
  };
}

/**
 * changedFields is the PATCH body: only what the user changed. The score is not
 * sent: the server derives it from the stored factors (docs/register.md), so an
 * edit of Impact made over someone else's new Likelihood keeps both, with the
 * score of the two, instead of setting back a factor this user never touched.
 * A factor set to "not assessed" is sent as null.
 */
function changedFields(was: Form, now: Form, users: OwnerChoice[]): RiskUpdateParams {
  const out: RiskUpdateParams = {};
  for (const k of ["title", "description", "category"] as const) if (now[k] !== was[k]) out[k] = now[k];
  // The Owner field's text: a user's email picks that user, anything else is a name owner.
  if (now.owner !== was.owner) out.owner = ownerWrite(now.owner, users);
  if (now.status !== was.status) out.status = now.status as Risk["status"];
  for (const k of ["likelihood", "impact"] as const) if (now[k] !== was[k]) out[k] = now[k] === "" ? null : Number(now[k]);
  return { ...out, ...registerChanges(was, now) };
}

/** Deletion is the delete a risk's page queued (useDeletion), followed by the page itself. */
interface Deletion {
  /** change is the queued delete as the outbox holds it now; undefined before one is queued. */
  change: Change | undefined;
  /** queued records the delete the outbox returned, and leaves at once if it is already done or offline. */
  queued: (c: Change) => void;
  /** sent reports whether this page queued a delete of the risk at path, not refused; the same function for the page's life. */
  sent: (path: string) => boolean;
}

/**
 * useDeletion follows the delete a risk's page queues: back to the list once
 * it is done, once it waits offline, or once a failed attempt waits for its
 * retry (docs/dashboard.md). It belongs to RiskPage, not to DeleteRisk: the
 * page's re-read after the tenant's newest event (live.ts) can find the risk
 * gone before the outbox hears the DELETE's answer, and that takes DeleteRisk
 * off the page, with any listener it held.
 */
function useDeletion(changes: Change[]): Deletion {
  const [key, setKey] = useState<string>();
  const sent = useRef<Change | undefined>(undefined);
  // Heard at once, not through a re-render, and subscribed before the delete
  // is queued, so a quick answer is not missed.
  useEffect(() => outbox().subscribe((e) => {
    if (e.type !== "changed" || !sent.current || e.key !== sent.current.key) return;
    if (e.state === "done" || (e.state === "pending" && isOffline())) navigate("/");
  }), []);
  const change = key ? changes.find((c) => c.key === key) : undefined;
  useEffect(() => {
    // A refused delete is no longer the page's: the risk gone since is someone else's doing.
    if (change?.state === "refused") sent.current = undefined;
    // An attempt that failed and waits for its retry: queued like an offline one.
    if (change?.state === "done" || (change?.state === "pending" && change.attempts > 0)) navigate("/");
  }, [change?.state, change?.attempts]);
  const queued = useCallback((c: Change) => {
    sent.current = c;
    setKey(c.key);
    if (c.state === "done" || isOffline()) navigate("/");
  }, []);
  const isSent = useCallback((path: string) => sent.current?.path === path, []);
  return { change, queued, sent: isSent };
}

/**
 * DeleteRisk asks first, then queues the delete with If-Match of the version
 * shown when the user asked (so it works with REQUIRE_IF_MATCH=true and never
 * deletes a version the user did not see: the page may re-read the risk while
 * the question is open). Online, the page stays until the server answers
 * (useDeletion): done goes back to the list; a refusal stays here and says
 * why, the risk still shown. Offline, or while a retry waits, the delete stays
 * queued and the list shows the risk as deleting (docs/dashboard.md).
 */
function DeleteRisk({ risk, changes, deletion }: { risk: Risk; changes: Change[]; deletion: Deletion }) {
  const mine = deletion.change;
  const asked = useRef(risk);
  const del = async () => {
    const seen = asked.current.id === risk.id ? asked.current : risk;
    const path = `/risks/${seen.id}`;
    // The user's own edits stored since are theirs to have seen (deleteAfterOwn's rule).
    const ifMatch = seenAfterOwn(etag(seen), path, changes);
    deletion.queued(await outbox().enqueue({ method: "DELETE", path, body: null, label: `Delete risk “${seen.title}”`, ifMatch }));
  };
  return (
    <div class="danger row">
      <AskFirst ask="Delete risk" label="Delete this risk?" text="Delete this risk and its attachments?" confirm="Confirm delete"
        onAsk={() => (asked.current = risk)} onConfirm={() => void del()} />
      {mine?.state === "pending" && <span role="status">Deleting…</span>}
      {mine?.state === "refused" && (
        <p class="error" role="alert">Not deleted: {mine.problem?.code === "PRECONDITION_FAILED" ? STALE_DELETE : mine.lastReason ?? `the server answered ${mine.lastStatus}`}</p>
      )}
    </div>
  );
}

/** STALE_DELETE is what the page says of a delete refused 412: the API's detail names If-Match, which the page's user never sees. */
const STALE_DELETE = "someone changed this risk after you asked to delete it. It now shows as it is: delete it again if you still want to.";

function Attachments({ risk, changes }: { risk: Risk; changes: Change[] }) {
  const [list, setList] = useState<Attachment[]>([]);
  const [file, setFile] = useState<File | null>(null);
  const [description, setDescription] = useState("");
  const { progress } = useChanges();
  const path = `/risks/${risk.id}/attachments`;
  const load = useCallback(() => {
    api().attachments.listPage(risk.id, { limit: 100 }).then((r) => setList(r.data), () => undefined);
  }, [risk.id]);
  useEffect(load, [load]);
  useSettled(load);
  const uploads = changes.filter((c) => c.state === "pending" && c.path === path);
  const submit = useSubmitOnce(async (e: Event) => {
    const form = e.currentTarget as HTMLFormElement;
    if (!file) return;
    const fields: Record<string, string> = description ? { description } : {};
    // The File is a Blob: IndexedDB keeps it until the upload settles.
    await outbox().enqueue({ method: "POST", path, body: { kind: "file", file, filename: file.name, fields }, label: `Upload “${file.name}”` });
    form.reset();
    setFile(null);
    setDescription("");
  });
  return (
    <section class="attachments">
      <h2>Attachments</h2>
      <ul>
        {list.map((a) => (
          <li key={a.id}>
            <a href={`/v1/attachments/${encodeURIComponent(a.id)}/content`} download={a.filename}>{a.filename}</a>{" "}
            <span class="meta">{formatSize(a.size)}{a.description ? ` — ${a.description}` : ""}</span>{" "}
            <AttachmentDelete attachment={a} changes={changes} />
          </li>
        ))}
        {uploads.map((c) => (
          <li key={c.key} class="pending">
            {c.body?.kind === "file" ? c.body.filename : ""} <span class="badge pending">uploading</span>
            {progress[c.key] && <UploadProgress p={progress[c.key]!} />}
          </li>
        ))}
        {list.length === 0 && uploads.length === 0 && <li class="empty">No attachments.</li>}
      </ul>
      <form onSubmit={submit} class="row" aria-label="Upload attachment">
        <label>File<input type="file" required onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} /></label>
        <label>Attachment description<input value={description} onInput={(e) => setDescription(e.currentTarget.value)} /></label>
        <button type="submit">Upload</button>
      </form>
    </section>
  );
}

function formatSize(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
