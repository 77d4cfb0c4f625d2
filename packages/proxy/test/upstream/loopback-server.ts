import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll } from "vitest";

/**
 * A loopback HTTP server for the tests of one `describe`: listening before its tests, closed (open
 * connections too) after them. `url()` is its origin, `http://127.0.0.1:PORT`.
 */
export function useLoopbackServer(handler: RequestListener): { url(this: void): string } {
  let server: Server | undefined;
  let url = "";
  beforeAll(async () => {
    server = createServer(handler);
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });
  return { url: () => url };
}
