/**
 * The bridge sockets are the agent's only way to ACP: only their owner may connect to them, and a
 * `--bridge-dir` someone else could write (and so swap the sockets in) is refused before anything starts.
 */
import { chmodSync, existsSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listenUnixBridge, runSandboxed } from "../../src/index.js";
import { quietRun, scratchDir } from "./net-fixture.js";

let work: { path: string; remove(): void };
beforeAll(() => void (work = scratchDir("acp-sbx-bridge-")));
afterAll(() => work?.remove());

describe("bridge sockets", () => {
  it("are mode 0600 whatever the umask: nobody but their owner (and root) can connect", async () => {
    const dir = join(work.path, "private");
    mkdirSync(dir, { mode: 0o700 });
    const bridge = await listenUnixBridge(join(dir, "mcp.sock"), { host: "127.0.0.1", port: 9 });
    try {
      expect(statSync(join(dir, "mcp.sock")).mode & 0o777).toBe(0o600);
    } finally {
      await bridge.close();
    }
  });

  it("refuses a --bridge-dir that its group or others can write, naming its mode", async () => {
    const dir = join(work.path, "shared");
    mkdirSync(dir);
    chmodSync(dir, 0o777);
    const run = runSandboxed(
      quietRun({
        argv: [process.execPath, "-e", "require('fs').writeFileSync('ran', '')"],
        isolation: "none",
        home: join(work.path, "home"),
        env: { PATH: process.env["PATH"] },
        cwd: work.path,
        bridgeDir: dir,
      }),
    );
    await expect(run).rejects.toMatchObject({
      code: "sandbox_bridge_failed",
      message: `the bridge directory \`${dir}\` is writable by its group or others (mode 0777): another user could replace the bridge sockets and stand in for ACP (pass a --bridge-dir only you can write (\`chmod 700\` it), or leave --bridge-dir out for a fresh private one)`,
    });
    expect(statSync(work.path).isDirectory()).toBe(true);
    expect(() => statSync(join(work.path, "ran"))).toThrow();
  });

  it("refuses a --bridge-dir that holds ACP's home: bound into the sandbox whole, it would show the home", async () => {
    // (`--bridge-dir ~` with the home at ~/.acp): the agent read ~/.acp/vault.json at /run/acp/.acp
    const dir = join(work.path, "holder");
    mkdirSync(join(dir, "acp"), { recursive: true, mode: 0o700 });
    const run = runSandboxed(
      quietRun({
        argv: [process.execPath, "-e", "require('fs').writeFileSync('ran', '')"],
        isolation: "netns",
        home: join(dir, "acp"),
        env: { PATH: process.env["PATH"] },
        cwd: work.path,
        bridgeDir: dir,
      }),
    );
    await expect(run).rejects.toMatchObject({
      code: "sandbox_setup_failed",
      message: expect.stringContaining(
        `the bridge directory \`${dir}\` holds ACP's home \`${join(dir, "acp")}\`: bound into the sandbox, it would show the home to the agent`,
      ) as unknown,
    });
    expect(existsSync(join(work.path, "ran"))).toBe(false);
  });
});
