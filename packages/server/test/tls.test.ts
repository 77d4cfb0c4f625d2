/** `acp serve` over TLS: the console cookie is `Secure` and browsers are told to keep to HTTPS. */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LINK_TTL_MS, openEmbeddedServer, type EmbeddedServer } from "@acp/server";
import { pipelineFor, testKeys } from "./harness.js";

let home: string;
let server: EmbeddedServer;
let url: string;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "acp-serve-tls-"));
  const made = spawnSync("openssl", [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    join(home, "key.pem"),
    "-out",
    join(home, "cert.pem"),
    "-subj",
    "/CN=localhost",
    "-days",
    "1",
  ]);
  if (made.status !== 0) throw new Error(`openssl: ${made.stderr.toString()}`);
  server = await openEmbeddedServer({
    statePath: join(home, "state.db"),
    auditPath: join(home, "audit.jsonl"),
    pipeline: pipelineFor(),
    simulationPipeline: pipelineFor(),
    keys: testKeys(),
    clock: () => new Date(),
    loopbackOnly: true,
    tls: { key: readFileSync(join(home, "key.pem")), cert: readFileSync(join(home, "cert.pem")) },
  });
  url = await server.server.listen({ port: 0, host: "127.0.0.1" });
});
afterAll(async () => {
  await server.close();
  rmSync(home, { recursive: true, force: true });
});

/** One HTTPS request to the self-signed service. */
function httpsCall(
  method: string,
  path: string,
  body?: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      {
        method,
        rejectUnauthorized: false,
        headers: body === undefined ? {} : { "content-type": "application/x-www-form-urlencoded" },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("acp serve over TLS", () => {
  it("signs in with a Secure, HttpOnly, SameSite=Strict cookie and sends Strict-Transport-Security", async () => {
    expect(url.startsWith("https://")).toBe(true);
    const token = await server.stores.consoleAuth.createLink(Date.now(), LINK_TTL_MS);
    const signIn = await httpsCall("POST", "/console/login", new URLSearchParams({ token }).toString());
    expect(signIn.status).toBe(303);
    const cookie = String(signIn.headers["set-cookie"]);
    expect(cookie).toMatch(/; Secure/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(signIn.headers["strict-transport-security"]).toBe("max-age=31536000");
    const health = await httpsCall("GET", "/healthz");
    expect(health.headers["strict-transport-security"]).toBe("max-age=31536000");
  });
});
