/** @acp/proxy — the MCP proxy: both sides of MCP, the consent gate, tool pinning. */
export * from "./gate/index.js";
export * from "./config/index.js";
export * from "./upstream/index.js";
export * from "./aggregate/index.js";
export * from "./pinning/index.js";
export * from "./proxy-server/index.js";
export * from "./downstream/index.js";
export * from "./consent/index.js";
export * from "./sandbox/index.js";
export { findKeyProblem } from "./transport/json-keys.js";
