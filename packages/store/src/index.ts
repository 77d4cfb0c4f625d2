export * from "./sqlite/index.js";
export * from "./rate-limit/index.js";
export * from "./nonce/index.js";
export * from "./home/index.js";
export * from "./pending/index.js";
export * from "./graph-review/index.js";
export * from "./audit/index.js";
export * from "./postgres/index.js";
