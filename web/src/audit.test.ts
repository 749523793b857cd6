// The audit page's logic without a browser: filters kept in the URL and read
// back, the query and export they make, where an entry links, and each
// change in words. The page itself runs in Chromium (e2e/audit.test.ts).

// A zone with an offset, so that a local time and its UTC instant differ.
process.env.TZ = "Europe/Berlin";

import { describe, expect, it } from "vitest";
import type { AuditEntry } from "./api";
import { actorName, auditPath, cadence, changeLines, exportHref, filtersOf, listParams, requestHref, shown, targetHref } from "./audit";

const none = { action: "", actorId: "", targetId: "", since: "", until: "" };

describe("audit filters in the URL", () => {
  it("survive the round trip through the address, with the page's cursors", () => {
    const f = { ...none, action: "risk.updated", actorId: "usr_1", since: "2026-12-02T10:30" };
    const path = auditPath(f, ["c1", "c2"]);
    expect(path).toBe("/audit?action=risk.updated&actorId=usr_1&since=2026-12-02T10%3A30&cursor=c1&cursor=c2");
    const q = new URL(path, "http://x").searchParams;
    expect(filtersOf(q)).toEqual(f);
    expect(q.getAll("cursor")).toEqual(["c1", "c2"]);
  });

  it("leave the address bare when nothing filters, and ignore what the page does not know", () => {
    expect(auditPath(none)).toBe("/audit");
    expect(filtersOf(new URLSearchParams("foo=bar&targetId=risk_9"))).toEqual({ ...none, targetId: "risk_9" });
  });

  it("become the API's query: local times as UTC instants, empty filters left out", () => {
    expect(listParams({ ...none, action: "user.deleted", targetId: "usr_2", since: "2026-12-02T10:30", until: "2026-07-01T00:00" })).toEqual({
      action: "user.deleted", targetId: "usr_2", since: "2026-12-02T09:30:00.000Z", until: "2026-06-30T22:00:00.000Z",
    });
    expect(listParams(none)).toEqual({});
    // A time the browser cannot read goes as typed: the server's 400 says what is wrong.
    expect(listParams({ ...none, since: "soon" })).toEqual({ since: "soon" });
  });

  it("export what they match, under /v1 where the session cookie goes", () => {
    expect(exportHref({ ...none, action: "risk.deleted", since: "2026-12-02T10:30" }, "csv")).toBe(
      "/v1/audit-log/export?format=csv&action=risk.deleted&since=2026-12-02T09%3A30%3A00.000Z",
    );
    expect(exportHref(none, "ndjson")).toBe("/v1/audit-log/export?format=ndjson");
  });
});

