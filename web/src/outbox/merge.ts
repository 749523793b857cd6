/**
 * The three-way merge of an edit that met a newer version (docs/dashboard.md,
 * "Conflicts"). An edit carries only the fields the user changed (`mine`), the
 * values the user saw of them (`base`) and that version's ETag (`ifMatch`).
 * When the server answers 412 with the risk as stored now (`current`), each
 * of the user's fields is compared with its base:
 *
 * - no field the user changed was changed by the other writer: the edit is
 *   sent again over the new version on its own, and both changes survive;
 * - a field was changed by both (to different values): the change waits as a
 *   conflict, with both values, until the user keeps theirs or mine.
 *
 * The same comparison runs, with no request, when another edit of the same
 * user to the same risk is stored (afterOwn): their own value is never shown
 * as someone else's.
 *
 * Pure functions, tested without a browser; outbox.ts stores what they return.
 */
import { etag } from "@riskapi/sdk";
import type { Change, ConflictInfo, Fields } from "./change";

/**
 * Fields that change together: an edit that sends both factors (or, as edits
 * queued before the form stopped sending it, the score too) is one
 * assessment, so a clash on one is a clash on all it sends of them.
 */
const GROUPS: readonly (readonly string[])[] = [["likelihood", "impact", "riskScore"]];

/** pick returns the members of v named by keys; an absent one is null (as the API sends an unset number). */
export function pick(v: Record<string, unknown>, keys: string[]): Fields {
  return Object.fromEntries(keys.map((k) => [k, v[k] ?? null]));
}

/**
 * afterStale is the change after a 412 whose problem carried `current`;
 * undefined when the change cannot be merged (it has no base or fields, or
 * `current` is no risk), and the 412 is then a refusal like any other.
 * `next` is the change with the attempt already counted.
 */
export function afterStale(next: Change, problem: unknown): Change | undefined {
  const current = (problem as { current?: unknown } | null)?.current as Record<string, unknown> | undefined;
  const mine = next.body?.kind === "json" ? (next.body.json as Fields) : undefined;
  if (!next.base || !mine || typeof current !== "object" || current === null || typeof current.version !== "number") return undefined;
  const version = current.version;
  if (next.ifMatch === etag({ version })) return undefined; // the server said stale for the version we sent: nothing to merge
  return onto(next, mine, next.base, current, `changed elsewhere meanwhile, in other fields: sent again over version ${version}`);
}

/**
 * afterOwn is c, an edit of the user's still waiting (pending or in conflict),
 * once `done`, another edit of theirs to the same risk, was stored; the risk
 * it answered with is what is stored now. c is compared with it as after a
 * 412, so a field the user's own edit set is no conflict with itself: an edit
 * typed over their earlier pending value (its base) is sent over the new
 * version, and a conflict is shown against the version stored now, never an
 * older one. The fields of an older c that `done`, the user's later word, set
 * too are dropped: sending them would undo it. c is returned as it is when
 * `done` says nothing of it, undefined when nothing of it is left to send
 * (docs/dashboard.md, "Conflicts").
 */
export function afterOwn(c: Change, done: Change): Change | undefined {
  const current = done.result as Record<string, unknown> | undefined;
  const waiting = c.state === "pending" || c.state === "conflict";
  if (c.key === done.key || !waiting || c.method !== "PATCH" || done.method !== "PATCH" || c.path !== done.path || !c.base) return c;
  // A replay answers with the risk as it was stored then, maybe not now.
  if (done.state !== "done" || done.replayed || c.body?.kind !== "json" || done.body?.kind !== "json") return c;
  if (typeof current !== "object" || current === null || typeof current.version !== "number") return c;
  let mine = c.body.json as Fields;
  if (c.createdAt < done.createdAt) mine = without(mine, done.body.json as Fields);
  if (Object.keys(mine).length === 0) return undefined;
  const body = { kind: "json" as const, json: mine };
  return onto({ ...c, body }, mine, c.base, current, `carried onto version ${current.version}, which your own edit stored`);
}

/**
 * deleteAfterOwn is c, a delete of the user's still pending, once `done`, an
 * edit of theirs to the same risk, was stored. A delete carries the ETag of
 * the version the user saw; when that is the version their own edit was sent
 * over, what they saw is now the version that edit stored, and the delete goes
 * over it. Any other writer's version in between keeps the older ETag, and the
 * server refuses the delete (412): it was not what the user saw.
 */
