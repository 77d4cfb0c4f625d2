import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Server as NetServer, Socket } from "node:net";

/** Limits on the connections of one HTTP server, and how often they are checked. */
export interface ConnectionGuardOptions {
  /** Most connections open at once; one more is closed at once by Node (and told to `log`). */
  readonly maxConnections: number;
  /**
   * Most bytes of answers written to one connection that its client has not read yet (Node's buffers,
   * pipelined answers waiting their turn included); beyond it the connection is closed. Default 64 MiB.
   */
  readonly maxUnreadBytes?: number;
  /**
   * A connection with answers waiting whose client has read none of them for this long is closed, ms (one
   * that reads, however slowly, is not). Default 60 s.
   */
  readonly stalledMs?: number;
  /** How often the connections are checked, ms. Default 1 s. */
  readonly checkEveryMs?: number;
  readonly log?: (line: string) => void;
  readonly now?: () => number;
}

export const DEFAULT_MAX_UNREAD_BYTES = 64 * 1024 * 1024;
export const DEFAULT_STALLED_MS = 60_000;
/** The shortest time between two "connections refused" lines. */
const DROP_LOG_EVERY_MS = 10_000;

/**
 * Keeps a client that stops reading its answers from filling the process's memory, and caps the
 * connections open at once. Node keeps every byte written to a response until the client reads it, and the
 * SDK's streamable-HTTP transport queues an answer in a web stream when the response is full; an agent that
 * opens connections, asks for large answers and reads none of them would otherwise grow the process without
 * bound. Every `checkEveryMs` each connection with answers in progress is checked: more than
 * `maxUnreadBytes` waiting, or nothing of what waits read for `stalledMs`, and it is closed (its
 * requests end as a closed connection does; the log says why). Returns the function that stops the checks.
 */
export function guardConnections(server: Server, options: ConnectionGuardOptions): () => void {
  const maxUnread = options.maxUnreadBytes ?? DEFAULT_MAX_UNREAD_BYTES;
  const stalledMs = options.stalledMs ?? DEFAULT_STALLED_MS;
  const now = options.now ?? Date.now;
  const log = options.log ?? (() => undefined);
  const uncap = capConnections(
    server,
    options.maxConnections,
    (n) => log(`http: ${n} connection(s) refused: ${options.maxConnections} are open (the most this listener keeps)`),
    now,
  );

  /** The responses in progress, by the connection they are (or will be) written to. */
  const open = new Map<Socket, Set<ServerResponse>>();
  /** Since when each connection has had bytes waiting and its client took none (`written` did not move). */
  const stalledSince = new Map<Socket, { since: number; written: number }>();
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const socket = req.socket;
    let responses = open.get(socket);
    if (responses === undefined) {
      responses = new Set();
      open.set(socket, responses);
      socket.once("close", () => {
        open.delete(socket);
        stalledSince.delete(socket);
      });
    }
    responses.add(res);
    res.once("close", () => responses.delete(res));
  };
  server.on("request", onRequest);

  const check = (): void => {
    const at = now();
    for (const [socket, responses] of open) {
      if (socket.destroyed) continue;
      let waiting = socket.writableLength;
      let full = socket.writableNeedDrain;
      for (const res of responses) {
        // a response's own buffer, and the socket's once it is attached (counted once, above)
        waiting += res.writableLength - (res.socket === socket ? socket.writableLength : 0);
        full ||= res.writableNeedDrain;
      }
      if (waiting > maxUnread) {
        close(socket, `its client has not read ${mib(waiting)} of answers (the most is ${mib(maxUnread)})`);
        continue;
      }
      if (!full) {
        stalledSince.delete(socket);
        continue;
      }
      // a client that reads, however slowly, lets the kernel take more: what waits moves
      const mark = progressMark(socket);
      const stall = stalledSince.get(socket);
      if (stall === undefined || stall.written !== mark) {
        stalledSince.set(socket, { since: at, written: mark });
      } else if (at - stall.since >= stalledMs) {
        close(socket, `its client has read nothing of its answers for ${Math.round((at - stall.since) / 1000)} s`);
      }
    }
  };
  const close = (socket: Socket, why: string): void => {
    log(`http: a connection closed: ${why}`);
    open.delete(socket);
    stalledSince.delete(socket);
    socket.destroy();
  };
  const timer = setInterval(check, options.checkEveryMs ?? 1_000);
  timer.unref();
  return () => {
    clearInterval(timer);
    uncap();
    server.off("request", onRequest);
  };
}

/**
 * Keeps at most `max` connections of `server` open: Node closes one more at once, and `refused` hears of it
 * (at most every 10 s, with how many were refused since). Returns the function that stops the telling.
 */
export function capConnections(
  server: NetServer,
  max: number,
  refused: (count: number) => void,
  now: () => number = Date.now,
): () => void {
  server.maxConnections = max;
  let lastLog = -Infinity;
  let dropped = 0;
  const onDrop = (): void => {
    dropped++;
    if (now() - lastLog < DROP_LOG_EVERY_MS) return;
    lastLog = now();
    refused(dropped);
    dropped = 0;
  };
  server.on("drop", onDrop);
  return () => server.off("drop", onDrop);
}

/**
 * A number that moves whenever the kernel takes bytes of the connection: the bytes handed to libuv, less
 * what libuv still holds of them (its write queue, which shrinks as a large answer drains).
 */
function progressMark(socket: Socket): number {
  const queued = (socket as unknown as { _handle?: { writeQueueSize?: unknown } })._handle?.writeQueueSize;
  return socket.bytesWritten - (typeof queued === "number" ? queued : 0);
}

function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}
