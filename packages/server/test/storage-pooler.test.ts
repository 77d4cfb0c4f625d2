/**
 * `acp serve` through PgBouncer (the usual pooler in front of PostgreSQL): PgBouncer answers the driver's
 * startup message, which carries `statement_timeout` and `idle_in_transaction_session_timeout`, with
 * `unsupported startup parameter: statement_timeout` unless told to ignore them. The node said "cannot reach
 * PostgreSQL … check that the server runs and the host, port, user, password and database are right",
 * none of which was wrong. Now the line names the pooler setting and the role settings that replace them.
 * The stand-in below answers the startup message as PgBouncer 1.18 does, on loopback.
 */
import { createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresStore } from "@acp/store";
import { explainStorageError } from "@acp/server";

/** A PostgreSQL ErrorResponse ('E') with the fields PgBouncer sends for a refused startup parameter. */
function errorResponse(message: string): Buffer {
  const fields = Buffer.concat(
    [
      ["S", "FATAL"],
      ["V", "FATAL"],
      ["C", "08P01"],
      ["M", message],
    ].map(([type, value]) => Buffer.from(`${type}${value}\0`, "utf8")),
  );
  const body = Buffer.concat([fields, Buffer.from([0])]);
  const head = Buffer.alloc(5);
  head.write("E", 0, "ascii");
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

let server: Server;
let port = 0;
const startups: string[] = [];
beforeAll(async () => {
  server = createServer((socket) => {
    socket.once("data", (startup) => {
      startups.push(startup.toString("latin1"));
      // the first parameter PgBouncer does not know, as it names it
      const refused = startup.includes("statement_timeout") ? "statement_timeout" : "application_name";
      socket.end(errorResponse(`unsupported startup parameter: ${refused}`));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("a storage URL that reaches PgBouncer without ignore_startup_parameters", () => {
  it("is explained as the pooler refusing the session settings, naming the fix, not as a server that is down", async () => {
    const url = `postgres://acp:secret@127.0.0.1:${port}/acp`;
    const refused = await openPostgresStore(url, { connectTimeoutMs: 5000 }).then(
      () => null,
      (err: unknown) => err,
    );
    expect(refused).toMatchObject({ code: "postgres_unavailable" });
    expect(startups.some((s) => s.includes("statement_timeout"))).toBe(true); // what PgBouncer refuses
    const line = explainStorageError(refused, { url, source: "--storage-url" });
    expect(line).toContain(`cannot connect to postgres://acp:***@127.0.0.1:${port}/acp`);
    expect(line).toContain("unsupported startup parameter: statement_timeout");
    expect(line).toContain(
      "a connection pooler (PgBouncer) refuses the session settings acp sends; add `ignore_startup_parameters = statement_timeout, idle_in_transaction_session_timeout`",
    );
    expect(line).toContain("ALTER ROLE … SET statement_timeout = '30s'");
    expect(line).not.toContain("check that the server runs");
    expect(line).not.toContain("secret");
  });
});
