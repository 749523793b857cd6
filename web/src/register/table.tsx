/**
 * The risk list's table and its loading (docs/dashboard.md, "Finding
 * risks"): sortable column headers, the register's columns, overdue reviews
 * marked, and the rows of a heat-map cell gathered from the filter's pages.
 */
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, explain, type Page, type Risk } from "../api";
import { isOffline, useList } from "../pages/common";
import { navigate } from "../router";
import { useOnline, useSettled } from "../state";
import { apiFilter, inCell, isOverdue, listParams, sortBy, sortOf, viewURL, type ListView, type SortField } from "./view";

/** PAGE_SIZE is the number of risks on one page of the list. */
export const PAGE_SIZE = 20;
/** CELL_MAX is how many risks of one heat-map cell the list gathers at most. */
export const CELL_MAX = 500;

/** What the list shows: one page of the server's, or every risk of a cell. */
export interface Rows {
  page: Page<Risk> | undefined;
  error: string;
  /** True when a cell had more risks than CELL_MAX. */
  truncated: boolean;
  /** True when they could not be read because the browser is offline or the server unreachable. */
  offline: boolean;
}

/** useRows loads the view's risks: a page of the filter and sort, or the risks of its heat-map cell. */
export function useRows(view: ListView): Rows {
  const key = viewURL(view);
  const paged = useList<Risk>(view.cell ? null : key, () => api().risks.listPage(listParams(view, PAGE_SIZE)));
  const cell = useCellRows(view.cell ? key : null, view);
  return view.cell ? cell : { page: paged.page, error: paged.offline ? "" : paged.error, truncated: false, offline: paged.offline };
}

/**
 * useCellRows gathers the risks of the view's cell: the API filters by score
 * but not by likelihood and impact, so the filter's pages are read in the
 * view's sort and the cell's risks kept, up to CELL_MAX.
 */
function useCellRows(key: string | null, view: ListView): Rows {
  const [rows, setRows] = useState<Rows>({ page: undefined, error: "", truncated: false, offline: false });
  const [tick, setTick] = useState(0);
  const online = useOnline();
  useSettled(() => setTick((t) => t + 1));
  useEffect(() => {
    if (key === null || !view.cell) return;
    let live = true;
    const cell = view.cell;
    if (isOffline()) return setRows((r) => ({ ...r, error: "", offline: true }));
    (async () => {
      const data: Risk[] = [];
      for await (const r of api().risks.list({ ...apiFilter(view), limit: 100, ...(view.sort ? { sort: view.sort } : {}) })) {
        if (!live) return;
        if (!inCell(r, cell)) continue;
        if (data.length === CELL_MAX) return live && setRows({ page: { data, hasMore: false, nextCursor: null }, error: "", truncated: true, offline: false });
        data.push(r);
      }
      if (live) setRows({ page: { data, hasMore: false, nextCursor: null }, error: "", truncated: false, offline: false });
    })().catch((e: unknown) => live && setRows(isOffline(e) ? { page: undefined, error: "", truncated: false, offline: true } : { page: undefined, error: explain(e), truncated: false, offline: false }));
    return () => void (live = false);
  }, [key, tick, online]);
  return rows;
}

/** SortHeader is a column header whose button sorts by field, ascending, then descending. */
export function SortHeader({ view, field, children }: { view: ListView; field: SortField; children: ComponentChildren }) {
  const how = sortOf(view, field);
  return (
    <th scope="col" aria-sort={how === "none" ? undefined : how}>
      <button type="button" class="sort" onClick={() => navigate(viewURL(sortBy(view, field)))}>
        {children}
        <span aria-hidden="true">{how === "ascending" ? " ▲" : how === "descending" ? " ▼" : ""}</span>
      </button>
    </th>
  );
}

/** ReviewCell shows a review date, marked when it has passed. */
export function ReviewCell({ date }: { date: string | null }) {
  if (!date) return <td></td>;
  return <td>{date}{isOverdue(date) && <> <span class="badge overdue">overdue</span></>}</td>;
}
