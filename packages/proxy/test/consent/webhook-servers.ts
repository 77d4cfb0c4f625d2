import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { signWebhookBody } from "../../src/consent/index.js";

/** One POST the receiver got. */
export interface ReceivedPost {
  readonly headers: IncomingMessage["headers"];
  readonly body: string;
}

/** Starts a loopback HTTP server; resolves with its base URL. */
export async function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A webhook receiver that records every POST and answers with the next scripted status (default 200). */
export async function startReceiver(
  statuses: number[] = [],
): Promise<{ url: string; posts: ReceivedPost[]; close: () => Promise<void> }> {
  const posts: ReceivedPost[] = [];
  const server = await listen((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    req.on("end", () => {
      posts.push({ headers: req.headers, body });
      res.writeHead(statuses.shift() ?? 200).end();
    });
  });
  return { ...server, posts };
}

/** POSTs a callback body signed with `secret` (or with the given headers) and returns the status. */
export async function postCallback(
  url: string,
  body: string,
  options: { secret: string; now: Date; signature?: string; timestamp?: string },
): Promise<number> {
  const timestamp = options.timestamp ?? String(Math.floor(options.now.getTime() / 1000));
  const signature = options.signature ?? signWebhookBody(options.secret, "callback", timestamp, body);
  const response = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-ACP-Timestamp": timestamp, "X-ACP-Signature": signature },
    body,
  });
  await response.text();
  return response.status;
}
