// The TypeScript SDK's flow from its packed tarball, as CommonJS (.ci/packed-sdks).
const { RiskApi, RiskApiError, etag } = require("@riskapi/sdk");
const assert = require("node:assert/strict");

(async () => {
  const client = new RiskApi({ apiKey: process.env.RISKAPI_KEY, baseUrl: process.env.RISKAPI_URL });
  const r = await client.risks.create({ title: "cjs packed flow", likelihood: 2, impact: 2 });
  let found = false;
  for await (const x of client.risks.list()) found ||= x.id === r.id;
  assert.ok(found, "the new risk is listed");
  const u = await client.risks.update(r.id, { likelihood: 5 }, { ifMatch: etag(r) });
  assert.equal(u.version, r.version + 1);
  await assert.rejects(client.risks.update(r.id, { impact: 1 }, { ifMatch: etag(r) }),
    (e) => e instanceof RiskApiError && e.status === 412);
  console.log("cjs flow ok", r.id);
})().catch((e) => { console.error(e); process.exit(1); });
