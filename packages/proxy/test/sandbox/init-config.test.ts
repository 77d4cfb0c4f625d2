/**
 * The init's config holds the agent's environment (its own API keys among it) and is never on a command line:
 * `/proc/PID/cmdline` of `unshare` and of the init is readable by every user of the host (`ps`), while an
 * environment is readable by its owner alone. Real namespaces; every process of the host is looked at, in
 * every spelling the config had (plain, base64).
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSandboxed, type SandboxRunOptions } from "../../src/index.js";
import { scratchDir } from "./net-fixture.js";

const SECRET = "sk-agent-own-key-0c4f9e2b7a";

let work: { path: string; remove(): void };
beforeAll(() => void (work = scratchDir("acp-sbx-initcfg-")));
afterAll(() => work.remove());

/** Every argument of every process on the host, each also base64-decoded. */
function commandLines(): { pid: string; args: string[] }[] {
  const out: { pid: string; args: string[] }[] = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      out.push({ pid, args: args.flatMap((a) => [a, Buffer.from(a, "base64").toString("utf8")]) });
    } catch {
      // gone
    }
  }
  return out;
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 50));
}

describe.each(["netns", "userns"] as const)("the init's config under %s", (level) => {
  it("reaches the init on a descriptor: no command line on the host holds the agent's environment", async () => {
    const started = join(work.path, `started-${level}`);
    const done = join(work.path, `done-${level}`);
    const seen = join(work.path, `seen-${level}`);
    const options: SandboxRunOptions = {
      argv: [
        "sh",
        "-c",
        `printf %s "$AGENT_API_KEY" > ${seen}; touch ${started}; while [ ! -e ${done} ]; do sleep 0.05; done`,
      ],
      isolation: level,
      home: join(work.path, "home"),
      env: { PATH: process.env["PATH"], AGENT_API_KEY: SECRET },
      cwd: work.path,
      mcpTarget: { host: "127.0.0.1", port: 9 },
      egress: { allow: [], broker: { ask: () => Promise.resolve({ kind: "expired" }) } },
      audit: { record: () => undefined },
      log: () => undefined,
      signals: { on: () => undefined, off: () => undefined },
    };
    const run = runSandboxed(options);
    let lines: { pid: string; args: string[] }[] = [];
    try {
      await until(() => existsSync(started));
      lines = commandLines();
    } finally {
      // the agent ends before anything is asserted: a failure must not leave it running
      writeFileSync(done, "");
    }
    expect(await run).toEqual({ level, exitCode: 0 });
    // the init is there to be looked at (the scan would notice it)
    expect(lines.some(({ args }) => args.includes("--input-type=module"))).toBe(true);
    const holding = lines.filter(({ args }) => args.some((a) => a.includes(SECRET))).map(({ pid }) => pid);
    expect(holding).toEqual([]);
    // and the agent got its environment all the same
    expect(readFileSync(seen, "utf8")).toBe(SECRET);
  });
});
