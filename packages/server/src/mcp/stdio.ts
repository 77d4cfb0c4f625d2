/** The tool over stdio (`acp serve --stdio`): one MCP server on the process's stdin and stdout. */
import type { Readable, Writable } from "node:stream";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { usePlainReadBuffer } from "@acp/proxy";
import type { DecisionService } from "../service/decision-service.js";
import { createPreToolCheckMcpServer } from "./pre-tool-check-tool.js";

/** Serves until stdin ends; `closed` resolves then. */
export async function serveMcpStdio(
  service: DecisionService,
  streams: { readonly stdin: Readable; readonly stdout: Writable },
  /** Where a check's internal error is told (the client hears only `internal_error`). Default: nowhere. */
  log?: (line: string) => void,
): Promise<{ readonly closed: Promise<void>; close(): Promise<void> }> {
  const server = createPreToolCheckMcpServer(service, undefined, log);
  const transport = new StdioServerTransport(streams.stdin, streams.stdout);
  // a line that is not a message is answered with JSON-RPC's error (-32700, -32600), not left to time out;
  // a line whose JSON holds a key twice is not one (as an HTTP body: JSON.parse would keep the last value)
  usePlainReadBuffer(transport, { answerUnreadable: true, refuseKeyProblems: true });
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
    streams.stdin.once("end", () => void server.close());
  });
  await server.connect(transport);
  return { closed, close: () => server.close() };
}
