import { request } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ClaimServer } from "@acp/claim";
import { serveClaim, type ClaimServeFlags } from "../src/commands/claim.js";
import type { CliContext } from "../src/context.js";

let server: ClaimServer | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Serves in-process in a fresh home; the log lines written to stderr. */
async function serve(flags: ClaimServeFlags): Promise<{ port: number; log: () => string }> {
  const home = mkdtempSync(join(tmpdir(), "acp-claim-proxy-"));
  dirs.push(home);
  let err = "";
  const ctx = {
    exitCode: 0,
    io: {
      stdout: { write: () => true },
      stderr: { write: (s: string) => (err += s) },
      readStdin: () => Promise.resolve(""),
      stdinIsTTY: false,
      env: { ACP_HOME: home, HOME: home },
      cwd: home,
      now: () => new Date(),
    },
  } as unknown as CliContext;
  const started = await serveClaim(ctx, { port: "0", difficulty: "8", db: join(home, "state.db"), ...flags });
  server = started.server;
  return { port: started.port, log: () => err };
}

const get = (port: number, forwardedFor: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const r = request(
      {
        host: "127.0.0.1",
        port,
        path: "/.well-known/agent-access",
        headers: { host: `api.localhost:${port}`, "x-forwarded-for": forwardedFor },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    r.on("error", reject);
    r.end();
  });

describe("acp claim serve --trust-proxy", () => {
  it("names the proxy in front: its requests are logged and limited as the client it forwards", async () => {
    const s = await serve({ trustProxy: "127.0.0.1, ::1" });
    expect(await get(s.port, "203.0.113.9")).toBe(200);
    expect(s.log()).toContain('"ip_range":"203.0.113.0/24"');
  });

  it("without it X-Forwarded-For is ignored; an address that is none is a usage error", async () => {
    const s = await serve({});
    expect(await get(s.port, "203.0.113.9")).toBe(200);
    expect(s.log()).toContain('"ip_range":"127.0.0.0/24"');
    expect(s.log()).not.toContain("203.0.113");
    await server?.close();
    server = undefined;
    const err = await serve({ trustProxy: "proxy.internal" }).catch((e: Error & { exitCode?: number }) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain("--trust-proxy: `proxy.internal` is not an IP address");
    expect((err as { exitCode?: number }).exitCode).toBe(2);
  });
});
