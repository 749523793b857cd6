/**
 * What the audit-log page and a risk's history show, apart from how they
 * render it: the filters as the URL keeps them (so a reload, Back or a shared
 * link keeps them), the query they become, the export's address, where an
 * entry's target and request are shown, and each change in words
 * (docs/audit-log.md).
 */
import type { AuditAction, AuditChange, AuditEntry, AuditListParams } from "./api";
import { instant } from "./instant";
import { withQuery } from "./router";

/** The filters of the audit log the page offers, by their names in the URL and in the API. */
export const AUDIT_FILTERS = ["action", "actorId", "targetId", "since", "until"] as const;
/** AuditFilters are the filters as the URL holds them; "" does not filter. since and until are datetime-local values (the user's clock). */
export type AuditFilters = Record<(typeof AUDIT_FILTERS)[number], string>;

/** filtersOf reads the filters from a page's query. */
export function filtersOf(q: URLSearchParams): AuditFilters {
  return Object.fromEntries(AUDIT_FILTERS.map((k) => [k, q.get(k) ?? ""])) as AuditFilters;
}

/**
 * auditPath is the audit page's address for these filters and the cursors of
 * the pages before the one shown (the last is the page's own).
 */
export function auditPath(f: AuditFilters, cursors: string[] = []): string {
  return withQuery("/audit", { ...f, cursor: cursors });
}

/** listParams turns the filters into the API's query: local times become RFC 3339 in UTC. */
export function listParams(f: AuditFilters): AuditListParams {
  const p: AuditListParams = {};
  if (f.action) p.action = f.action as AuditAction;
  if (f.actorId) p.actorId = f.actorId;
  if (f.targetId) p.targetId = f.targetId;
  const since = instant(f.since);
  const until = instant(f.until);
  if (since) p.since = since;
  if (until) p.until = until;
  return p;
}

/** exportHref is the address of the export of every entry matching the filters (a download: the session cookie goes with it). */
export function exportHref(f: AuditFilters, format: "csv" | "ndjson"): string {
  // listParams makes since and until strings.
  return withQuery("/v1/audit-log/export", { format, ...(listParams(f) as Record<string, string>) });
}

/** targetHref is the dashboard page of an entry's target, when it has one: a risk's page, the admin page of a user, key or webhook. */
export function targetHref(t: AuditEntry["target"]): string | undefined {
  if (!t.id) return undefined;
  switch (t.type) {
    case "risk":
      return `/risks/${encodeURIComponent(t.id)}`;
    case "attachment":
    case "session":
    case "tenant":
      return undefined;
    case "user":
      return "/admin/users";
    case "api_key":
      return "/admin/api-keys";
    default:
      return t.type.startsWith("webhook_") ? "/admin/webhooks" : undefined;
  }
}

/** requestHref is the request log's entry of the request that made the change; none for a CLI command. */
export function requestHref(requestId: string | null): string | undefined {
  return requestId ? withQuery("/requests", { id: requestId }) : undefined;
}

/**
 * actorName says who acted: a user's email as it was then; an API key or a
 * webhook source by its name when `names` knows it (the admin's lists of
 * them, by ID); else the kind of actor and the end of its ID, which the audit
 * page's link and tooltip give whole — never a long ID alone (docs/dashboard.md).
 * The same for a review's reviewer and an acceptance's requester and decider.
 */
export function actorName(a: Pick<AuditEntry["actor"], "type" | "id"> & { email?: string | null | undefined }, names?: ReadonlyMap<string, string>): string {
  if (a.type === "system") return "system (CLI, schedule)";
  if (a.email) return a.email;
  const kind = a.type === "api_key" ? "API key" : a.type === "webhook_source" ? "webhook source" : "user";
  if (!a.id) return kind;
  const name = names?.get(a.id);
  if (name) return `${kind} “${name}”`;
  return `${kind} …${a.id.slice(-6)}`;
}

