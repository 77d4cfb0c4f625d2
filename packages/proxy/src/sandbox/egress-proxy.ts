/**
 * The sandbox's egress proxy: HTTP CONNECT (and plain `http://` forwarding) for the agent's legitimate
 * egress. Each destination is decided by the `EgressDecider`; inside a tunnel, the TLS server name the agent
 * sends must be the host decided (`screenTunnel`), and a tunnel that carries plain HTTP is served request by
 * request with the host decided as each one's `Host`; each connection is audited with host, port, server name
 * and bytes up/down, never its contents.
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { Duplex } from "node:stream";
import type { AuditSink } from "../gate/types.js";
import type { EgressDecider } from "./egress-decision.js";
import { capConnections } from "../downstream/connection-guard.js";
import { bindUnixSocket, closeServer } from "./unix-bridge.js";
import { DEFAULT_CLIENT_HELLO_TIMEOUT_MS, DEFAULT_TLS_PORTS, screenTunnel } from "./tls-screen.js";

/** A running egress proxy. */
export interface EgressProxy {
  /** `http://127.0.0.1:PORT` when listening on TCP; the socket path when on a Unix socket. */
  readonly address: string;
  close(): Promise<void>;
}

/** Where and how the proxy runs. */
export interface EgressProxyOptions {
  readonly decider: EgressDecider;
  readonly audit: AuditSink;
  /** A Unix socket path (namespaced sandboxes), or TCP on 127.0.0.1 with a free port (none). */
  readonly listen: { readonly path: string } | { readonly tcp: true };
  /** Connections (tunnels and plain requests) open at once; one more is closed unanswered. Default 512. */
  readonly maxConnections?: number;
  readonly log?: (line: string) => void;
  /** Ports whose tunnels must carry TLS with the CONNECT host as server name (SNI). Default 443. */
  readonly tlsPorts?: readonly number[];
  /** How long the agent has to send its complete ClientHello in a tunnel. Default 10 s. */
  readonly clientHelloTimeoutMs?: number;
}

/** Connections the egress proxy keeps open at once, by default. */
export const DEFAULT_EGRESS_MAX_CONNECTIONS = 512;

/**
 * Where a CONNECT or absolute-form request wants to go; null when it names no host and port to connect to.
 * Port 0 is refused: nothing listens there, and an HTTP client given it connects to port 80 instead, so the
 * decision would not be about the connection made.
 */
function target(req: IncomingMessage): { host: string; port: number } | null {
  const raw = req.url ?? "";
  try {
    const connectTo = req.method === "CONNECT";
    const url = new URL(connectTo ? `http://${raw}` : raw);
    if (url.protocol !== "http:" || url.hostname === "") return null;
    // URL parsing leaves out the scheme's default port: `CONNECT HOST:80` names 80, `CONNECT HOST` none
    const written = url.port !== "" || !connectTo ? url.port : new URL(`https://${raw}`).port;
    if (connectTo && written === "") return null;
    const port = written === "" ? 80 : Number(written);
    return port >= 1 && port <= 65535 ? { host: url.hostname, port } : null;
  } catch {
    return null;
  }
}

/** Starts the egress proxy. */
export async function startEgressProxy(options: EgressProxyOptions): Promise<EgressProxy> {
  const open = new Set<Socket>();
  const server = createServer((req, res) => void forwardPlain(options, req, res));
  server.on("connection", (socket: Socket) => {
    open.add(socket);
    socket.once("close", () => open.delete(socket));
  });
  server.on("connect", (req: IncomingMessage, client: Duplex, head: Buffer) => void tunnel(options, req, client, head));
  const max = options.maxConnections ?? DEFAULT_EGRESS_MAX_CONNECTIONS;
  capConnections(server, max, (n) => options.log?.(`egress: ${n} connection(s) refused: ${max} are open at once`));
  if ("path" in options.listen) {
    await bindUnixSocket(server, options.listen.path);
    return { address: options.listen.path, close: () => closeServer(server, open) };
  }
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return { address: `http://127.0.0.1:${port}`, close: () => closeServer(server, open) };
}

