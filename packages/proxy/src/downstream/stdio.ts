import type { Readable, Writable } from "node:stream";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { usePlainReadBuffer } from "../transport/plain-read-buffer.js";
import { newId, type AcpProxy, type ProxySession } from "../proxy-server/acp-proxy.js";

/**
 * Serves one agent client over stdio (the client spawned `acp proxy`). Resolves once the session is
 * connected; `closed` resolves when the client goes away (stdin ends).
 */
export async function serveStdio(
  proxy: AcpProxy,
  streams: { readonly stdin?: Readable; readonly stdout?: Writable } = {},
): Promise<{ readonly session: ProxySession; readonly closed: Promise<void> }> {
  const stdin = streams.stdin ?? process.stdin;
  const transport = new StdioServerTransport(stdin, streams.stdout ?? process.stdout);
  usePlainReadBuffer(transport, { answerUnreadable: true });
  const session = await proxy.connect(transport, newId("stdio"));
  const closed = new Promise<void>((resolve) => {
    const previous = session.server.onclose;
    session.server.onclose = () => {
      previous?.();
      resolve();
    };
    // the SDK's stdio server transport does not notice the end of stdin by itself
    stdin.once("end", () => void session.server.close());
    stdin.once("close", () => void session.server.close());
  });
  return { session, closed };
}
