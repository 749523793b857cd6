/**
 * The risk list's table and its loading (docs/dashboard.md, "Finding
 * risks"): sortable column headers, the register's columns, overdue reviews
 * marked.
 */
import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";
import { api, type Page, type Risk } from "../api";
import { canRead } from "../offline";
import { useList } from "../pages/common";
import { navigate } from "../router";
import { useOnline } from "../state";
import { useSettled } from "../settled";
import { apiFilter, isOverdue, listParams, sortBy, sortOf, viewURL, type ListView, type SortField } from "./view";

/** PAGE_SIZE is the number of risks on one page of the list. */
export const PAGE_SIZE = 20;

/** What the list shows: one page of the view's list. */
export interface Rows {
  page: Page<Risk> | undefined;
  error: string;
  /** True when they could not be read because the browser is offline or the server unreachable. */
  offline: boolean;
}

/** useRows loads one page of the view's list: its filters (a heat-map cell's factors among them) and sort. */
export function useRows(view: ListView): Rows {
  const paged = useList<Risk>(viewURL(view), () => api().risks.listPage(listParams(view, PAGE_SIZE)));
  return { page: paged.page, error: paged.offline ? "" : paged.error, offline: paged.offline };
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

/** ReviewCell shows a risk's review date, marked when it has passed and the risk is not closed. */
export function ReviewCell({ risk }: { risk: { reviewDate: string | null; status?: string } }) {
  if (!risk.reviewDate) return <td></td>;
  return <td>{risk.reviewDate}{isOverdue(risk) && <> <span class="badge overdue">overdue</span></>}</td>;
}

/**
 * RiskCount says how many risks the view's filters select, all pages
 * together. The list's envelope has no total (docs/openapi.yaml); the heat map
 * of the same filters counts every selected risk once, in its cell or as
 * unassessed, so its sum is the total, read again when a change settles.
 * Nothing is said while it is unknown (offline, or not yet read).
 */
export function RiskCount({ view }: { view: ListView }) {
  const [total, setTotal] = useState<number | undefined>();
  const online = useOnline();
  const key = viewURL({ ...view, cursors: [], sort: "" });
  const [reads, setReads] = useState(0);
  useSettled(useCallback(() => setReads((n) => n + 1), []));
  useEffect(() => {
    if (!canRead()) return;
    let live = true;
    api().risks.heatmap({ ...apiFilter(view), basis: "inherent" }).then(
      (m) => live && setTotal(m.cells.reduce((n, c) => n + c.count, m.unassessed)),
      () => live && setTotal(undefined),
    );
    return () => void (live = false);
  }, [key, online, reads]);
  if (total === undefined) return null;
  return <p class="count" role="status">{total === 1 ? "1 risk" : `${total} risks`}</p>;
}
