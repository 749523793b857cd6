// What a user of orval's fetch client writes: the events union narrows on `type`.
import type { Event } from "../out/orval/api";
import { v2ListEvents } from "../out/orval/api";

export function describe(e: Event): string {
  switch (e.type) {
    case "risk.updated":
      return `${e.data.object.id} ${e.data.object.title} was ${e.data.previousAttributes?.title ?? "unchanged"}`;
    case "risk.created":
    case "risk.deleted":
      return e.data.object.riskScore === null ? e.data.object.id : `${e.data.object.id} ${e.data.object.riskScore}`;
    case "attachment.created":
    case "attachment.deleted":
      return `${e.data.object.riskId} ${e.data.object.sha256}`;
    default:
      // New event types are added without a new API version (docs/events.md), so a
      // switch over them keeps a default.
      return e.id;
  }
}

export async function events(): Promise<string[]> {
  const res = await v2ListEvents({ limit: 10 });
  return res.status === 200 ? res.data.data.map(describe) : [res.data.code];
}
