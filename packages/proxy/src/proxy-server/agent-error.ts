import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { printable } from "@acp/core";
import { withoutSmuggledString, withoutSmuggledText } from "./smuggled-text.js";

/**
 * A JSON-RPC error for the agent's client whose message is the text alone. The SDK's `McpError` puts
 * `MCP error <code>: ` in front of its message, the SDK server sends that message as it is, and the SDK
 * client puts the prefix in front once more: thrown as is, the agent would read the code twice
 * (`MCP error -32600: MCP error -32600: refused …`). Still an `McpError` (code and data kept), so every
 * check for one holds.
 */
export function agentError(code: number, text: string, data?: unknown): McpError {
  const error = new McpError(code, text, data);
  error.message = text;
  return error;
}

/**
 * An upstream's JSON-RPC error as the agent should get it: in the upstream's own words. The SDK client
 * that received it put `MCP error <code>: ` in front of the message; that prefix is taken off again, so
 * the agent's client, which adds its own, shows the code once. Tag characters and bidirectional controls
 * are taken out of its message and data (`withoutSmuggledText`).
 */
export function relayedError(error: McpError): McpError {
  const prefix = `MCP error ${error.code}: `;
  const words = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
  // tag characters and bidi controls are taken out of its message and data, as out of a result's text
  const message = withoutSmuggledString(words);
  const data: unknown = error.data === undefined ? undefined : withoutSmuggledText({ value: error.data }).result.value;
  if (message === error.message && data === error.data) return error;
  const relayed = agentError(error.code, message, data);
  relayed.name = error.name;
  if (message !== words || data !== error.data) smuggling.add(relayed);
  return relayed;
}

/** The errors {@link relayedError} made with hidden characters taken out. */
const smuggling = new WeakSet<object>();

/**
 * Whether `err` is an upstream's error that {@link relayedError} relayed with tag characters or bidi
 * controls taken out of its message or data: the session runtime is told so (`hiddenTextRemoved`).
 */
export function hadHiddenText(err: unknown): boolean {
  return typeof err === "object" && err !== null && smuggling.has(err);
}

/**
 * A name or URI the agent sent, as a message of the proxy's quotes it back (`unknown tool \`x\``): cut at
 * 80 characters, every control, bidi or invisible character shown as a `\uXXXX` escape. Raw, a name the
 * proxy serves nothing under (one it refused for such characters) would reach the agent's client and its
 * logs with them.
 */
export function echoed(text: string): string {
  return printable(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}
