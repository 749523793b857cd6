/**
 * The risk list: one page at a time, the new-risk form, and the changes to
 * risks that are still in the outbox shown beside what the server holds.
 */
import { useCallback, useEffect, useState } from "preact/hooks";
import { get, query, type Page, type Risk, type RiskCreateParams } from "../api";
import type { Change } from "../outbox/change";
import { outbox, useChanges, useSettled } from "../state";
import { ScoreSelect } from "./risk";

const PAGE_SIZE = 20;

/** RisksPage lists the tenant's risks with Previous/Next paging. */
export function RisksPage() {
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const [page, setPage] = useState<Page<Risk> | undefined>();
  const [error, setError] = useState("");
  const { changes } = useChanges();
  const cursor = cursors[cursors.length - 1] ?? null;

  const load = useCallback(() => {
    get<Page<Risk>>("/v1/risks" + query({ limit: PAGE_SIZE, cursor })).then(
      (p) => {
        setPage(p);
        setError("");
      },
      (err: unknown) => setError(err instanceof Error ? err.message : String(err)),
    );
  }, [cursor]);
  useEffect(load, [load]);
  useSettled(load);

  const pendingCreates = changes.filter((c) => c.state === "pending" && c.method === "POST" && c.path === "/v1/risks");
  const pendingOn = (id: string) => changes.filter((c) => c.state === "pending" && c.path === `/v1/risks/${id}`);

  return (
    <section>
      <h1>Risks</h1>
      <NewRisk />
      {error && <p class="error" role="alert">Could not load risks: {error}</p>}
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
        <button type="button" class="secondary" disabled={cursors.length < 2} onClick={() => setCursors(cursors.slice(0, -1))}>
          Previous
        </button>
        <span>Page {cursors.length}</span>
        <button type="button" class="secondary" disabled={!page?.hasMore} onClick={() => page?.nextCursor && setCursors([...cursors, page.nextCursor])}>
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

/** NewRisk queues a risk creation; it is sent (and shown as pending) whether online or not. */
function NewRisk() {
  const [title, setTitle] = useState("");
  const [likelihood, setLikelihood] = useState("3");
  const [impact, setImpact] = useState("3");
  const [category, setCategory] = useState("");
  const submit = async (e: Event) => {
    e.preventDefault();
    const body: RiskCreateParams = { title, likelihood: Number(likelihood), impact: Number(impact), ...(category ? { category } : {}) };
    await outbox().enqueue({ method: "POST", path: "/v1/risks", body: { kind: "json", json: body }, label: `Create risk “${title}”` });
    setTitle("");
    setCategory("");
  };
  return (
    <form class="new-risk" onSubmit={submit} aria-label="New risk">
      <label>
        Title
        <input required maxLength={200} value={title} onInput={(e) => setTitle(e.currentTarget.value)} />
      </label>
      <ScoreSelect label="Likelihood" value={likelihood} onChange={setLikelihood} />
      <ScoreSelect label="Impact" value={impact} onChange={setImpact} />
      <label>
        Category
        <input value={category} onInput={(e) => setCategory(e.currentTarget.value)} />
      </label>
      <button type="submit">Create risk</button>
    </form>
  );
}