export function deleteAfterOwn(c: Change, done: Change): Change {
  if (c.method !== "DELETE" || c.state !== "pending" || !c.ifMatch) return c;
  const version = storedOver(done, c.path, c.ifMatch);
  return version === undefined ? c : { ...c, ifMatch: etag({ version }) };
}

/**
 * seenAfterOwn is the ETag a delete of path, asked for over the version
 * ifMatch names, is sent with: moved by each of changes (the user's own) that
 * is an edit of path stored over the version then named, as deleteAfterOwn
 * moves a delete already queued. So a delete asked for before the page re-read
 * the user's own edit goes over the version that edit stored.
 */
export function seenAfterOwn(ifMatch: string, path: string, changes: Change[]): string {
  let tag = ifMatch;
  for (const d of [...changes].sort((a, b) => a.createdAt - b.createdAt)) {
    const version = storedOver(d, path, tag);
    if (version !== undefined) tag = etag({ version });
  }
  return tag;
}

/**
 * storedOver is the version done, an edit of path sent over ifMatch, stored;
 * undefined for any other change. A replayed edit counts: its answer is the
 * version that edit stored, whatever came after it (unlike afterOwn, which
 * needs the risk as stored now).
 */
function storedOver(done: Change, path: string, ifMatch: string): number | undefined {
  const current = done.result as Record<string, unknown> | undefined;
  if (done.method !== "PATCH" || done.state !== "done" || done.path !== path || done.ifMatch !== ifMatch) return undefined;
  return typeof current === "object" && current !== null && typeof current.version === "number" ? current.version : undefined;
}

/**
 * onto is c over `current`, the risk as stored now: pending over its version
 * when no field of the user's clashes with another writer's, else a conflict
 * with it. The base stays what the user saw until the change is sent over a
 * version, so a later comparison is still with what they saw.
 */
function onto(c: Change, mine: Fields, base: Fields, current: Record<string, unknown>, merged: string): Change {
  const version = current.version as number;
  const keys = Object.keys(mine);
  const both = clashes(keys, mine, base, current);
  const { conflict: _, ...rest } = c;
  if (both.length === 0) {
    return { ...rest, state: "pending", ifMatch: etag({ version }), base: pick(current, keys), nextAttemptAt: 0, lastReason: merged };
  }
  const conflict: ConflictInfo = { version, theirs: pick(current, keys), fields: both };
  return { ...rest, state: "conflict", conflict, nextAttemptAt: 0, lastReason: `Conflict: ${both.join(", ")} changed in a newer version too` };
}

/** without is mine less what a later edit set: its fields, and of metadata its keys. */
function without(mine: Fields, later: Fields): Fields {
  const out: Fields = {};
  for (const [k, v] of Object.entries(mine)) {
    if (!(k in later)) out[k] = v;
    else if (k === "metadata") {
      const left = Object.fromEntries(Object.entries((v ?? {}) as Meta).filter(([m]) => !(m in ((later[k] ?? {}) as Meta))));
      if (Object.keys(left).length > 0) out[k] = left;
    }
  }
  return out;
}

/**
 * clashes lists the user's fields that the other writer changed too, to
 * another value; a clash spreads to its group. Metadata merges key by key
 * (docs/register.md), so it clashes only on a key both changed.
 */
function clashes(keys: string[], mine: Fields, base: Fields, current: Record<string, unknown>): string[] {
  const clash = (k: string) => (k === "metadata" ? metadataClash(mine[k], base[k], current[k]) : !same(k, current[k], base[k]) && !same(k, current[k], mine[k]));
  const out = new Set(keys.filter(clash));
  for (const g of GROUPS) if (g.some((k) => out.has(k))) for (const k of g) if (keys.includes(k)) out.add(k);
  return keys.filter((k) => out.has(k));
}

function same(k: string, a: unknown, b: unknown): boolean {
  // An owner is written {userId} or {name} and read {userId, name} (2027-01-15), or a string (a change queued in 2026-12-01).
  if (k === "owner") return ownerKey(a) === ownerKey(b);
  return (a ?? null) === (b ?? null);
}

type Meta = Record<string, string>;

/** metadataClash: a key of the user's changed by the other writer too, to another value ("" and absent are one). */
export function metadataClash(mine: unknown, base: unknown, current: unknown): boolean {
  const m = (mine ?? {}) as Meta, b = (base ?? {}) as Meta, c = (current ?? {}) as Meta;
  return Object.keys(m).some((k) => (c[k] ?? "") !== (b[k] ?? "") && (c[k] ?? "") !== m[k]);
}

