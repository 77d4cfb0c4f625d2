import { spawn } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { timeLeft } from "@acp/core";
import { tellWatch, watchPending, type PendingWatchEvent } from "../src/commands/pending.js";
import type { CliContext } from "../src/context.js";
import { fixtureHome } from "./home-fixture.js";
import { runCli } from "./run.js";
import { ID_A, ID_B, seedPending, tempHome } from "./pending-fixtures.js";

describe("acp pending", () => {
  it("says so when nothing waits, even without a state.db", async () => {
    const home = fixtureHome(tempHome()).home;
    const out = await runCli(["pending"], { env: { ACP_HOME: home } });
    // where it looked: a person whose MCP client set another ACP_HOME sees why nothing is listed
    expect(out).toMatchObject({ code: 0, stdout: `no pending consent requests in ${join(home, "state.db")}\n` });
    expect(JSON.parse((await runCli(["pending", "--json"], { env: { ACP_HOME: home } })).stdout)).toEqual([]);
  });

  it("with no home at all, says so and what makes one (a proxy without a home keeps nothing here)", async () => {
    const parent = tempHome();
    const home = join(parent, "not-made");
    try {
      const out = await runCli(["pending"], { env: { ACP_HOME: home } });
      expect(out).toMatchObject({
        code: 0,
        stdout: `no pending consent requests: no ACP home at ${home} yet (\`acp init\` makes one; then restart acp proxy in your MCP client)\n`,
      });
      expect(JSON.parse((await runCli(["pending", "--json"], { env: { ACP_HOME: home } })).stdout)).toEqual([]);
      // the directory a proxy run before `acp init` made for pins.json is no home either: it keeps nothing here
      mkdirSync(home, { mode: 0o700 });
      writeFileSync(join(home, "pins.json"), '{ "version": 1, "servers": {} }\n', { mode: 0o600 });
      expect((await runCli(["pending"], { env: { ACP_HOME: home } })).stdout).toBe(
        `no pending consent requests: no ACP home at ${home} yet (\`acp init\` makes one; then restart acp proxy in your MCP client)\n`,
      );
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it("prints a JSON array with id, server, tool, redacted arguments, reasons and expires_at", async () => {
    const home = tempHome();
    seedPending(home, { id: ID_A });
    seedPending(home, { id: ID_B, expiresAt: "2026-01-15T11:59:30Z" });
    const out = await runCli(["pending", "--json"], { env: { ACP_HOME: home } });
    expect(out.code).toBe(0);
    const list = JSON.parse(out.stdout) as Record<string, unknown>[];
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({
      id: ID_A,
      server: "mail",
      tool: "send_email",
      arguments: { to: "bob@example.com", smtp_password: "[redacted]" },
      reasons: [{ code: "rule_matched" }],
      expires_at: "2026-01-15T12:05:00.000Z",
      risk_level: "high",
    });
  });

  it("lists requests for a person, one block each", async () => {
    const home = tempHome();
    seedPending(home, { id: ID_A });
    const out = await runCli(["pending"], { env: { ACP_HOME: home } });
    // the clock of runCli is 12:00: a person reads how long they have left beside the time
    expect(out.stdout).toContain(`${ID_A}  mail/send_email  expires 2026-01-15T12:05:00.000Z (in 5m)\n`);
    expect(out.stdout).toContain("rule `ask-mail` asks before mail");
    expect(out.stdout).toContain("[redacted]");
  });

  it("lists every request across the store's pages; --json is the array printJson wrote whole, to the byte", async () => {
    const home = tempHome();
    try {
      const ids = Array.from({ length: 230 }, (_, i) => `cr_${i.toString(16).padStart(32, "0")}`);
      for (const id of ids) seedPending(home, { id, args: { to: "bob@example.com", body: `${id} `.repeat(200) } });
      const out = await runCli(["pending", "--json"], { env: { ACP_HOME: home } });
      expect(out.code).toBe(0);
      const list = JSON.parse(out.stdout) as { id: string }[];
      expect(list.map((view) => view.id)).toEqual(ids);
      expect(out.stdout).toBe(`${JSON.stringify(list, null, 2)}\n`);
      const human = await runCli(["pending"], { env: { ACP_HOME: home } });
      expect(human.stdout.match(/^cr_[0-9a-f]{32} {2}mail\/send_email/gm)).toHaveLength(230);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("names the agent that asked, in the list and in --json (null when the request names none)", async () => {
    const home = tempHome();
    try {
      seedPending(home, { id: ID_A, agent: { id: "claude-code", name: "claude-code", command: "unknown" } });
      // the placeholder a request carries when nothing was known is no name: --json says null
      seedPending(home, { id: ID_B, agent: { id: "unknown", name: "unknown", command: "unknown" } });
      const out = await runCli(["pending"], { env: { ACP_HOME: home } });
      expect(out.stdout).toContain(
        `${ID_A}  mail/send_email  expires 2026-01-15T12:05:00.000Z (in 5m)\n  agent: claude-code\n`,
      );
      expect(out.stdout).toContain(
        `${ID_B}  mail/send_email  expires 2026-01-15T12:05:00.000Z (in 5m)\n  agent: unknown\n`,
      );
      const list = JSON.parse((await runCli(["pending", "--json"], { env: { ACP_HOME: home } })).stdout) as unknown[];
      expect(list).toMatchObject([
        { id: ID_A, agent: "claude-code" },
        { id: ID_B, agent: null },
      ]);
      // an agent names itself (its client's clientInfo): shown escaped, with a warning, never drawn
      seedPending(home, {
        id: ID_A.replace("a", "c"),
        agent: { id: "x", name: "claude\u202e\u001b[2J", command: "x" },
      });
      const hostile = await runCli(["pending"], { env: { ACP_HOME: home } });
      expect(hostile.stdout).toContain("  agent: claude\\u202e\\u001b[2J\n");
      expect(hostile.stdout).toMatch(/! warning: invisible or control characters in agent/);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("shows control characters in a tool name or a reason escaped: a hostile upstream cannot redraw the list", async () => {
    const home = tempHome();
    seedPending(home, {
      id: ID_A,
      tool: "send\u001b[2K\r  tool: read_file",
      reason: "to `a\u202eexample.com`\u009b2J",
    });
    const out = await runCli(["pending"], { env: { ACP_HOME: home } });
    for (const c of ["\u001b", "\u009b", "\u202e", "\r"]) expect(out.stdout).not.toContain(c);
    expect(out.stdout).toContain(`${ID_A}  mail/send\\u001b[2K\\u000d  tool: read_file  expires`);
    expect(out.stdout).toContain("- to `a\\u202eexample.com`\\u009b2J");
    // --json keeps the exact values (JSON escapes them)
    const list = JSON.parse((await runCli(["pending", "--json"], { env: { ACP_HOME: home } })).stdout) as {
      tool: string;
    }[];
    expect(list[0]?.tool).toBe("send\u001b[2K\r  tool: read_file");
  });
});

describe("acp pending: what the agent chose cannot disguise a request", () => {
  it("shows the arguments one value a line, a huge one cut in its middle, and warns of invisible characters", async () => {
    const home = tempHome();
    try {
      seedPending(home, { id: ID_A, args: { body: "A".repeat(100_000), to: "ceo@corp.test\u200b" } });
      const out = await runCli(["pending"], { env: { ACP_HOME: home } });
      // the recipient after a huge value is on screen, and does not pass for ceo@corp.test
      expect(out.stdout).toContain('    to: "ceo@corp.test\\u200b"\n');
      expect(out.stdout).not.toContain("\u200b");
      expect(out.stdout).toMatch(/ {4}body: "A+…\[\d+ characters not shown\]…A+"\n/);
      expect(out.stdout.length).toBeLessThan(2_000);
      expect(out.stdout).toContain("  ! warning: invisible or control characters in arguments, shown as");
      expect(out.stdout).toContain("  ! warning: long arguments are shortened here");
      // a tool name padded to hide how it ends shows both ends
      seedPending(home, { id: ID_B, tool: `send_to_ana${"_".repeat(3_000)}_and_mallory` });
      const padded = await runCli(["pending"], { env: { ACP_HOME: home } });
      expect(padded.stdout).toMatch(/mail\/send_to_ana_+…\[\d+ characters not shown\]…_+_and_mallory {2}expires/);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe("acp pending --watch", () => {
  it("tells each request once as it arrives and how each one ends, also when state.db appears later", async () => {
    const home = tempHome();
    let now = Date.parse("2026-01-15T12:00:00Z");
    const ctx: CliContext = {
      io: {
        stdout: { write: () => undefined },
        stderr: { write: () => undefined },
        readStdin: () => Promise.resolve(""),
        stdinIsTTY: false,
        env: { ACP_HOME: home, HOME: "/nonexistent-home" },
        cwd: home,
        now: () => new Date(now),
      },
      exitCode: 0,
    };
    const events: PendingWatchEvent[] = [];
    const controller = new AbortController();
    const watching = watchPending(ctx, {}, (e) => events.push(e), { signal: controller.signal, intervalMs: 10 });
    // no state.db yet: nothing to tell, and the watch goes on
    await new Promise((r) => setTimeout(r, 50));
    expect(events).toEqual([]);
    seedPending(home, { id: ID_A });
    await expect.poll(() => events.length).toBe(1);
    expect(events[0]).toMatchObject({ event: "pending", request: { id: ID_A, tool: "send_email" } });
    const approved = await runCli(["approve", ID_A], { env: { ACP_HOME: home, USER: "alice" }, now: new Date(now) });
    expect(approved.code).toBe(0);
    await expect.poll(() => events.length).toBe(2);
    expect(events[1]).toEqual({ event: "settled", id: ID_A, status: "approved" });
    seedPending(home, { id: ID_B, expiresAt: "2026-01-15T12:01:00Z" });
    await expect.poll(() => events.length).toBe(3);
    now = Date.parse("2026-01-15T12:02:00Z");
    await expect.poll(() => events.length).toBe(4);
    expect(events[3]).toEqual({ event: "settled", id: ID_B, status: "expired" });
    // told once: more looks add nothing
    await new Promise((r) => setTimeout(r, 50));
    expect(events).toHaveLength(4);
    controller.abort();
    await watching;
  });
});

describe("acp pending --watch --json, printed to a terminal", () => {
  it("shows C1 controls, bidi overrides and invisible characters escaped, still JSON of the same event; piped, as written", () => {
    const event: PendingWatchEvent = {
      event: "pending",
      request: {
        id: ID_A,
        server: "mail",
        tool: "send\u009b2J\u009b1Asend_email",
        agent: null,
        arguments: { to: "a\u202eexample.com", note: "ceo@corp.test\u200b\u00a0" },
        reasons: [],
        category: "communication",
        risk_level: "high",
        rule: "ask-mail",
        session_id: null,
        created_at: "2026-01-15T12:00:00.000Z",
        expires_at: "2026-01-15T12:05:00.000Z",
      },
    };
    for (const tty of [true, false]) {
      let text = "";
      const ctx: CliContext = {
        io: {
          stdout: { write: (s: string) => (text += s) },
          stderr: { write: () => true },
          readStdin: () => Promise.resolve(""),
          stdinIsTTY: false,
          stdoutIsTTY: tty,
          env: {},
          cwd: "/",
          now: () => new Date("2026-01-15T12:00:00Z"),
        },
        exitCode: 0,
      };
      tellWatch(ctx, event, true);
      expect(JSON.parse(text)).toEqual(event);
      if (tty) {
        expect(text).not.toMatch(/[\u009b\u202e\u200b\u00a0]/);
        expect(text).toContain("send\\u009b2J\\u009b1Asend_email");
      } else {
        expect(text).toBe(`${JSON.stringify(event)}\n`);
      }
    }
  });
});

describe("acp pending --watch, a proxy that dies while its request waits", () => {
  it("tells the request as pending, then `orphaned` once its process is gone", async () => {
    const home = tempHome();
    const ctx: CliContext = {
      io: {
        stdout: { write: () => undefined },
        stderr: { write: () => undefined },
        readStdin: () => Promise.resolve(""),
        stdinIsTTY: false,
        env: { ACP_HOME: home, HOME: "/nonexistent-home" },
        cwd: home,
        now: () => new Date("2026-01-15T12:00:00Z"),
      },
      exitCode: 0,
    };
    const waiter = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
    const exited = new Promise((resolve) => waiter.once("exit", resolve));
    seedPending(home, { id: ID_A, owner: { pid: waiter.pid ?? 0, host: hostname(), start: null } });
    const events: PendingWatchEvent[] = [];
    const controller = new AbortController();
    const watching = watchPending(ctx, {}, (e) => events.push(e), { signal: controller.signal, intervalMs: 10 });
    try {
      await expect.poll(() => events.length, { timeout: 30_000 }).toBe(1);
      expect(events[0]).toMatchObject({ event: "pending", request: { id: ID_A } });
      waiter.kill("SIGKILL");
      await exited;
      await expect.poll(() => events.length, { timeout: 30_000 }).toBe(2);
      expect(events[1]).toEqual({ event: "settled", id: ID_A, status: "orphaned" });
    } finally {
      controller.abort();
      waiter.kill("SIGKILL");
      await watching;
    }
  });
});

describe("acp pending --watch, as a person starts it", () => {
  it("says where it watches before the first request arrives", async () => {
    const home = tempHome();
    const acp = fileURLToPath(new URL("../bin/acp.js", import.meta.url));
    const child = spawn(process.execPath, [acp, "pending", "--watch"], {
      env: { PATH: process.env["PATH"] ?? "", HOME: "/nonexistent-home", ACP_HOME: home },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    await new Promise<void>((resolve, reject) => {
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString("utf8");
        if (stderr.includes("\n")) resolve();
      });
      child.on("exit", () => reject(new Error(`exited: ${stderr}`)));
    });
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGINT");
    await exited;
    expect(stderr).toBe(`watching for consent requests in ${join(home, "state.db")} (Ctrl-C stops)\n`);
  });
});

describe("timeLeft: how long a person has to answer, in words", () => {
  it("reads seconds, minutes and hours, and `expired` at or past the end", () => {
    expect(timeLeft(45_000)).toBe("in 45s");
    expect(timeLeft(59_999)).toBe("in 1m");
    expect(timeLeft(60_000)).toBe("in 1m");
    expect(timeLeft(292_000)).toBe("in 4m 52s");
    expect(timeLeft(3_600_000)).toBe("in 1h");
    expect(timeLeft(3_900_000)).toBe("in 1h 5m");
    expect(timeLeft(999)).toBe("in 1s");
    expect(timeLeft(0)).toBe("expired");
    expect(timeLeft(-5_000)).toBe("expired");
  });
});
