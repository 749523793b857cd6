/**
 * Who is signed in. The identity (user, tenant, email) is kept in
 * localStorage, shared by the tabs, and changed only under the Web Lock
 * SESSION_LOCK, which every outbox attempt holds too: so a change is never
 * sent with another user's cookie (docs/dashboard.md, "Whose change it is").
 */
import { api, NetworkError, RiskApiError, type Me } from "./api";
import { cacheBelongsTo } from "./offline";
import type { Owner } from "./outbox/change";
import { SESSION_LOCK } from "./outbox/outbox";

/**
 * Session is who is signed in: `me` as the server said, or undefined when it
 * could not be asked (offline at start-up: the last known identity is used).
 */
export interface Session {
  me: Me | undefined;
  owner: Owner;
}

const KEY = "riskapi-identity";
/** Set while a sign-out made without the server (offline) has not reached it yet. */
const PENDING = "riskapi-signout-pending";
const listeners = new Set<() => void>();

/** identity returns the signed-in user as this browser last established it, or null. */
export function identity(): Owner | null {
  try {
    const v = JSON.parse(localStorage.getItem(KEY) ?? "null") as Owner | null;
    return v && typeof v.userId === "string" && typeof v.tenantId === "string" ? v : null;
  } catch {
    return null;
  }
}

function setIdentity(o: Owner | null): void {
  const before = localStorage.getItem(KEY);
  if (o) localStorage.setItem(KEY, JSON.stringify({ userId: o.userId, tenantId: o.tenantId, email: o.email }));
  else localStorage.removeItem(KEY);
  if (localStorage.getItem(KEY) !== before) for (const fn of listeners) fn();
}

/**
 * roleChanged tells this tab's listeners (onIdentityChange) that the signed-in
 * user's own role was changed, so the app asks the server who they are now and
 * shows the pages that role may use.
 */
export function roleChanged(): void {
  for (const fn of listeners) fn();
}

/** onIdentityChange calls fn when the identity changes, in this tab or another; returns the unsubscribe. */
export function onIdentityChange(fn: () => void): () => void {
  const onStorage = (e: StorageEvent) => e.key === KEY && fn();
  listeners.add(fn);
  addEventListener("storage", onStorage);
  return () => {
    listeners.delete(fn);
    removeEventListener("storage", onStorage);
  };
}

/**
 * signOutPending is true while a sign-out made without reaching the server
 * (offline) waits to end the session there: this browser is signed out
 * already, the server's session is ended by the next whoAmI or signIn (which
 * fails while it cannot be).
 */
export function signOutPending(): boolean {
  return localStorage.getItem(PENDING) !== null;
}

/**
 * endPendingSignOut ends on the server a session signed out offline, if any
 * (a session already ended is fine); it rejects while the server cannot be
 * reached, and the sign-out stays pending. Called under SESSION_LOCK.
 */
async function endPendingSignOut(): Promise<void> {
  if (!signOutPending()) return;
  await endServerSession(0);
  localStorage.removeItem(PENDING);
}

/** endServerSession ends the cookie's session on the server; one already ended (401) is fine. */
async function endServerSession(maxRetries?: number): Promise<void> {
  try {
    await api().account.signOut(maxRetries === undefined ? {} : { maxRetries });
  } catch (err) {
    if (!(err instanceof RiskApiError && err.status === 401)) throw err;
  }
}

function ownerOf(me: Me): Owner {
  return { userId: me.user.id, tenantId: me.tenant.id, email: me.user.email };
}

/** isAdmin is true for an admin, or when roles are unknown (offline at start-up; the server decides). */
export function isAdmin(s: Session): boolean {
  return !s.me || s.me.user.role === "admin";
}

function underSessionLock<T>(fn: () => Promise<T>): Promise<T> {
  return navigator.locks.request(SESSION_LOCK, fn) as Promise<T>;
}

/**
 * whoAmI asks the server whose the cookie is and records it: the session, or
 * null when signed out. Without an answer (offline) it rejects and the
 * recorded identity stays.
 */
export function whoAmI(): Promise<Session | null> {
  return underSessionLock(async () => {
    // Signed out offline: the cookie the server still honours must not sign
    // the user back in; it is ended first, or nobody is signed in yet.
    await endPendingSignOut();
    try {
      // Offline: no retries, so the last known user can go on working at once.
      const me = await api().account.me({ maxRetries: navigator.onLine ? 3 : 0 });
      setIdentity(ownerOf(me));
      // The service worker keeps this user's reads, and only theirs.
      await cacheBelongsTo(ownerOf(me));
      return { me, owner: ownerOf(me) };
    } catch (err) {
      if (err instanceof RiskApiError && err.status === 401) {
        setIdentity(null);
        await cacheBelongsTo(null);
        return null;
      }
      throw err;
    }
  });
}

/** signIn signs in and records who; no outbox attempt overlaps it. */
export function signIn(email: string, password: string): Promise<Session> {
  return underSessionLock(async () => {
    // The new cookie would replace the old one, whose session could then never
    // be ended from here: a sign-in waits until the server has ended it.
    await endPendingSignOut();
    await api().account.signIn(email, password);
    const me = await api().account.me();
    setIdentity(ownerOf(me));
    // An earlier user's reads are deleted before this user's are read.
    await cacheBelongsTo(ownerOf(me));
    return { me, owner: ownerOf(me) };
  });
}

/**
 * signOut ends the session (a session already ended is fine) and forgets who
 * was signed in. When the server cannot be reached (offline), this browser
 * signs out at once all the same, so nothing more is sent under the user, and
 * the server's session is ended once it can be (signOutPending). Other
 * errors reject, and the user stays signed in.
 */
export function signOut(): Promise<void> {
  return underSessionLock(async () => {
    try {
      await endServerSession(navigator.onLine ? undefined : 0);
    } catch (err) {
      if (!(err instanceof NetworkError)) throw err;
      localStorage.setItem(PENDING, "1");
    }
    setIdentity(null);
    // The user's reads kept for offline use go with them (docs/dashboard.md, "Offline").
    await cacheBelongsTo(null);
  });
}
