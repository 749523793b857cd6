/**
 * The risk list's view as the URL holds it (docs/dashboard.md, "Finding
 * risks"): its filters, search, sort, heat-map cell and page, so that a
 * reload, the back button or a shared link shows the same risks. Pure
 * functions: the URL to a view, a view to its URL and to the API's filter.
 */
import { today } from "../day";
import type { FactorValue, Risk, RiskFilter, RiskListParams, RiskSort, RiskStatus, RiskTreatment } from "@riskapi/sdk";

/** Every status and treatment, in the spec's order (typed so that a value the spec adds fails tsc here). */
const statuses: Record<RiskStatus, true> = { open: true, mitigated: true, closed: true };
const treatments: Record<RiskTreatment, true> = { accept: true, mitigate: true, transfer: true, avoid: true };
/** A review cadence (docs/register.md, "Fields"); null is none. */
export type ReviewEvery = NonNullable<Risk["reviewEvery"]>;
const cadences: Record<ReviewEvery, true> = { P1M: true, P3M: true, P6M: true, P1Y: true };
/** STATUSES are the statuses a risk can have. */
export const STATUSES = Object.keys(statuses) as RiskStatus[];
/** TREATMENTS are the treatments a risk can have. */
export const TREATMENTS = Object.keys(treatments) as RiskTreatment[];
/** REVIEW_CADENCES are the review cadences a risk can have, shortest first. */
export const REVIEW_CADENCES = Object.keys(cadences) as ReviewEvery[];
/** SORT_FIELDS are the columns the list sorts by (docs/register.md). */
export const SORT_FIELDS = ["title", "riskScore", "residualScore", "reviewDate", "createdAt", "updatedAt"] as const;
/** A sortable column. */
export type SortField = (typeof SORT_FIELDS)[number];

/** A heat map's basis: the assessment before or after treatment. */
export type Basis = "inherent" | "residual";

/** One heat-map cell the list is narrowed to. */
export interface Cell {
  basis: Basis;
  likelihood: number;
  impact: number;
}

/** ListView is what the risk list shows; empty members do not filter. */
export interface ListView {
  status: RiskStatus[];
  treatment: RiskTreatment[];
  category: string;
  owner: string;
  /** Bounds on riskScore, as typed ("" for none). */
  minScore: string;
  maxScore: string;
  /** Only risks whose review date has passed (reviewBefore=today). */
  overdue: boolean;
  q: string;
  /** "" is the server's default, newest first. */
  sort: RiskSort | "";
  /** The heat-map cell the list is narrowed to, when it came from one. */
  cell: Cell | undefined;
  /** "list" or "heatmap" (with its basis in cell-less `basis`). */
  show: "list" | "heatmap";
  /** The heat map's basis when shown. */
  basis: Basis;
  /** The day (YYYY-MM-DD, UTC) the heat map shows moves since, "" for none. */
  movedSince: string;
  /** The cursors of the pages before this one, oldest first. */
  cursors: string[];
}

const score = (s: string | null) => (s !== null && /^([1-9]|1\d|2[0-5])$/.test(s) ? s : "");
const date = (s: string | null) => (s !== null && /^\d{4}-\d{2}-\d{2}$/.test(s) ? s : "");
const factor = (s: string | null) => (s !== null && /^[1-5]$/.test(s) ? Number(s) : undefined);
const list = <T extends string>(s: string | null, all: readonly T[]) =>
  (s ?? "").split(",").filter((x): x is T => (all as readonly string[]).includes(x));
const isSort = (s: string) => (SORT_FIELDS as readonly string[]).includes(s.replace(/^-/, ""));
/** inverted is true when both score bounds are valid and min is above max: a range no risk is in, which the API refuses. */
const inverted = (q: URLSearchParams) => {
  const [min, max] = [score(q.get("minScore")), score(q.get("maxScore"))];
  return min !== "" && max !== "" && Number(min) > Number(max);
};

