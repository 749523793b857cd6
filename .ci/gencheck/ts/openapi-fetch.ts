// What a user of openapi-typescript + openapi-fetch writes: the events union narrows
// on `type`, so each member's `data.object` is a Risk or an Attachment.
import createClient from "openapi-fetch";
import type { components, paths } from "../out/openapi-typescript/schema";

type Event = components["schemas"]["Event"];

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

export async function events(key: string): Promise<string[]> {
  const client = createClient<paths>({ baseUrl: "http://127.0.0.1:8080", headers: { Authorization: `Bearer ${key}` } });
  const { data, error } = await client.GET("/v2/events", { params: { query: { limit: 10, type: "risk.updated" } } });
  if (error) return [error.code];
  return data.data.map(describe);
}
