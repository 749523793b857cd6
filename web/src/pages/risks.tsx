/**
 * The risk list: filtered, searched and sorted, one page at a time, or as a
 * heat map (the view, its cursors included, in the URL: register/view.ts, so
 * a reload or a shared link keeps it); the new-risk form, export and import;
 * and the changes to risks that are still in the outbox shown beside what the
 * server holds.
 */
import { useRef, useState } from "preact/hooks";
import type { RiskCreateParams } from "../api";
import type { Change } from "../outbox/change";
import { lazy } from "../lazy";
import { queuedTitle } from "../outbox/merge";
import { FilterBar } from "../register/filters";
import { ReviewCell, RiskCount, SortHeader, useRows } from "../register/table";
import { ignoredParams, readView, viewURL, type ListView } from "../register/view";
import { navigate, useQuery } from "../router";
import { outbox, useChanges } from "../state";
import { Field, fieldErrors, KeptAside, Offline, ownerName, sameValues, ScoreSelect, useRefusal, useSubmitOnce, type Aside, type FieldErrors } from "./common";

// The shell's seldom-shown parts travel with the list (app.tsx says why).
export { ConfirmSignOut, NotFound } from "../shell-rare";

// The heat map, export and import are chunks of their own: the list comes first.
const HeatmapView = lazy(() => import("../register/heatmap").then((m) => m.HeatmapView));
const ExportLinks = lazy(() => import("../register/transfer").then((m) => m.ExportLinks));
const ImportForm = lazy(() => import("../register/transfer").then((m) => m.ImportForm));

/** RisksPage lists the tenant's risks the URL's view selects, with Previous/Next paging, or their heat map. */
export function RisksPage() {
  const query = useQuery();
  const view = readView(query);
  const ignored = ignoredParams(query);
  return (
    <section>
      <h1>Risks</h1>
      <ViewTabs view={view} />
      <FilterBar view={view} />
      {ignored.length > 0 && (
        <p class="error" role="status">
          Not understood in this page's address, and left out: {ignored.join(", ")}. The list shows what the filters above say.
        </p>
      )}
      {view.show === "heatmap" ? <HeatmapView view={view} /> : <RiskList view={view} />}
      <ExportLinks view={view} />
      <ImportForm />
    </section>
  );
}

function ViewTabs({ view }: { view: ListView }) {
  return (
    <nav class="row tabs" aria-label="Risk views">
      <a href={viewURL({ ...view, show: "list", cursors: [] })} aria-current={view.show === "list" ? "page" : undefined} class="tab">List</a>
      <a href={viewURL({ ...view, show: "heatmap", cell: undefined, cursors: [] })} aria-current={view.show === "heatmap" ? "page" : undefined} class="tab">Heat map</a>
    </nav>
  );
}

function RiskList({ view }: { view: ListView }) {
  const list = useRows(view);
  const { changes } = useChanges();
  const page = list.page;
  const cursors = view.cursors;

  const pendingCreates = changes.filter((c) => c.state === "pending" && c.method === "POST" && c.path === "/risks");
  const pendingOn = (id: string) => changes.filter((c) => c.state === "pending" && c.path === `/risks/${id}`);
  // A delete queued offline and refused later: the risk is still here, and says so until the refusal is cleared.
  const notDeleted = (id: string) => changes.some((c) => c.state === "refused" && c.method === "DELETE" && c.path === `/risks/${id}`);

  return (
    <>
      <NewRisk changes={changes} />
      {view.cell && (
        <p class="row cell-note">
          Risks with {view.cell.basis} likelihood {view.cell.likelihood} and impact {view.cell.impact}.
          <a href={viewURL({ ...view, cell: undefined, cursors: [] })}>Show all</a>
        </p>
      )}
      {list.error && <p class="error" role="alert">Could not load risks: {list.error}</p>}
      {list.offline && <Offline what="risks" />}
      <RiskCount view={view} />
      {/* Offline with nothing read, an empty table would look like "no risks": only the note, and the user's own pending risks. */}
      {(page || pendingCreates.length > 0 || !list.offline) && <div class="table-wrap">
        <table class="risks">
          <thead>
            <tr>
              <SortHeader view={view} field="title">Title</SortHeader>
              <SortHeader view={view} field="riskScore">Score</SortHeader>
              <SortHeader view={view} field="residualScore">Residual</SortHeader>
              <th scope="col">Status</th><th scope="col">Treatment</th><th scope="col">Owner</th><th scope="col">Category</th>
              <SortHeader view={view} field="reviewDate">Review</SortHeader>
              <SortHeader view={view} field="updatedAt">Updated</SortHeader>
            </tr>
          </thead>
          <tbody>
            {pendingCreates.map((c) => (
              <tr key={c.key} class="pending">
                <td class="title">{titleOf(c)} <span class="badge pending">pending</span></td>
                <td>{scoreOf(c)}</td><td></td><td>open</td><td></td><td></td><td>{categoryOf(c)}</td><td></td><td>not sent yet</td>
              </tr>
            ))}
            {page?.data.map((r) => {
              const pending = pendingOn(r.id);
              return (
                <tr key={r.id} class={pending.some((c) => c.method === "DELETE") ? "deleting" : ""} data-risk={r.id}>
                  <td class="title">
                    {/* A queued title edit shows as typed; the badge says it is not sent yet. */}
                    <a href={`/risks/${encodeURIComponent(r.id)}`}>{queuedTitle(r, pending) ?? r.title}</a>
                    {pending.length > 0 && <span class="badge pending">{pending.some((c) => c.method === "DELETE") ? "deleting" : "change pending"}</span>}
                    {pending.length === 0 && notDeleted(r.id) && <span class="badge refused" title="The server refused the delete; the changes panel says why">not deleted</span>}
                  </td>
                  <td>{r.riskScore ?? ""}</td>
                  <td>{r.residualScore ?? ""}</td>
                  <td>{r.status}</td>
                  <td>{r.treatment ?? ""}</td>
                  <td>{ownerName(r.owner)}</td>
                  <td>{r.category}</td>
                  <ReviewCell risk={r} />
                  <td>{new Date(r.updatedAt).toLocaleString()}</td>
                </tr>
              );
            })}
            {page && page.data.length === 0 && pendingCreates.length === 0 && (
              <tr><td colSpan={9} class="empty">{viewURL({ ...view, cursors: [] }) === "/" ? "No risks yet." : "No risks match."}</td></tr>
            )}
          </tbody>
        </table>
      </div>}
      {(page || !list.offline) && (
        <div class="row pager">
          <button type="button" class="secondary" disabled={cursors.length < 1} onClick={() => navigate(viewURL({ ...view, cursors: cursors.slice(0, -1) }))}>
            Previous
          </button>
          <span>Page {cursors.length + 1}</span>
          <button type="button" class="secondary" disabled={!page?.hasMore} onClick={() => page?.nextCursor && navigate(viewURL({ ...view, cursors: [...cursors, page.nextCursor] }))}>
            Next
          </button>
        </div>
      )}
    </>
  );
}

