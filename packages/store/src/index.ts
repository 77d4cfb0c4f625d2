export * from "./sqlite/index.js";
export * from "./rate-limit/index.js";
