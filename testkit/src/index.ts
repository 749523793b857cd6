// @riskapi/testkit: test support shared by the npm workspaces (sdk-ts's
// integration tests, web's end-to-end tests), so that each has one home.

export { buildApi, repoRoot, type Binary } from "./binary.js";
export { freshDatabase, type Database } from "./database.js";
export { firstLine, listenAddr, terminate } from "./process.js";
export { FaultProxy, type Fault, type Proxied } from "./faultproxy.js";
export { startServer, type ServerOptions, type ServerProcess } from "./server.js";
import "./provided.js";
