import { randomBytes } from "node:crypto";

/**
 * A short random id with a prefix (`guard_3f9a…`, `call_…`): 8 random bytes as hex, the form of the
 * proxy's ids (its `newId` lives with the MCP server, which the guard does not load).
 */
export const newId = (prefix: string): string => `${prefix}_${randomBytes(8).toString("hex")}`;
