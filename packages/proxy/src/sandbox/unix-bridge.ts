/**
 * The outside end of a bridge: a Unix socket (reachable from inside the sandbox through the mount
 * namespace, where no network route leads out) whose connections are forwarded to a TCP address on the
 * host's loopback, or handed to a server directly. The MCP bridge forwards HTTP requests instead, each with
 * the listener's bearer token (`listenMcpBridge`): the listener's port on the host's loopback is open to every
 * user and program of the host, the token only to the bridge.
 */
import { createServer as createHttpServer, request as httpRequest } from "node:http";
import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { chmodSync, unlinkSync } from "node:fs";
import { bridgeFailed, bridgeInUse } from "./errors.js";

/** A bound bridge socket. */
export interface UnixBridge {
  readonly path: string;
  close(): Promise<void>;
}

/** Whether something answers on the Unix socket `path`. */
function isAnswering(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(path);
    probe.once("connect", () => {
      probe.destroy();
      resolve(true);
    });
    probe.once("error", () => resolve(false));
  });
}

/**
 * Binds `server` to the Unix socket `path`, then makes it mode 0600 (whatever the umask: connecting needs
 * write permission, so only its owner and root can). A stale socket file (nobody answering) is replaced; a
 * live one is `sandbox_bridge_in_use`.
 */
export async function bindUnixSocket(server: Server, path: string): Promise<void> {
  const listen = (): Promise<NodeJS.ErrnoException | null> =>
    new Promise((resolve) => {
      const onError = (err: NodeJS.ErrnoException): void => resolve(err);
      server.once("error", onError);
      server.listen({ path, readableAll: false, writableAll: false }, () => {
        server.off("error", onError);
        resolve(null);
      });
    });
  let err = await listen();
  if (err?.code === "EADDRINUSE") {
    if (await isAnswering(path)) throw bridgeInUse(path);
    try {
      unlinkSync(path);
    } catch {
      // gone already: the retry below reports whatever is wrong
    }
    err = await listen();
  }
  if (err !== null) throw err.code === "EADDRINUSE" ? bridgeInUse(path) : bridgeFailed(path, err.code ?? err.message);
  try {
    chmodSync(path, 0o600);
  } catch (e) {
    await new Promise((resolve) => server.close(resolve));
    throw bridgeFailed(path, `cannot make it mode 0600: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
}

/** Binds `path` and forwards each connection to `target` (a TCP address on the host). */
export async function listenUnixBridge(
  path: string,
  target: { readonly host: string; readonly port: number },
): Promise<UnixBridge> {
  const open = new Set<Socket>();
  const server = createServer((inside) => {
    const outside = connect(target.port, target.host);
    open.add(inside);
    inside.once("close", () => open.delete(inside));
    inside.pipe(outside).pipe(inside);
    inside.on("error", () => outside.destroy());
    outside.on("error", () => inside.destroy());
  });
  await bindUnixSocket(server, path);
  return {
    path,
    close: () => closeServer(server, open),
  };
}

/** Where the MCP bridge sends requests: the proxy's HTTP listener and the bearer token it asks for. */
export interface McpBridgeTarget {
  readonly host: string;
  readonly port: number;
  readonly token: string;
}

/**
 * Serves HTTP on `listen` (a Unix socket path, or TCP on 127.0.0.1 with a free port) and sends each request on
 * to `target` with `Authorization: Bearer <token>` (whatever the client sent there is replaced), the answer
 * streamed back as it comes (MCP's event streams). `port` is set when listening on TCP.
 */
export async function listenMcpBridge(
  listen: { readonly path: string } | { readonly tcp: true },
  target: McpBridgeTarget,
): Promise<UnixBridge & { readonly port?: number }> {
  const open = new Set<Socket>();
  const server = createHttpServer((req, res) => {
    const upstream = httpRequest(
      {
        host: target.host,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, authorization: `Bearer ${target.token}` },
        agent: false,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(upstream);
    upstream.on("error", () => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" }).end("acp: the MCP proxy is gone\n");
      else res.destroy();
    });
    // the client went away (an event stream closed): so does the request to the proxy
    res.once("close", () => upstream.destroy());
  });
  server.on("connection", (socket: Socket) => {
    open.add(socket);
    socket.once("close", () => open.delete(socket));
  });
  if ("path" in listen) {
    await bindUnixSocket(server, listen.path);
    return { path: listen.path, close: () => closeServer(server, open) };
  }
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return { path: `127.0.0.1:${port}`, port, close: () => closeServer(server, open) };
}

/** Closes a server and destroys its open connections. */
export function closeServer(server: Server, open: Set<Socket>): Promise<void> {
  for (const socket of open) socket.destroy();
  return new Promise((resolve) => server.close(() => resolve()));
}
