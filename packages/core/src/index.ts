/**
 * @acp/core — the decision core. Pure: no files, sockets, processes or timers.
 * Clock and randomness are passed in, so every decision replays the same.
 */
export * from "./route/index.js";
export * from "./issues/index.js";
export * from "./request/index.js";
export * from "./glob/index.js";
export { editDistance, suggest } from "./suggest/index.js";
export * from "./evaluate/index.js";
export * from "./classify/index.js";
export * from "./policy/index.js";
export * from "./graph/index.js";
export * from "./contract/index.js";
export * from "./pipeline/index.js";
export * from "./canonical-json/index.js";
export * from "./audit/index.js";
export * from "./consent/index.js";
export * from "./proof/index.js";
export * from "./vault-crypto/index.js";
export * from "./credentials/index.js";
export * from "./redaction/index.js";
export * from "./session/index.js";
export * from "./verify/index.js";
export * from "./printable/index.js";
