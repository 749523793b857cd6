/**
 * Owners as the dashboard shows and writes them. The dashboard speaks the
 * newest API version (docs/api-versions.md), where an owner is one of the
 * tenant's users or a name: read as `{userId, name}`, written as `{userId}` or
 * `{name}`. The Owner field stays text that suggests the tenant's users: a
 * user's email picks that user, any other text is a name owner
 * (docs/dashboard.md, "Owners"). Changes queued before the move still carry a
 * string owner and are sent in the version they were made in, so a string is
 * read here too.
 */
import { useEffect, useState } from "preact/hooks";
import { api, type User } from "./api";
import { identity } from "./session";

/** A user as an owner field offers them. */
export interface OwnerChoice {
  id: string;
  email: string;
}

// Emails of the users this tab has listed, so an owner written as {userId}
// alone (a queued edit laid over the risk) still shows as a name.
const known = new Map<string, string>();
let listing: Promise<OwnerChoice[]> | undefined;

/** ownerName is an owner as text: a user's email, a name, or "" when there is none. */
export function ownerName(o: unknown): string {
  if (typeof o === "string") return o; // 2026-12-01's shape, of a change queued before the move
  if (o && typeof o === "object") {
    const { userId, name } = o as { userId?: string | null; name?: string };
    if (typeof name === "string") return name;
    if (userId) return known.get(userId) ?? (identity()?.userId === userId ? identity()!.email : userId);
  }
  return "";
}

/** ownerWrite is the owner to send for what the field holds: a listed user's email picks that user. */
export function ownerWrite(text: string, users: OwnerChoice[]): { userId: string } | { name: string } {
  const t = text.trim().toLowerCase();
  const u = t ? users.find((x) => x.email.toLowerCase() === t) : undefined;
  return u ? { userId: u.id } : { name: text };
}

/**
 * ownerChoices lists the tenant's users once per tab (at most 100, the first
 * page). Only admins may list users; anyone else is offered themselves, and
 * types any other owner as a name.
 */
export function ownerChoices(): Promise<OwnerChoice[]> {
  listing ??= api().users.listPage({ limit: 100 }).then(
    (p) => p.data.map((u: User) => ({ id: u.id, email: u.email })),
    () => {
      listing = undefined; // a member (403), or offline: asked again next time
      return [];
    },
  );
  return listing.then((list) => {
    const me = identity();
    const all = me && !list.some((u) => u.id === me.userId) ? [...list, { id: me.userId, email: me.email }] : list;
    for (const u of all) known.set(u.id, u.email);
    return all;
  });
}

/** useOwnerChoices is ownerChoices as state: [] until the list is read. */
export function useOwnerChoices(): OwnerChoice[] {
  const [users, setUsers] = useState<OwnerChoice[]>([]);
  useEffect(() => {
    let live = true;
    void ownerChoices().then((u) => live && setUsers(u));
    return () => {
      live = false;
    };
  }, []);
  return users;
}

/** OwnerOptions is the datalist an owner field names with `list`: the tenant's users by email. */
export function OwnerOptions({ id, users }: { id: string; users: OwnerChoice[] }) {
  return (
    <datalist id={id}>
      {users.map((u) => <option key={u.id} value={u.email} />)}
    </datalist>
  );
}