function titleOf(c: Change): string {
  return c.body?.kind === "json" ? String((c.body.json as { title?: unknown }).title ?? "") : "";
}

function categoryOf(c: Change): string {
  return c.body?.kind === "json" ? String((c.body.json as { category?: unknown }).category ?? "") : "";
}

function scoreOf(c: Change): string {
  if (c.body?.kind !== "json") return "";
  const b = c.body.json as { likelihood?: number; impact?: number };
  return b.likelihood && b.impact ? String(b.likelihood * b.impact) : "";
}

/** An untouched form: its factors "not assessed" (a risk nobody scored is not a 3 × 3). */
const EMPTY = { title: "", likelihood: "", impact: "", category: "" };

const NEW_FIELDS: [string, string][] = [["title", "Title"], ["likelihood", "Likelihood"], ["impact", "Impact"], ["category", "Category"]];

/**
 * NewRisk queues a risk creation; it is sent (and shown as pending) whether
 * online or not. A refused create comes back into the form, with the error
 * beside the field the server named — when the form is untouched. If the
 * user has typed a new draft since, the draft stays and the refused values
 * are shown beside the form, with a button that swaps them in (the draft is
 * then kept aside in turn). A double click creates one risk (useSubmitOnce).
 */
function NewRisk({ changes }: { changes: Change[] }) {
  const [f, setF] = useState(EMPTY);
  const latest = useRef(f); // the form as typed, ahead of the next render
  latest.current = f;
  const [errors, setErrors] = useState<FieldErrors>({});
  const [aside, setAside] = useState<Aside | null>(null);
  useRefusal(changes, "new-risk", undefined, (c) => {
    const values = { ...EMPTY, ...c.form!.values };
    if (sameValues(EMPTY, latest.current)) {
      setF(values);
      setErrors(fieldErrors(c));
    } else {
      setAside({ label: "Refused change", note: "the server did not create this risk; your new draft stays in the form.", values, errors: fieldErrors(c) });
    }
  });
  const restore = () => {
    if (!aside) return;
    setAside(sameValues(EMPTY, latest.current) ? null : { label: "Your draft", note: "kept while the refused change is back in the form.", values: latest.current, errors: {} });
    setF({ ...EMPTY, ...aside.values });
    setErrors(aside.errors);
  };
  const submit = useSubmitOnce(async () => {
    const sent = latest.current;
    const body: RiskCreateParams = {
      title: sent.title,
      ...(sent.likelihood ? { likelihood: Number(sent.likelihood) } : {}),
      ...(sent.impact ? { impact: Number(sent.impact) } : {}),
      ...(sent.category ? { category: sent.category } : {}),
    };
    await outbox().enqueue({
      method: "POST", path: "/risks", body: { kind: "json", json: body }, label: `Create risk “${sent.title}”`,
      form: { name: "new-risk", values: sent },
    });
    // Cleared only if untouched since: a draft typed while the change was being
    // queued (IndexedDB can take a while) is the user's next risk, not this one.
    if (sameValues(latest.current, sent)) {
      setF(EMPTY);
      setErrors({});
    }
  });
  const set = (k: keyof typeof EMPTY) => (v: string) => {
    latest.current = { ...latest.current, [k]: v };
    setF(latest.current);
  };
  return (
    <>
      {aside && <KeptAside aside={aside} fields={NEW_FIELDS} onRestore={restore} onDismiss={() => setAside(null)} />}
      <h2 id="new-risk-title">New risk</h2>
      <form class="new-risk" onSubmit={submit} aria-labelledby="new-risk-title">
        {errors.form && <p class="error form-error" role="alert">Not created: {errors.form}</p>}
        <Field label="Title" name="title" errors={errors}>
          {(a) => <input required maxLength={200} value={f.title} onInput={(e) => set("title")(e.currentTarget.value)} {...a} />}
        </Field>
        <ScoreSelect label="Likelihood" value={f.likelihood} onChange={set("likelihood")} error={errors.likelihood} unset />
        <ScoreSelect label="Impact" value={f.impact} onChange={set("impact")} error={errors.impact} unset />
        <Field label="Category" name="category" errors={errors}>
          {(a) => <input maxLength={100} value={f.category} onInput={(e) => set("category")(e.currentTarget.value)} {...a} />}
        </Field>
        <button type="submit">Create risk</button>
      </form>
    </>
  );
}
