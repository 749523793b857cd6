/**
 * The risk list's filter bar and search box (docs/dashboard.md, "The
 * register"; docs/register.md, "Finding risks"). What it holds goes into the
 * URL on "Apply" (readView/viewURL), so a reload or the back button shows the
 * same risks; a new filter starts at page 1, since a cursor belongs to its
 * query.
 */
import { trimmed, typed, useDraft } from "../draft";
import { navigate } from "../router";
import { EMPTY_VIEW, STATUSES, TREATMENTS, viewURL, type ListView } from "./view";

/** FilterBar edits the view's filters and search; the sort and cell stay. */
export function FilterBar({ view }: { view: ListView }) {
  // Back, forward or a heat-map link changes the URL: the bar shows its filters.
  const [f, edit] = useDraft(view, viewURL(view));
  const apply = (e: Event) => {
    e.preventDefault();
    navigate(viewURL({ ...trimmed(f), sort: view.sort, cell: view.cell, show: view.show, basis: view.basis, cursors: [] }));
  };
  const cleared: ListView = { ...EMPTY_VIEW, show: view.show, basis: view.basis };
  const toggle = <T extends string>(k: "status" | "treatment", v: T) => () =>
    edit((d) => {
      const cur = d[k] as string[];
      return { ...d, [k]: cur.includes(v) ? cur.filter((x) => x !== v) : [...cur, v] };
    });
  const text = (k: "category" | "owner" | "minScore" | "maxScore" | "q") => ({
    value: f[k],
    onInput: typed(edit, k),
  });
  return (
    <form class="filters" role="search" aria-label="Filter risks" onSubmit={apply}>
      <label class="search">Search<input type="search" placeholder="words in title or description" {...text("q")} /></label>
      <fieldset>
        <legend>Status</legend>
        {STATUSES.map((s) => (
          <label key={s} class="check"><input type="checkbox" checked={f.status.includes(s)} onChange={toggle("status", s)} />{s}</label>
        ))}
      </fieldset>
      <fieldset>
        <legend>Treatment</legend>
        {TREATMENTS.map((t) => (
          <label key={t} class="check"><input type="checkbox" checked={f.treatment.includes(t)} onChange={toggle("treatment", t)} />{t}</label>
        ))}
      </fieldset>
      <label>Filter category<input {...text("category")} /></label>
      <label>Filter owner<input {...text("owner")} /></label>
      <label>Min score<input type="number" min={1} max={25} {...text("minScore")} /></label>
      {/* Max's lower bound is Min, so the browser itself says a range that selects nothing is wrong, before it goes to the URL. */}
      <label>Max score<input type="number" min={Number(f.minScore) || 1} max={25} {...text("maxScore")} /></label>
      <label class="check"><input type="checkbox" checked={f.overdue} onChange={() => edit((d) => ({ ...d, overdue: !d.overdue }))} />Overdue review</label>
      <button type="submit">Apply filters</button>
      {/* The bar empties even when the address is already the cleared one (nothing applied yet). */}
      <a href={viewURL(cleared)} onClick={() => edit(() => cleared)}>Clear filters</a>
    </form>
  );
}
