// The packed SDK's types under tsc --strict: events narrow on `type` (.ci/packed-sdks).
import { RiskApi, type Event } from "@riskapi/sdk";

export function describe(e: Event): string {
  switch (e.type) {
    case "risk.updated":
      return `${e.data.object.title} was ${e.data.previousAttributes?.title ?? "unchanged"}`;
    case "risk.created":
    case "risk.deleted":
      return e.data.object.id;
    case "attachment.created":
    case "attachment.deleted":
      return e.data.object.sha256;
    default:
      // New event types come without a new API version (docs/events.md).
      return e.id;
  }
}

export async function titles(client: RiskApi): Promise<string[]> {
  const out: string[] = [];
  for await (const e of client.events.list()) out.push(describe(e));
  return out;
}