describe("an entry as shown", () => {
  it("links its target to the page that shows it, and its request to the request log", () => {
    expect(targetHref({ type: "risk", id: "risk_1" })).toBe("/risks/risk_1");
    expect(targetHref({ type: "user", id: "usr_1" })).toBe("/admin/users");
    expect(targetHref({ type: "api_key", id: "key_1" })).toBe("/admin/api-keys");
    expect(targetHref({ type: "webhook_endpoint", id: "we_1" })).toBe("/admin/webhooks");
    expect(targetHref({ type: "attachment", id: "att_1" })).toBeUndefined();
    expect(targetHref({ type: "session", id: "" })).toBeUndefined();
    expect(requestHref("7Qh2k")).toBe("/requests?id=7Qh2k");
    expect(requestHref(null)).toBeUndefined();
  });

  it("names the actor by the email they had, else by kind and name, or the end of its ID", () => {
    expect(actorName({ type: "user", id: "usr_1", email: "ann@example.com" })).toBe("ann@example.com");
    // A key or a source by its name, when the admin's lists know it; else the end of its ID, never all of it.
    expect(actorName({ type: "api_key", id: "key_01a2b3c4d5e6f708" })).toBe("API key …e6f708");
    expect(actorName({ type: "api_key", id: "key_01a2b3c4d5e6f708" }, new Map([["key_01a2b3c4d5e6f708", "deploy"]]))).toBe("API key “deploy”");
    expect(actorName({ type: "webhook_source", id: "whs_1" }, new Map([["whs_1", "stripe"]]))).toBe("webhook source “stripe”");
    expect(actorName({ type: "system", id: null })).toBe("system (CLI, schedule)");
  });

  it("lists changes by field as from → to, a password only as changed, values in words", () => {
    const changes: AuditEntry["changes"] = {
      title: { from: "Flood", to: "Flood in the cellar" },
      likelihood: { from: null, to: 4 },
      password: "changed",
      scopes: { from: ["risks:read"], to: [] },
    };
    expect(changeLines(changes)).toEqual([
      { field: "likelihood", label: "Likelihood", secret: false, added: true, from: "none", to: "4" },
      { field: "password", label: "Password", secret: true, added: false, from: "", to: "" },
      { field: "scopes", label: "Scopes", secret: false, added: false, from: '["risks:read"]', to: "[]" },
      { field: "title", label: "Title", secret: false, added: false, from: "Flood", to: "Flood in the cellar" },
    ]);
    expect(changeLines(null)).toEqual([]);
    expect([shown(""), shown(false), shown({ a: 1 })]).toEqual(["(empty)", "false", '{"a":1}']);
  });

  it("shows an acceptance's actors by name and its risk snapshot by title, not as JSON, and a review cadence in words", () => {
    const lines = changeLines({
      requestedBy: { from: null, to: { type: "user", id: "usr_0193b2c4d5e67f8091a2b3c4d5e6f708", email: "ada@example.com" } },
      decidedBy: { from: null, to: { type: "api_key", id: "key_0193b2c4d5e67f8091a2b3c4d5a23b0e", email: null } },
      riskSnapshot: { from: null, to: { id: "risk_1", title: "Flood", riskScore: 12, status: "open" } },
      reviewEvery: { from: "P3M", to: "P1Y" },
    }, "acceptance.approved");
    expect(lines.map((l) => [l.field, l.from, l.to])).toEqual([
      ["decidedBy", "none", "API key …a23b0e"],
      ["requestedBy", "none", "ada@example.com"],
      ["reviewEvery", "every 3 months", "every year"],
      ["riskSnapshot", "none", "“Flood”"],
    ]);
    expect([cadence("P1M"), cadence("P6M"), cadence(null)]).toEqual(["every month", "every 6 months", "not set"]);
  });

  it("shows an owner the audit log recorded as an object by its name", () => {
    expect(changeLines({ owner: { from: { userId: null, name: "Ada" }, to: { userId: "usr_1", name: "grace@example.com" } } }))
      .toEqual([{ field: "owner", label: "Owner", secret: false, added: false, from: "Ada", to: "grace@example.com" }]);
  });

  it("leaves a creation's empty members out, and keeps them for an update", () => {
    const changes: AuditEntry["changes"] = {
      title: { from: null, to: "Flood" },
      description: { from: null, to: "" },
      metadata: { from: null, to: {} },
      tags: { from: null, to: [] },
      owner: { from: null, to: null },
      likelihood: { from: null, to: 0 },
      apiKey: "changed",
    };
    expect(changeLines(changes, "risk.created").map((l) => `${l.field} ${l.from} → ${l.to}`)).toEqual([
      "apiKey  → ", "likelihood none → 0", "title none → Flood",
    ]);
    expect(changeLines(changes, "risk.updated").map((l) => l.field)).toEqual([
      "apiKey", "description", "likelihood", "metadata", "owner", "tags", "title",
    ]);
    expect(changeLines(changes).map((l) => l.field)).toHaveLength(7);
    // An owner as the audit log records it since 2027-01-15: none is {userId: null, name: ""}.
    const owned: AuditEntry["changes"] = { title: { from: null, to: "Flood" }, owner: { from: null, to: { userId: null, name: "" } } };
    expect(changeLines(owned, "risk.created").map((l) => l.field)).toEqual(["title"]);
    expect(changeLines(owned, "risk.updated").map((l) => `${l.field} ${l.to}`)).toEqual(["owner (empty)", "title Flood"]);
  });
});
