// What a user of @hey-api/openapi-ts writes: the events union narrows on `type`.
import type { Event } from "../out/hey-api/types.gen";
import { v2ListEvents } from "../out/hey-api/sdk.gen";

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
  const { data, error } = await v2ListEvents({ query: { limit: 10 } });
  if (error) return [error.code];
  return (data?.data ?? []).map(describe);
}
