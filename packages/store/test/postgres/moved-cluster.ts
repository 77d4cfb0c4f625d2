/**
 * A storage URL whose server is replaced under it, as someone who controls the database host can do: a
 * loopback TCP forwarder (the URL's host and port) in front of the run's PostgreSQL, pointed at a cluster of
 * the test's own (scripts/postgres.sh: another `initdb`, so another system identifier) once a database was
 * dumped there with `pg_dump` and restored with `psql`. Real servers, real connections, loopback only.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import pg from "pg";

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL("../../../../scripts/postgres.sh", import.meta.url));

/** A loopback address that forwards to one PostgreSQL port, then to another. */
export interface SwitchableAddress {
  readonly port: number;
  /** Forwards new connections to `port` on 127.0.0.1 and closes the ones open (a pool reconnects). */
  pointAt(port: number): void;
  close(): Promise<void>;
}

/** Starts a forwarder on a free 127.0.0.1 port, to `target`. */
export async function switchableAddress(target: number): Promise<SwitchableAddress> {
  let to = target;
  const open = new Set<Socket>();
  const server = createServer((down) => {
    const up = connect(to, "127.0.0.1");
    for (const s of [down, up]) {
      open.add(s);
      s.on("error", () => undefined);
      s.on("close", () => {
        open.delete(s);
        down.destroy();
        up.destroy();
      });
    }
    down.pipe(up);
    up.pipe(down);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the forwarder has no port");
  return {
    port: address.port,
    pointAt(port) {
      to = port;
      for (const s of open) s.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A PostgreSQL cluster of the test's own. */
export interface OwnCluster {
  readonly url: string;
  readonly port: number;
  /** Stops it and removes its directory. */
  stop(): Promise<void>;
}

/** Creates and starts another cluster (its own `initdb`: another system identifier) on a free port. */
export async function startOwnCluster(): Promise<OwnCluster> {
  const dir = mkdtempSync(join(tmpdir(), "acp-pg-moved-"));
  try {
    const { stdout } = await run("bash", [SCRIPT, "start", dir], { timeout: 600_000, maxBuffer: 16 << 20 });
    const url = stdout.trim().split("\n").pop() ?? "";
    if (!url.startsWith("postgres://")) throw new Error(`scripts/postgres.sh printed no URL (got \`${url}\`)`);
    return {
      url,
      port: Number(new URL(url).port),
      stop: async () => {
        await run("bash", [SCRIPT, "stop", dir], { timeout: 60_000 }).catch(() => undefined);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** `url` with another port (the same user and database). */
export function atPort(url: string, port: number): string {
  const u = new URL(url);
  u.port = String(port);
  return u.toString();
}

/** Runs SQL statements on `url`, one connection. */
export async function sqlOn(url: string, ...statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const text of statements) await client.query(text);
  } finally {
    await client.end();
  }
}

/**
 * `pg_dump` of the database of `from`, restored with `psql` into a new database of the same name on the
 * cluster of `to` (its URL, any database): what moving a database to another server by a dump does.
 */
export async function restoreDump(from: string, to: string): Promise<void> {
  const name = new URL(from).pathname.slice(1);
  const dir = mkdtempSync(join(tmpdir(), "acp-pg-dump-"));
  try {
    const file = join(dir, "dump.sql");
    await run("pg_dump", ["--no-owner", "--no-privileges", "-f", file, "-d", from], { timeout: 120_000 });
    const target = new URL(to);
    target.pathname = "/postgres";
    await sqlOn(target.toString(), `CREATE DATABASE ${name}`);
    target.pathname = `/${name}`;
    await run("psql", ["-q", "-X", "-v", "ON_ERROR_STOP=1", "-f", file, "-d", target.toString()], {
      timeout: 120_000,
      maxBuffer: 16 << 20,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
