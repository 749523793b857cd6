// A member's risk page does not ask for the admin-only lists (GET /v1/users,
// /v1/api-keys, /v1/webhook-sources; docs/openapi.yaml): each would only be
// answered 403. The owner picker offers a member themselves, as it did after
// the 403; the History keeps an API key's or webhook source's ID.

import { beforeEach, describe, expect, it, vi } from "vitest";
import type { AuditEntry } from "../api";

const listUsers = vi.fn(async () => ({ data: [{ id: "usr_b", email: "bob@example.test" }], hasMore: false, nextCursor: null }));
vi.mock("../api", async (orig) => ({ ...(await orig<typeof import("../api")>()), api: () => ({ users: { listPage: listUsers } }) }));

const { ownerChoices } = await import("./common");
const { actorNamesWanted } = await import("./history");

describe("a member's risk page", () => {
  beforeEach(() => listUsers.mockClear());

  it("does not list the tenant's users for a member; an admin's page does", async () => {
    expect(await ownerChoices(false)).toEqual([]);
    expect(listUsers).not.toHaveBeenCalled();
    expect(await ownerChoices(true)).toEqual([{ id: "usr_b", email: "bob@example.test" }]);
    expect(listUsers).toHaveBeenCalledTimes(1);
  });

  it("names API keys and webhook sources in History for an admin only", () => {
    const byKey = [{ actor: { type: "api_key", id: "key_1" } }] as unknown as AuditEntry[];
    const byUser = [{ actor: { type: "user", id: "usr_1" } }] as unknown as AuditEntry[];
    expect(actorNamesWanted(byKey, true)).toBe(true);
    expect(actorNamesWanted(byKey, false)).toBe(false);
    expect(actorNamesWanted(byUser, true)).toBe(false);
    expect(actorNamesWanted(undefined, true)).toBe(false);
  });
});
