/**
 * The risk list: one page at a time (its cursors in the URL, so a reload or a
 * shared link keeps the page), the new-risk form, and the changes to risks
 * that are still in the outbox shown beside what the server holds.
 */
import { useState } from "preact/hooks";
import { api, type Risk, type RiskCreateParams } from "../api";
import type { Change } from "../outbox/change";
import { navigate, useQuery, withQuery } from "../router";
import { outbox, useChanges } from "../state";
import { Field, fieldErrors, useList, useRefusal, type FieldErrors } from "./common";
import { ScoreSelect } from "./risk";

const PAGE_SIZE = 20;

/** RisksPage lists the tenant's risks with Previous/Next paging. */
export function RisksPage() {
  // ?cursor=a&cursor=b: the cursors of the pages before this one, oldest first.
  const cursors = useQuery().getAll("cursor");
  const cursor = cursors.at(-1);
  const list = useList<Risk>(cursor ?? "", () => api().risks.listPage({ limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) }));
  const { changes } = useChanges();
  const page = list.page;

  const pendingCreates = changes.filter((c) => c.state === "pending" && c.method === "POST" && c.path === "/risks");
  const pendingOn = (id: string) => changes.filter((c) => c.state === "pending" && c.path === `/risks/${id}`);

  return (
    <section>
      <h1>Risks</h1>
      <NewRisk changes={changes} />
      {list.error && <p class="error" role="alert">Could not load risks: {list.error}</p>}
      <table class="risks">
        <thead>
          <tr><th>Title</th><th>Score</th><th>Status</th><th>Updated</th></tr>
        </thead>
        <tbody>
          {pendingCreates.map((c) => (
            <tr key={c.key} class="pending">
              <td>{titleOf(c)} <span class="badge pending">pending</span></td>
              <td>{scoreOf(c)}</td><td>open</td><td>not sent yet</td>
            </tr>
          ))}
          {page?.data.map((r) => {
            const pending = pendingOn(r.id);
            return (
              <tr key={r.id} class={pending.some((c) => c.method === "DELETE") ? "deleting" : ""}>
                <td>
                  <a href={`/risks/${encodeURIComponent(r.id)}`}>{r.title}</a>
                  {pending.length > 0 && <span class="badge pending">{pending.some((c) => c.method === "DELETE") ? "deleting" : "change pending"}</span>}
                </td>
                <td>{r.riskScore ?? ""}</td>
                <td>{r.status}</td>
                <td>{new Date(r.updatedAt).toLocaleString()}</td>
              </tr>
            );
          })}
          {page && page.data.length === 0 && pendingCreates.length === 0 && (
            <tr><td colSpan={4} class="empty">No risks yet.</td></tr>
          )}
        </tbody>
      </table>
      <div class="row pager">
        <button type="button" class="secondary" disabled={cursors.length < 1} onClick={() => navigate(withQuery("/", { cursor: cursors.slice(0, -1) }))}>
          Previous
        </button>
        <span>Page {cursors.length + 1}</span>
        <button type="button" class="secondary" disabled={!page?.hasMore} onClick={() => page?.nextCursor && navigate(withQuery("/", { cursor: [...cursors, page.nextCursor] }))}>
          Next
        </button>
      </div>
    </section>
  );
}

function titleOf(c: Change): string {
  return c.body?.kind === "json" ? String((c.body.json as { title?: unknown }).title ?? "") : "";
}

function scoreOf(c: Change): string {
  if (c.body?.kind !== "json") return "";
  const b = c.body.json as { likelihood?: number; impact?: number };
  return b.likelihood && b.impact ? String(b.likelihood * b.impact) : "";
}

const EMPTY = { title: "", likelihood: "3", impact: "3", category: "" };

/**
 * NewRisk queues a risk creation; it is sent (and shown as pending) whether
 * online or not. A refused create comes back into the form, with the error
 * beside the field the server named.
 */
function NewRisk({ changes }: { changes: Change[] }) {
  const [f, setF] = useState(EMPTY);
  const [errors, setErrors] = useState<FieldErrors>({});
  useRefusal(changes, "new-risk", undefined, (c) => {
    setF({ ...EMPTY, ...c.form!.values });
    setErrors(fieldErrors(c));
  });
  const submit = async (e: Event) => {
    e.preventDefault();
    const body: RiskCreateParams = { title: f.title, likelihood: Number(f.likelihood), impact: Number(f.impact), ...(f.category ? { category: f.category } : {}) };
    await outbox().enqueue({
      method: "POST", path: "/risks", body: { kind: "json", json: body }, label: `Create risk “${f.title}”`,
      form: { name: "new-risk", values: f },
    });
    setF(EMPTY);
    setErrors({});
  };
  const set = (k: keyof typeof EMPTY) => (v: string) => setF({ ...f, [k]: v });
  return (
    <form class="new-risk" onSubmit={submit} aria-label="New risk">
      {errors.form && <p class="error form-error" role="alert">Not created: {errors.form}</p>}
      <Field label="Title" name="title" errors={errors}>
        {(a) => <input required maxLength={200} value={f.title} onInput={(e) => set("title")(e.currentTarget.value)} {...a} />}
      </Field>
      <ScoreSelect label="Likelihood" value={f.likelihood} onChange={set("likelihood")} error={errors.likelihood} />
      <ScoreSelect label="Impact" value={f.impact} onChange={set("impact")} error={errors.impact} />
      <Field label="Category" name="category" errors={errors}>
        {(a) => <input value={f.category} onInput={(e) => set("category")(e.currentTarget.value)} {...a} />}
      </Field>
      <button type="submit">Create risk</button>
    </form>
  );
}
