// The TypeScript SDK's flow from its packed tarball, as ESM (.ci/packed-sdks).
import { RiskApi, RiskApiError, etag } from "@riskapi/sdk";
import { strict as assert } from "node:assert";

const client = new RiskApi({ apiKey: process.env.RISKAPI_KEY, baseUrl: process.env.RISKAPI_URL });
const r = await client.risks.create({ title: "esm packed flow", likelihood: 3, impact: 4 });
let found = false;
for await (const x of client.risks.list()) found ||= x.id === r.id;
assert.ok(found, "the new risk is listed");
const u = await client.risks.update(r.id, { impact: 5 }, { ifMatch: etag(r) });
assert.equal(u.version, r.version + 1);
assert.equal(u.riskScore, 15);
await assert.rejects(client.risks.update(r.id, { impact: 1 }, { ifMatch: etag(r) }),
  (e) => e instanceof RiskApiError && e.status === 412);
console.log("esm flow ok", r.id);