/** The view's parameters read once each (readView takes the first value); `cursor` is a list. */
const VIEW_PARAMS = new Set([
  "status", "treatment", "category", "owner", "minScore", "maxScore", "overdue", "q", "sort", "show", "basis", "likelihood", "impact", "movedSince",
]);

/** readView reads the list's view from the URL's query; a value it does not know is left out. */
export function readView(q: URLSearchParams): ListView {
  const sort = q.get("sort") ?? "";
  const range = !inverted(q);
  const basis: Basis = q.get("basis") === "residual" ? "residual" : "inherent";
  const l = factor(q.get("likelihood"));
  const i = factor(q.get("impact"));
  return {
    status: list(q.get("status"), STATUSES),
    treatment: list(q.get("treatment"), TREATMENTS),
    category: q.get("category") ?? "",
    owner: q.get("owner") ?? "",
    minScore: range ? score(q.get("minScore")) : "",
    maxScore: range ? score(q.get("maxScore")) : "",
    overdue: q.get("overdue") === "1",
    q: q.get("q") ?? "",
    sort: isSort(sort) ? (sort as RiskSort) : "",
    cell: l !== undefined && i !== undefined ? { basis, likelihood: l, impact: i } : undefined,
    show: q.get("show") === "heatmap" ? "heatmap" : "list",
    basis,
    movedSince: q.get("show") === "heatmap" ? date(q.get("movedSince")) : "",
    cursors: q.getAll("cursor"),
  };
}

/**
 * ignoredParams names the view's parameters in q whose values readView could not
 * read and left out (both bounds of a score range whose minimum is above its
 * maximum too), as `name=value`, in the URL's order; the page says so rather
 * than show every risk as if the link had asked for them. A parameter given
 * twice is read once, its first value: the later ones are named too (`cursor`
 * is a list). Parameters the view does not use (a tracking tag, say) are not
 * its business and are not named.
 */
export function ignoredParams(q: URLSearchParams): string[] {
  const one = (all: readonly string[]) => (s: string) => all.includes(s);
  const each = (all: readonly string[]) => (s: string) => list(s, all).length === s.split(",").length;
  const valid: Record<string, (s: string) => boolean> = {
    status: each(STATUSES), treatment: each(TREATMENTS), minScore: (s) => score(s) !== "", maxScore: (s) => score(s) !== "",
    overdue: one(["0", "1"]), sort: isSort, show: one(["list", "heatmap"]), basis: one(["inherent", "residual"]),
    likelihood: (s) => factor(s) !== undefined, impact: (s) => factor(s) !== undefined, movedSince: (s) => date(s) !== "",
  };
  const out: string[] = [];
  const bounds = inverted(q);
  const read = new Set<string>();
  for (const [k, v] of q) {
    if (VIEW_PARAMS.has(k) && read.has(k)) {
      out.push(`${k}=${v}`);
      continue;
    }
    read.add(k);
    if (v === "" || !Object.hasOwn(valid, k)) continue;
    if (!valid[k]!(v) || (bounds && (k === "minScore" || k === "maxScore"))) out.push(`${k}=${v}`);
  }
  return out;
}

/**
 * viewURL is the dashboard path of a view: only what differs from the
 * default is in it, in a fixed order, so equal views have equal URLs.
 */
export function viewURL(v: ListView): string {
  const q = new URLSearchParams();
  const set = (k: string, s: string) => s !== "" && q.set(k, s);
  set("show", v.show === "heatmap" ? "heatmap" : "");
  set("status", v.status.join(","));
  set("treatment", v.treatment.join(","));
  set("category", v.category);
  set("owner", v.owner);
  set("minScore", v.minScore);
  set("maxScore", v.maxScore);
  set("overdue", v.overdue ? "1" : "");
  set("q", v.q.trim());
  set("sort", v.sort);
  const basis = v.cell?.basis ?? (v.show === "heatmap" ? v.basis : "inherent");
  set("basis", basis === "residual" ? "residual" : "");
  set("movedSince", v.show === "heatmap" ? v.movedSince : "");
  if (v.cell) {
    q.set("likelihood", String(v.cell.likelihood));
    q.set("impact", String(v.cell.impact));
  }
  for (const c of v.cursors) q.append("cursor", c);
  const s = q.toString();
  return s ? `/?${s}` : "/";
}

