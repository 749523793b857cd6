/**
 * The calls of a browser session (docs/openapi.yaml, tag "accounts"): signing
 * in and out, who is signed in, the user's password. Session mode only: an
 * API key has no user.
 */

import type { Send } from "./page.js";
import { jsonBody } from "./risks.js";
import type { CallOptions } from "./transport.js";
import type { Me, MyWork } from "./types.js";

/** The signed-in user's own account. */
export class Account {
  constructor(
    private readonly send: Send,
    private readonly session: (what: string) => void,
  ) {}

  /**
   * Signs in (POST /v1/sessions); the server sets the HttpOnly session cookie.
   * Sent once, never retried and never keyed: the password is in the body.
   * Wrong credentials: 401 RiskApiError.
   */
  async signIn(email: string, password: string, opts?: CallOptions): Promise<void> {
    this.session("account.signIn");
    await this.send({ method: "POST", path: "/sessions", body: jsonBody({ email, password }), expect: "json", unkeyed: true }, opts);
  }

  /** Signs out (DELETE /v1/sessions): the cookie is cleared and the session ends on the server. */
  async signOut(opts?: CallOptions): Promise<void> {
    this.session("account.signOut");
    await this.send({ method: "DELETE", path: "/sessions", expect: "empty", unkeyed: true }, opts);
  }

  /** The signed-in user and their tenant (GET /v1/me); signed out: 401 RiskApiError. */
  async me(opts?: CallOptions): Promise<Me> {
    this.session("account.me");
    return (await this.send({ method: "GET", path: "/me", expect: "json" }, opts)).json as Me;
  }

  /**
   * The signed-in user's My work (GET /v1/my-work): reviews due or overdue on the
   * risks they own, their open actions by due date, and (an admin's) the
   * acceptances others requested; at most `limit` (1–100, default 20) of each.
   */
  async myWork(params: { limit?: number } = {}, opts?: CallOptions): Promise<MyWork> {
    this.session("account.myWork");
    return (await this.send({ method: "GET", path: "/my-work", query: { ...params }, expect: "json" }, opts)).json as MyWork;
  }

  /**
   * Changes the user's password (POST /v1/me/password, 204). A wrong
   * currentPassword is 400 VALIDATION_FAILED naming it; the user's other
   * sessions end, this one stays.
   */
  async changePassword(currentPassword: string, newPassword: string, opts?: CallOptions): Promise<void> {
    this.session("account.changePassword");
    await this.send({ method: "POST", path: "/me/password", body: jsonBody({ currentPassword, newPassword }), expect: "empty" }, opts);
  }
}
