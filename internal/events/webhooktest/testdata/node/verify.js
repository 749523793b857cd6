// Verifies Standard Webhooks deliveries with the reference TypeScript implementation
// (npm standardwebhooks 1.1.1, vendored in node_modules with its two dependencies,
// MIT licensed), independently of the Go code that signed them.
// stdin: one JSON object per line {"secret","headers":{name:value},"body":"<base64>"}.
// stdout: "verified N". Exits 1 naming the first delivery that does not verify.
"use strict";
const { Webhook } = require("standardwebhooks");
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (c) => (input += c));
process.stdin.on("end", () => {
  let n = 0;
  for (const line of input.split("\n")) {
    if (!line.trim()) continue;
    const d = JSON.parse(line);
    const body = Buffer.from(d.body, "base64").toString("utf8");
    try {
      new Webhook(d.secret).verify(body, d.headers);
    } catch (e) {
      console.error(`delivery ${n} (webhook-id ${d.headers["webhook-id"]}): ${e.message}`);
      process.exit(1);
    }
    n++;
  }
  console.log(`verified ${n}`);
});