/** A change of one member, in words: `from` → `to`, or only that a secret changed. */
export interface ChangeLine {
  field: string;
  /** The member's name in words, for people: "Residual likelihood" for residualLikelihood. */
  label: string;
  /** True for a secret or password: the log says only that it changed. */
  secret: boolean;
  /** True when the member had no value before (a creation's, or one first set): shown as its new value, not "none → X". */
  added: boolean;
  from: string;
  to: string;
}

/** fieldLabel is a member's name in words: camelCase and snake_case split, the first word capitalised ("riskScore" → "Risk score"). */
export function fieldLabel(field: string): string {
  const words = field.replace(/([a-z0-9])([A-Z])/g, "$1 $2").replaceAll("_", " ").toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * changeLines lists an entry's changes by member name; none when the action
 * changed no member. For a creation (an action ending in ".created") a member
 * whose new value is empty — null, "", {} or [] — is left out: "description
 * none → (empty)" says nothing about what was made. Updates keep every line,
 * since emptying a member is a change.
 */
export function changeLines(changes: AuditEntry["changes"], action?: AuditAction): ChangeLine[] {
  const created = action?.endsWith(".created") ?? false;
  return Object.entries(changes ?? {})
    .filter(([, c]) => !(created && c !== "changed" && isEmpty(c.to)))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([field, c]: [string, AuditChange]) =>
      c === "changed"
        ? { field, label: fieldLabel(field), secret: true, added: false, from: "", to: "" }
        : { field, label: fieldLabel(field), secret: false, added: c.from === null || c.from === undefined, from: shownAs(field, c.from), to: shownAs(field, c.to) });
}

/** shownAs is a member's value as text, a review cadence in words. */
function shownAs(field: string, v: unknown): string {
  return field === "reviewEvery" && typeof v === "string" ? cadence(v) : shown(v);
}

/** isEmpty is true for a value that holds nothing: null, "", {}, [] or an owner who is no one ({userId: null, name: ""}). */
function isEmpty(v: unknown): boolean {
  if (v === null || v === undefined || v === "") return true;
  if (isOwner(v)) return v.userId === null && v.name === "";
  if (Array.isArray(v)) return v.length === 0;
  return typeof v === "object" && Object.keys(v).length === 0;
}

/** cadence says a review cadence (reviewEvery, an ISO 8601 period) in words: "P3M" is "every 3 months". */
export function cadence(every: string | null | undefined): string {
  const m = /^P(\d+)([MY])$/.exec(every ?? "");
  if (!m) return every ?? "not set";
  const n = Number(m[1]);
  const unit = m[2] === "Y" ? "year" : "month";
  return n === 1 ? `every ${unit}` : `every ${n} ${unit}s`;
}

/**
 * shown is a member's value as text: "none" for null (no value), strings as they are,
 * an owner ({"userId","name"}, how the audit log records it since 2027-01-15) as its
 * name, a requester, decider or reviewer ({"type","id","email"}) as actorName says, a risk recorded
 * whole (an acceptance's riskSnapshot) by its title, anything else as JSON.
 */
export function shown(v: unknown): string {
  if (v === null || v === undefined) return "none";
  if (typeof v === "string") return v === "" ? "(empty)" : v;
  if (isOwner(v)) return shown(v.name);
  if (isActor(v)) return actorName(v);
  if (isRisk(v)) return `“${v.title}”`;
  return JSON.stringify(v);
}

/** isActor is true of an actor as an acceptance or review records its requester, decider or reviewer: {"type","id","email"}. */
function isActor(v: unknown): v is AuditEntry["actor"] {
  return typeof v === "object" && v !== null && !Array.isArray(v) && "type" in v && "id" in v && "email" in v && Object.keys(v).length === 3;
}

/** isRisk is true of a risk recorded whole (an acceptance's riskSnapshot): shown by its title. */
function isRisk(v: unknown): v is { id: string; title: string } {
  return typeof v === "object" && v !== null && !Array.isArray(v) && "id" in v && "title" in v && typeof v.title === "string";
}

function isOwner(v: unknown): v is { userId: string | null; name: string } {
  return typeof v === "object" && v !== null && !Array.isArray(v) && "userId" in v && "name" in v && Object.keys(v).length === 2;
}
