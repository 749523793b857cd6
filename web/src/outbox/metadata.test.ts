// Metadata in the merge (docs/register.md: a PATCH merges it key by key): an
// edit of one key meeting another writer's edit of another key is sent again,
// not shown as a conflict; the same key changed by both is a conflict; a
// pending edit of keys shows over the stored set, the other keys kept.

import { describe, expect, it } from "vitest";
import { newChange, type Change } from "./change";
import { afterStale, withPending } from "./merge";

const owner = { userId: "u", tenantId: "t", email: "a@b.test" };

function edit(json: Record<string, unknown>, base: Record<string, unknown>): Change {
  const c = newChange({ method: "PATCH", path: "/risks/r1", body: { kind: "json", json }, label: "Edit", ifMatch: '"1"', base }, owner, "k1", 1);
  return { ...c, attempts: 1 };
}

describe("metadata in the three-way merge", () => {
  const base = { metadata: { ticket: "SEC-1", team: "ops" } };

  it("sends again an edit of one key when another writer changed another key", () => {
    const current = { version: 2, metadata: { ticket: "SEC-1", team: "infra" } };
    const out = afterStale(edit({ metadata: { ticket: "SEC-2" } }, base), { current })!;
    expect(out.state).toBe("pending");
    expect(out.ifMatch).toBe('"2"');
  });

  it("is a conflict when both changed the same key to different values", () => {
    const current = { version: 2, metadata: { ticket: "SEC-9", team: "ops" } };
    const out = afterStale(edit({ metadata: { ticket: "SEC-2" } }, base), { current })!;
    expect(out.state).toBe("conflict");
    expect(out.conflict?.fields).toEqual(["metadata"]);
  });

  it("is no conflict when the other writer removed a key the user removed too", () => {
    const current = { version: 2, metadata: { team: "ops" } };
    expect(afterStale(edit({ metadata: { ticket: "" } }, base), { current })!.state).toBe("pending");
  });
});

describe("withPending and metadata", () => {
  it("lays pending edits of keys over the stored set, a removed key gone, the others kept", () => {
    const stored = { id: "r1", metadata: { ticket: "SEC-1", team: "ops", site: "Lyon" } };
    const a = { ...edit({ metadata: { ticket: "SEC-2", team: "" } }, {}), key: "a" };
    const b = { ...edit({ metadata: { owner2: "Bo" } }, {}), key: "b" };
    expect(withPending(stored, "/risks/r1", [a, b]).metadata).toEqual({ ticket: "SEC-2", site: "Lyon", owner2: "Bo" });
  });
});
