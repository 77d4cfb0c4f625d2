import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";

/** A response as the client sees it. */
export interface ClientResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** Sends one HTTP request. */
export type Transport = (
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: string,
) => Promise<ClientResponse>;

/**
 * The default transport: node:http(s). A host under `.localhost` is connected to on 127.0.0.1 (RFC 6761:
 * `*.localhost` is loopback) while the Host header keeps the name, so the default provider works with no DNS.
 * `connectTo` forces an address for every host (tests, split-horizon setups).
 */
export function nodeTransport(connectTo?: string): Transport {
  return (method, url, headers, body) =>
    new Promise((resolve, reject) => {
      const u = new URL(url);
      const loop = u.hostname === "localhost" || u.hostname.endsWith(".localhost");
      const send = u.protocol === "https:" ? httpsRequest : httpRequest;
      const req = send(
        {
          method,
          hostname: connectTo ?? (loop ? "127.0.0.1" : u.hostname),
          port: u.port === "" ? undefined : Number(u.port),
          path: `${u.pathname}${u.search}`,
          headers: {
            ...headers,
            host: u.host,
            ...(body === undefined ? {} : { "content-length": String(Buffer.byteLength(body)) }),
          },
          servername: u.hostname,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks).toString("utf8"),
            }),
          );
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.setTimeout(60_000, () => req.destroy(new Error(`request to \`${u.host}\` timed out`)));
      req.end(body);
    });
}