/** EMPTY_VIEW is the list as it opens: every risk, newest first. */
export const EMPTY_VIEW: ListView = {
  status: [], treatment: [], category: "", owner: "", minScore: "", maxScore: "", overdue: false, q: "", sort: "",
  cell: undefined, show: "list", basis: "inherent", movedSince: "", cursors: [],
};

/**
 * isOverdue is true for a risk not closed whose review date is before today
 * (the UTC day, as the server's notices count it): a closed risk is reviewed
 * no more (docs/register.md, "The register in time").
 */
export function isOverdue(risk: { reviewDate?: string | null; status?: string }, on = today()): boolean {
  return risk.status !== "closed" && !!risk.reviewDate && risk.reviewDate < on;
}

/** OPEN_STATUSES are the statuses whose reviews can be overdue. */
export const OPEN_STATUSES: RiskStatus[] = ["open", "mitigated"];

/**
 * apiFilter is the API's filter of a view: a heat-map cell becomes the factor
 * filters of its basis, so the cell's list pages and exports like any other.
 */
export function apiFilter(v: ListView, on = today()): RiskFilter {
  const f: RiskFilter = {};
  if (v.status.length) f.status = v.status;
  // Overdue reviews are those of risks not closed, as isOverdue and the server's notices count them.
  if (v.overdue) {
    const open = v.status.length ? v.status.filter((s) => s !== "closed") : OPEN_STATUSES;
    if (open.length) f.status = open; // only closed ones asked for: their dates, none marked overdue
  }
  if (v.treatment.length) f.treatment = v.treatment;
  if (v.category) f.category = v.category;
  if (v.owner) f.owner = v.owner;
  if (v.minScore) f.minScore = Number(v.minScore);
  if (v.maxScore) f.maxScore = Number(v.maxScore);
  if (v.overdue) f.reviewBefore = on;
  if (v.q.trim()) f.q = v.q.trim();
  if (v.cell) {
    const l = v.cell.likelihood as FactorValue;
    const i = v.cell.impact as FactorValue;
    if (v.cell.basis === "residual") Object.assign(f, { residualLikelihood: l, residualImpact: i });
    else Object.assign(f, { likelihood: l, impact: i });
  }
  return f;
}

/** listParams is the query of one page of the view's list. */
export function listParams(v: ListView, limit: number, on = today()): RiskListParams {
  const cursor = v.cursors.at(-1);
  return { ...apiFilter(v, on), limit, ...(v.sort ? { sort: v.sort } : {}), ...(cursor ? { cursor } : {}) };
}

/**
 * sortBy is the view sorted by field: ascending first, then descending when
 * it already sorts ascending by it, and back. A new sort starts at page 1,
 * since a cursor belongs to its sort.
 */
export function sortBy(v: ListView, field: SortField): ListView {
  return { ...v, sort: v.sort === field ? (`-${field}` as RiskSort) : (field as RiskSort), cursors: [] };
}

/** sortOf says how the view sorts by field: for aria-sort. */
export function sortOf(v: ListView, field: SortField): "ascending" | "descending" | "none" {
  const s = v.sort || "-createdAt";
  return s === field ? "ascending" : s === `-${field}` ? "descending" : "none";
}

/** cellURL is the list narrowed to one heat-map cell, keeping the view's filters. */
export function cellURL(v: ListView, basis: Basis, likelihood: number, impact: number): string {
  return viewURL({ ...v, show: "list", cell: { basis, likelihood, impact }, cursors: [] });
}