/** Records an audit event; a failed write is logged (the connection is already decided). */
function record(options: EgressProxyOptions, type: string, fields: Record<string, unknown>): Promise<void> {
  return Promise.resolve()
    .then(() => options.audit.record(type, fields))
    .catch((err: unknown) => options.log?.(`audit: cannot record ${type}: ${String(err)}`));
}

async function admit(
  options: EgressProxyOptions,
  req: IncomingMessage,
  signal: AbortSignal,
): Promise<{ host: string; port: number; address: string; by: string } | { refused: string; status: number }> {
  const dest = target(req);
  if (dest === null) return { refused: "only CONNECT HOST:PORT and absolute http:// requests", status: 400 };
  const verdict = await options.decider.decide(dest.host, dest.port, signal);
  if (!verdict.allowed) {
    await record(options, "sandbox_egress_refused", { host: dest.host, port: dest.port, reason: verdict.reason });
    options.log?.(`egress refused: ${verdict.reason}`);
    return { refused: verdict.reason, status: 403 };
  }
  return { ...dest, address: verdict.address, by: verdict.by };
}

async function tunnel(options: EgressProxyOptions, req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
  const abort = new AbortController();
  client.once("close", () => abort.abort());
  client.on("error", () => undefined);
  const admitted = await admit(options, req, abort.signal);
  if ("refused" in admitted) {
    client.end(`HTTP/1.1 ${admitted.status} Refused\r\ncontent-type: text/plain\r\n\r\nacp: ${admitted.refused}\n`);
    return;
  }
  const upstream = connect(admitted.port, admitted.address);
  let up = 0;
  let down = 0;
  let connected = false;
  let refused = false;
  let serverName: string | null = null;
  // plain HTTP in the tunnel: served request by request (`serveHttpInTunnel`), this connection closed unused
  let handedOver = false;
  upstream.once("connect", () => {
    connected = true;
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    // the server's bytes go back at once (a server that speaks first); the agent's wait for the screen
    upstream.on("data", (chunk: Buffer) => (down += chunk.length));
    upstream.pipe(client);
    void screenTunnel(client, head, {
      host: admitted.host,
      port: admitted.port,
      tlsPorts: options.tlsPorts ?? DEFAULT_TLS_PORTS,
      timeoutMs: options.clientHelloTimeoutMs ?? DEFAULT_CLIENT_HELLO_TIMEOUT_MS,
      serverSpoke: () => down > 0,
    }).then(async (verdict) => {
      if (!verdict.ok) {
        refused = true;
        upstream.destroy();
        client.destroy();
        if (verdict.closed === true) return;
        await record(options, "sandbox_egress_refused", {
          host: admitted.host,
          port: admitted.port,
          ...(verdict.serverName !== undefined ? { server_name: verdict.serverName } : {}),
          reason: verdict.reason,
        });
        options.log?.(`egress refused: ${verdict.reason}`);
        return;
      }
      if (verdict.http === true) {
        handedOver = true;
        upstream.unpipe(client);
        upstream.destroy();
        serveHttpInTunnel(options, admitted, client, verdict.bytes);
        return;
      }
      serverName = verdict.serverName;
      up = verdict.bytes.length;
      if (verdict.bytes.length > 0) upstream.write(verdict.bytes);
      client.on("data", (chunk: Buffer) => (up += chunk.length));
      client.pipe(upstream);
    });
  });
  upstream.once("error", (err: NodeJS.ErrnoException) => {
    if (handedOver) return;
    if (!connected) client.end(`HTTP/1.1 502 Bad Gateway\r\n\r\nacp: ${err.code ?? "error"}\n`);
    else client.destroy();
  });
  upstream.once("close", () => {
    if (handedOver) return;
    client.destroy();
    if (refused) return;
    void record(options, "sandbox_egress", {
      host: admitted.host,
      port: admitted.port,
      by: admitted.by,
      ...(serverName !== null ? { server_name: serverName } : {}),
      bytes_up: up,
      bytes_down: down,
    });
  });
}

