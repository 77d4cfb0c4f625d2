/**
 * The outside end of a bridge: a Unix socket (reachable from inside the sandbox through the mount
 * namespace, where no network route leads out) whose connections are forwarded to a TCP address on the
 * host's loopback, or handed to a server directly.
 */
import { connect, createServer, type Server, type Socket } from "node:net";
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

/** Closes a server and destroys its open connections. */
export function closeServer(server: Server, open: Set<Socket>): Promise<void> {
  for (const socket of open) socket.destroy();
  return new Promise((resolve) => server.close(() => resolve()));
}
