// orval: the fetch client, one file (docs/openapi.yaml).
export default {
  riskapi: {
    input: { target: process.env.SPEC },
    output: { target: "out/orval/api.ts", client: "fetch", mode: "single" },
  },
};