async function forwardPlain(options: EgressProxyOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const abort = new AbortController();
  res.once("close", () => abort.abort());
  const admitted = await admit(options, req, abort.signal);
  if ("refused" in admitted) {
    res.writeHead(admitted.status, { "content-type": "text/plain" }).end(`acp: ${admitted.refused}\n`);
    return;
  }
  const url = new URL(req.url ?? "");
  sendPlain(options, admitted, url.host, `${url.pathname}${url.search}`, req, res, true);
}

/**
 * Serves a tunnel whose first bytes are a plain HTTP request (`screenTunnel`'s `http`): a front routes each
 * request by its own `Host`, so each one, the later ones of the connection too, is sent on like a plain
 * `http://` request with the host the tunnel was let through for, whatever `Host` or absolute URL it names.
 * An upgrade (`Upgrade: websocket`) is not carried, as with plain requests; a request Node's HTTP parser
 * refuses is answered 400 and the tunnel closed.
 */
function serveHttpInTunnel(options: EgressProxyOptions, admitted: Admitted, client: Duplex, first: Buffer): void {
  const host = admitted.port === 80 ? admitted.host : `${admitted.host}:${admitted.port}`;
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://tunnel.invalid");
    sendPlain(options, admitted, host, `${url.pathname}${url.search}`, req, res, false);
  });
  // recorded once, when the tunnel closes, as every tunnel is: the bytes the agent sent and received
  const bytes = { up: first.length, down: 0 };
  client.once("close", () => {
    void record(options, "sandbox_egress", {
      host: admitted.host,
      port: admitted.port,
      by: admitted.by,
      bytes_up: bytes.up,
      bytes_down: bytes.down,
    });
  });
  server.emit("connection", relay(client, first, bytes));
}

/**
 * A stream for Node's HTTP server over the tunnel's client side: `first` (the bytes the screen read) and then
 * everything the client sends, in order; what the server writes goes to the client.
 */
function relay(client: Duplex, first: Buffer, bytes: { up: number; down: number }): Duplex {
  const stream = new Duplex({
    read: () => void client.resume(),
    write: (chunk: Buffer, _encoding, done) => {
      bytes.down += chunk.length;
      client.write(chunk, done);
    },
    final: (done) => void client.end(() => done()),
    destroy: (err, done) => {
      client.destroy();
      done(err);
    },
  });
  stream.push(first);
  client.on("data", (chunk: Buffer) => {
    bytes.up += chunk.length;
    if (!stream.push(chunk)) client.pause();
  });
  client.once("end", () => stream.push(null));
  client.once("close", () => stream.destroy());
  client.on("error", () => undefined);
  return stream;
}

type Admitted = { host: string; port: number; address: string; by: string };

/**
 * Sends one plain request to the admitted destination with `host` as its `Host`, and its answer back;
 * `recorded`: audited on its own (a request to the proxy), or not (one of a tunnel's, audited with it).
 */
function sendPlain(
  options: EgressProxyOptions,
  admitted: Admitted,
  host: string,
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
  recorded: boolean,
): void {
  // the host decided is the request line's (or the tunnel's): the agent's own Host header (another site
  // behind the same address, a virtual host never decided) is replaced, as a proxy must (RFC 9112 §3.2.2)
  const headers: Record<string, string | string[] | undefined> = {
    ...req.headers,
    host,
    connection: "close",
  };
  delete headers["proxy-connection"];
  delete headers["proxy-authorization"];
  let up = 0;
  let down = 0;
  const upstream = httpRequest(
    { host: admitted.address, port: admitted.port, method: req.method, path, headers },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.on("data", (chunk: Buffer) => (down += chunk.length));
      answer.pipe(res);
    },
  );
  req.on("data", (chunk: Buffer) => (up += chunk.length));
  req.pipe(upstream);
  upstream.once("error", (err: NodeJS.ErrnoException) => {
    if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" }).end(`acp: ${err.code ?? "error"}\n`);
    else res.destroy();
  });
  res.once("close", () => {
    if (!recorded) return;
    void record(options, "sandbox_egress", {
      host: admitted.host,
      port: admitted.port,
      by: admitted.by,
      bytes_up: up,
      bytes_down: down,
    });
  });
}