/** overlayMetadata lays a PATCH's metadata (changed keys, "" for removed) over a stored set, as the server merges it. */
export function overlayMetadata(stored: unknown, patch: unknown): Meta {
  const out: Meta = { ...((stored ?? {}) as Meta) };
  for (const [k, v] of Object.entries((patch ?? {}) as Meta)) {
    if (v === "") delete out[k];
    else out[k] = v;
  }
  return out;
}

/** keepMine: the user's values win; sent again, as they are, over the version they now know of. */
export function keepMine(c: Change): Change {
  const { conflict, ...rest } = c;
  if (!conflict) return c;
  return { ...rest, state: "pending", ifMatch: etag(conflict), base: conflict.theirs, nextAttemptAt: 0, lastReason: "you kept yours: sent again over version " + conflict.version };
}

/**
 * keepTheirs: the other writer's values stay. The user's fields in conflict
 * are dropped, and of metadata only the keys in conflict; any others of
 * theirs, which nobody else touched, are sent over the new version. undefined
 * when nothing is left to send: the change is gone.
 */
export function keepTheirs(c: Change): Change | undefined {
  const { conflict, ...rest } = c;
  if (!conflict || c.body?.kind !== "json") return c;
  const left: Fields = {};
  for (const [k, v] of Object.entries(c.body.json as Fields)) {
    if (!conflict.fields.includes(k)) left[k] = v;
    else if (k === "metadata") {
      const m = (v ?? {}) as Meta, b = (c.base?.metadata ?? {}) as Meta, cur = (conflict.theirs.metadata ?? {}) as Meta;
      const kept = Object.fromEntries(Object.entries(m).filter(([mk]) => !metadataClash({ [mk]: m[mk] }, b, cur)));
      if (Object.keys(kept).length > 0) left[k] = kept;
    }
  }
  if (Object.keys(left).length === 0) return undefined;
  return {
    ...rest, label: labelKept(c.label, c.body.json as Fields, conflict), state: "pending", body: { kind: "json", json: left },
    ifMatch: etag(conflict), base: pick(conflict.theirs, Object.keys(left)),
    nextAttemptAt: 0, lastReason: "you kept theirs: your other fields sent over version " + conflict.version,
  };
}

/**
 * retitled is label with its quoted title (“…”, as in "Edit risk “Flood”") now
 * title; a label that quotes none stays as it is.
 */
export function retitled(label: string, title: string): string {
  return label.replace(/“[^”]*”/, () => `“${title}”`);
}

/**
 * labelKept names a change by the title that stays when the user kept theirs:
 * a label made from the dropped title ("Edit risk “Mine”") would name a risk
 * that no longer exists under it.
 */
function labelKept(label: string, sent: Fields, conflict: ConflictInfo): string {
  const theirs = conflict.theirs.title;
  if (!conflict.fields.includes("title") || typeof sent.title !== "string" || typeof theirs !== "string") return label;
  return retitled(label, theirs);
}

/**
 * withPending is the risk as the user last left it: the stored values with
 * the fields of their edits still pending laid over them, oldest first. The
 * edit form shows it, so a pending edit stays visible after a reload, and a
 * next edit's base is what the user saw, their own pending values included.
 */
export function withPending<T extends object>(stored: T, path: string, changes: Change[]): T {
  let out = stored;
  for (const c of changes) {
    if (c.state !== "pending" || c.method !== "PATCH" || c.path !== path || c.body?.kind !== "json") continue;
    const patch = c.body.json as Fields;
    const before = (out as Fields).metadata;
    out = { ...out, ...patch };
    // A PATCH's metadata is merged key by key, not replaced.
    if ("metadata" in patch) out = { ...out, metadata: overlayMetadata(before, patch.metadata) };
  }
  return out;
}

/**
 * queuedTitle is the risk's title as the user's pending edits leave it, or
 * undefined when none of them changes it (the stored title stands): the risk
 * page's heading and the list's row show it, marked as not sent yet.
 */
export function queuedTitle(risk: { id: string; title: string }, changes: Change[]): string | undefined {
  const title = withPending(risk, `/risks/${risk.id}`, changes).title;
  return title === risk.title ? undefined : title;
}

/**
 * ownerKey makes owners comparable across their shapes: a user by their id,
 * else the name ({userId} written and {userId, name} read are the same owner),
 * a string (2026-12-01) as a name.
 */
function ownerKey(o: unknown): unknown {
  const v = o as { userId?: string | null; name?: string } | null;
  return typeof v === "object" ? v?.userId || "n:" + v?.name : "n:" + String(o);
}
