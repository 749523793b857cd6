/** Who is signed in, as far as this server tells. */
import { ApiError, get, type Me } from "./api";

/**
 * Session is who is signed in. `me` is undefined when this server has no
 * GET /v1/me (roles unknown: every page is shown, and the server decides).
 */
export interface Session {
  me: Me | undefined;
}

/** isAdmin is true for an admin, or when the server does not report roles. */
export function isAdmin(s: Session): boolean {
  return !s.me || s.me.user.role === "admin";
}

/** whoAmI returns the session, or null when signed out. */
export async function whoAmI(): Promise<Session | null> {
  try {
    return { me: await get<Me>("/v1/me") };
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return null;
    if (!(err instanceof ApiError && err.status === 404)) throw err;
  }
  // No /v1/me on this server: a cheap authenticated read tells whether the cookie works.
  try {
    await get("/v1/risks?limit=1");
    return { me: undefined };
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return null;
    throw err;
  }
}

