import { execFile, execFileSync, spawn } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { openAuditLog } from "@acp/store";
import { followAuditFile, formatAuditLine, readLastAuditLines } from "../src/commands/audit-tail.js";
import { run } from "../src/main.js";
import type { CliIo } from "../src/context.js";
import { runCli } from "./run.js";

const execFileP = promisify(execFile);
const ACP = fileURLToPath(new URL("../bin/acp.js", import.meta.url));

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

async function logWith(n: number): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "acp-cli-tail-"));
  dirs.push(dir);
  const path = join(dir, "audit.jsonl");
  let t = Date.UTC(2026, 0, 15);
  const log = await openAuditLog(path, { clock: () => new Date(t++) });
  for (let i = 0; i < n; i++) {
    await log.append({ event_type: "policy_evaluated", tool: `tool_${i}`, decision: "ask", policy_rule: "r1" });
  }
  await log.close();
  return path;
}

/** Follows `path` from its start, polling every 10 ms: the lines seen, a wait for `n` of them, and stop. */
function follow(
  path: string,
  chunkBytes?: number,
): { seen: string[]; waitFor: (n: number) => Promise<void>; stop: () => Promise<void> } {
  const seen: string[] = [];
  const controller = new AbortController();
  const options = { from: 0, signal: controller.signal, intervalMs: 10 };
  const following = followAuditFile(
    path,
    (l) => seen.push(l),
    chunkBytes === undefined ? options : { ...options, chunkBytes },
  );
  return {
    seen,
    waitFor: async (n) => {
      for (let i = 0; i < 500 && seen.length < n; i++) await new Promise((r) => setTimeout(r, 10));
    },
    stop: async () => {
      controller.abort();
      await following;
    },
  };
}

describe("acp audit tail", () => {
  it("prints the last N events readably", async () => {
    const path = await logWith(5);
    const out = await runCli(["audit", "tail", "-n", "2", path]);
    expect(out.code).toBe(0);
    const lines = out.stdout.trim().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^2026-01-15T00:00:00\.003Z\s+policy_evaluated\s+tool_3\s+ask\s+rule=r1$/);
    expect(lines[1]).toContain("tool_4");
  });

  it("names the server with the tool, and the agent, when the event has them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-cli-tail-"));
    dirs.push(dir);
    const path = join(dir, "audit.jsonl");
    const log = await openAuditLog(path, { clock: () => new Date(Date.UTC(2026, 0, 15)) });
    await log.append({
      event_type: "policy_evaluated",
      tool: "write_file",
      decision: "ask",
      agent: "ci_bot",
      metadata: { server: "files" },
    });
    await log.append({ event_type: "upstream_failed", metadata: { server: "memory" } });
    await log.close();
    const lines = (await runCli(["audit", "tail", path])).stdout.trim().split("\n");
    expect(lines[0]).toMatch(/\s+policy_evaluated\s+files\/write_file\s+ask\s+agent=ci_bot$/);
    expect(lines[1]).toMatch(/\s+upstream_failed\s+memory\s+-$/);
  });

  it("prints raw JSONL with --json", async () => {
    const path = await logWith(3);
    const out = await runCli(["audit", "tail", "--json", path]);
    const lines = out.stdout.trim().split("\n");
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[2] ?? "")).toMatchObject({ tool: "tool_2", type: "audit_event" });
  });

  it("defaults to $ACP_HOME/audit.jsonl and rejects a bad count", async () => {
    const path = await logWith(1);
    const home = join(path, "..");
    expect((await runCli(["audit", "tail"], { env: { ACP_HOME: home } })).stdout).toContain("tool_0");
    expect((await runCli(["audit", "tail", "-n", "x"], { env: { ACP_HOME: home } })).code).toBe(2);
    expect((await runCli(["audit", "tail"], { env: { ACP_HOME: join(home, "missing") } })).code).toBe(1);
  });

  it("names -n and the value in a bad count's message, exit 2", async () => {
    const home = join(await logWith(1), "..");
    for (const bad of ["abc", "-3", "1.5", ""]) {
      const out = await runCli(["audit", "tail", "-n", bad], { env: { ACP_HOME: home } });
      expect(out.code).toBe(2);
      expect(out.stderr).toContain(`-n: invalid line count \`${bad}\``);
    }
  });

  it("reads the last lines from the end in chunks: lines across chunk boundaries, a partial last line not printed", async () => {
    // lines of ~40 KiB: the 64 KiB and 256 KiB chunks of the backward readers end inside lines
    const dir = mkdtempSync(join(tmpdir(), "acp-cli-tail-"));
    dirs.push(dir);
    const path = join(dir, "audit.jsonl");
    const lines = Array.from({ length: 30 }, (_, i) => JSON.stringify({ n: i, pad: "é".repeat(20_000 + i) }));
    writeFileSync(path, `${lines.join("\n")}\n`);
    const all = await runCli(["audit", "tail", "--json", "-n", "30", path]);
    expect(all.stdout.trim().split("\n")).toEqual(lines);
    const last = await runCli(["audit", "tail", "--json", "-n", "3", path]);
    expect(last.stdout.trim().split("\n")).toEqual(lines.slice(-3));
    expect((await runCli(["audit", "tail", "--json", "-n", "0", path])).stdout).toBe("");
    // a line still being written (no newline yet) is not printed (--follow prints it once it ends)
    appendFileSync(path, '{"n":"partial');
    expect((await runCli(["audit", "tail", "--json", "-n", "2", path])).stdout.trim().split("\n")).toEqual(
      lines.slice(-2),
    );
  });

  it("holds the last lines, not the log: a 96 MB log costs no more memory than a one-line log", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-cli-tail-"));
    dirs.push(dir);
    const big = join(dir, "big.jsonl");
    const line = Buffer.from(`${JSON.stringify({ pad: "x".repeat(1024 * 1024) })}\n`);
    writeFileSync(big, Buffer.concat(Array.from({ length: 96 }, () => line)));
    appendFileSync(big, '{"last":true}\n');
    const small = join(dir, "small.jsonl");
    writeFileSync(small, '{"last":true}\n');
    // the CLI reports its own peak resident memory on exit (kB): VmHWM, its address space's own high-water
    // mark. Not resourceUsage().maxRSS, which Linux carries over fork and exec from the process that spawned
    // it: the test worker, whose resident size (96 MB more while the log's buffer waits for the collector)
    // it then reported, failing the test when the worker was large
    const report = join(dir, "peak.cjs");
    writeFileSync(
      report,
      'process.on("exit", () => process.stderr.write(`peak_kb=${/VmHWM:\\s+(\\d+)/.exec(require("fs").readFileSync("/proc/self/status", "utf8"))[1]}\\n`));',
    );
    const peak = async (log: string): Promise<number> => {
      const out = await execFileP(process.execPath, ["-r", report, ACP, "audit", "tail", "--json", "-n", "1", log], {
        maxBuffer: 8 * 1024 * 1024,
      });
      expect(out.stdout.trim()).toBe('{"last":true}');
      return Number(/peak_kb=(\d+)/.exec(out.stderr)?.[1]);
    };
    const [bigKb, smallKb] = [await peak(big), await peak(small)];
    expect(smallKb).toBeGreaterThan(0);
    // reading the 96 MB log whole (as before) peaked ~190 MB above the one-line log
    expect(bigKb - smallKb).toBeLessThan(48 * 1024);
  });

  it("refuses a directory as the log, clearly", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-cli-tail-"));
    dirs.push(dir);
    const out = await runCli(["audit", "tail", dir]);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("cannot read audit log");
  });

  it("follows a log that is not there yet, from its first line once it appears", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-cli-tail-"));
    dirs.push(dir);
    const path = join(dir, "audit.jsonl");
    const { seen, waitFor, stop } = follow(path);
    await new Promise((r) => setTimeout(r, 30));
    const log = await openAuditLog(path, { clock: () => new Date(Date.UTC(2026, 0, 16)) });
    await log.append({ event_type: "tool_call_completed", tool: "first" });
    await log.close();
    await waitFor(1);
    await stop();
    expect(seen[0]).toContain('"tool":"first"');
  });

  it("acp audit tail -f on a new home waits for the first event (it stopped: no audit log yet, exit 1)", async () => {
    const home = mkdtempSync(join(tmpdir(), "acp-cli-tail-"));
    dirs.push(home);
    const child = spawn(process.execPath, [ACP, "audit", "tail", "-f"], {
      env: { PATH: process.env["PATH"] ?? "", HOME: home, ACP_HOME: home },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    try {
      for (let i = 0; i < 500 && !stderr.includes("waiting for the first event"); i++)
        await new Promise((r) => setTimeout(r, 20));
      expect(stderr).toBe(
        `acp: no audit log yet at \`${join(home, "audit.jsonl")}\`: waiting for the first event (acp proxy and acp serve write it)\n`,
      );
      const log = await openAuditLog(join(home, "audit.jsonl"), { clock: () => new Date(Date.UTC(2026, 0, 16)) });
      await log.append({ event_type: "tool_call_completed", tool: "first_call" });
      await log.close();
      for (let i = 0; i < 500 && !stdout.includes("first_call"); i++) await new Promise((r) => setTimeout(r, 20));
      expect(stdout).toMatch(/tool_call_completed +first_call/);
    } finally {
      child.kill("SIGINT");
    }
    expect(await exited).toBe(0);
  });

  it("acp audit tail -f stops (exit 1) when the log is replaced by a named pipe, instead of hanging deaf to Ctrl-C in its open", async () => {
    const path = await logWith(1);
    const child = spawn(process.execPath, [ACP, "audit", "tail", "-f", "-n", "1", path], {
      env: { PATH: process.env["PATH"] ?? "", HOME: "/nonexistent-home" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    let code: number | null = null;
    try {
      for (let i = 0; i < 500 && !stdout.includes("tool_0"); i++) await new Promise((r) => setTimeout(r, 20));
      expect(stdout).toMatch(/policy_evaluated +tool_0/);
      // someone who can write the home plants a FIFO: a blocking open of it waits for a writer for ever
      rmSync(path);
      execFileSync("mkfifo", [path]);
      code = await Promise.race([exited, new Promise<null>((r) => setTimeout(() => r(null), 10_000))]);
      if (code === null) {
        child.kill("SIGINT"); // what a person would do: the old code did not even hear it
        code = await Promise.race([exited, new Promise<null>((r) => setTimeout(() => r(null), 2_000))]);
      }
    } finally {
      child.kill("SIGKILL");
    }
    expect(code).toBe(1);
    expect(stderr).toBe(`acp: cannot read audit log \`${path}\`: not a regular file (a pipe, a socket or a device)\n`);
  });

  it("prints the last lines of a log without reading all of it: a terabyte of holes before them is not read", async () => {
    const path = await logWith(3);
    const lines = readFileSync(path, "utf8").split("\n").slice(0, 3);
    // a sparse file: a line of 1 TiB of NUL bytes (holes, no disk), then the log's last two lines
    writeFileSync(path, `${lines[0]}\n`);
    truncateSync(path, 2 ** 40);
    appendFileSync(path, `\n${lines[1]}\n${lines[2]}\n`);
    const child = spawn(process.execPath, [ACP, "audit", "tail", "-n", "2", "--json", path], {
      env: { PATH: process.env["PATH"] ?? "", HOME: "/nonexistent-home" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    let stdout = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    let code: number | null;
    try {
      // counting the lines first read the whole file: a terabyte, for hours
      code = await Promise.race([exited, new Promise<null>((r) => setTimeout(() => r(null), 20_000))]);
    } finally {
      child.kill("SIGKILL");
    }
    expect(code).toBe(0);
    expect(stdout).toBe(`${lines[1]}\n${lines[2]}\n`);
  }, 30_000);

  it("stops at a line too long to be an audit event, naming where it ends, instead of reading it through", async () => {
    const path = await logWith(2);
    const [first, last] = readFileSync(path, "utf8").trimEnd().split("\n") as [string, string];
    const hostile = 4 * 1024 * 1024; // more than the 3 MiB any audit line has
    writeFileSync(path, `${first}\n${"y".repeat(hostile)}\n${last}\n`);
    const said =
      `acp: a line of \`${path}\` ending at byte ${first.length + 1 + hostile} is longer than 3145728 bytes (longer than ` +
      "any audit line): it is not read, nor any line before it (acp audit verify reads the log from its start and names it)\n";
    // before 28 Nov 2026 it was read back to its start (a 500 MB line: all of it) and `first` printed
    const out = await runCli(["audit", "tail", "--json", "-n", "3", path]);
    expect(out.code).toBe(0);
    expect(out.stdout).toBe(`${last}\n`);
    expect(out.stderr).toBe(said);
    const readable = await runCli(["audit", "tail", "-n", "3", path]);
    expect(readable.stdout).toBe(`${formatAuditLine(last)}\n`);
    expect(readable.stderr).toBe(said);
  });

  it("says so of a last line that long without a newline, printing nothing before it", async () => {
    const path = await logWith(2);
    appendFileSync(path, "z".repeat(4 * 1024 * 1024));
    const out = await runCli(["audit", "tail", "--json", path]);
    expect(out.code).toBe(0);
    expect(out.stdout).toBe("");
    expect(out.stderr).toContain(
      `acp: \`${path}\` ends with more than 3145728 bytes without a newline (a line longer than any audit line, or a write under way): it is not read`,
    );
  });

  it("reads back at most the bound of one line (a small one here): the lines before a longer line are not read", async () => {
    const path = await logWith(3);
    const [a, b, c] = readFileSync(path, "utf8").trimEnd().split("\n") as [string, string, string];
    const bound = Math.max(a.length, b.length, c.length) + 1;
    writeFileSync(path, `${a}\n${"y".repeat(bound + 1)}\n${b}\n${c}\n`);
    const end = a.length + 1 + bound + 1;
    expect(await readLastAuditLines(path, 10, bound)).toEqual({
      lines: [b, c],
      offset: end + 1 + b.length + 1 + c.length + 1,
      stoppedAt: { end, unterminated: false },
    });
    // a line of exactly the bound is read whole, and the lines before it
    writeFileSync(path, `${a}\n${"y".repeat(bound)}\n${c}\n`);
    expect((await readLastAuditLines(path, 10, bound)).lines).toEqual([a, "y".repeat(bound), c]);
    // unterminated at the end: nothing read back, following starts at the end, past the line's known bytes
    writeFileSync(path, `${a}\n${"z".repeat(bound + 1)}`);
    expect(await readLastAuditLines(path, 10, bound)).toEqual({
      lines: [],
      offset: a.length + 1 + bound + 1,
      stoppedAt: { end: a.length + 1 + bound + 1, unterminated: true },
    });
  });

  it("following from inside a line already reported skips the rest of it, then prints what comes after", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-cli-tail-"));
    dirs.push(dir);
    const path = join(dir, "audit.jsonl");
    writeFileSync(path, "rest of a long line\nnext\n");
    const seen: string[] = [];
    const controller = new AbortController();
    const following = followAuditFile(path, (line) => seen.push(line), {
      from: 5,
      signal: controller.signal,
      intervalMs: 10,
      midLine: true,
    });
    while (seen.length < 1) await new Promise((r) => setTimeout(r, 10));
    controller.abort();
    await following;
    expect(seen).toEqual(["next"]);
  });

  it("acp audit tail -f where there is no home at all stops at once (exit 1): nothing would ever write there", async () => {
    const out = await runCli(["audit", "tail", "-f"], {
      env: { HOME: "/nonexistent-home", ACP_HOME: "/nonexistent-home/acp" },
    });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("no audit log yet at `/nonexistent-home/acp/audit.jsonl`");
  });

  it("follows appended events until stopped", async () => {
    const path = await logWith(1);
    const { seen, waitFor, stop } = follow(path);
    const log = await openAuditLog(path, { clock: () => new Date(Date.UTC(2026, 0, 16)) });
    await log.append({ event_type: "tool_call_completed", tool: "later" });
    await log.close();
    await waitFor(2);
    await stop();
    expect(seen).toHaveLength(2);
    expect(seen[1]).toContain('"tool":"later"');
  });

  it("follows a log grown by more than a chunk at once a chunk at a time: a line longer than a chunk is a stand-in, not held", async () => {
    const path = await logWith(1);
    const first = readFileSync(path, "utf8").split("\n")[0] ?? "";
    const { seen, waitFor, stop } = follow(path, 2048);
    await waitFor(1);
    appendFileSync(path, "y".repeat(5000)); // a line still being written, already longer than a chunk
    await new Promise((r) => setTimeout(r, 50));
    appendFileSync(path, `${"y".repeat(5000)}\n${first}\n`);
    await waitFor(3);
    await stop();
    expect(seen).toHaveLength(3);
    expect(seen[0]).toBe(first);
    expect(seen[1]).toMatch(/^x+$/);
    expect(seen[1]?.length).toBeGreaterThan(1024 * 1024);
    expect(formatAuditLine(seen[1] ?? "")).toMatch(/^\(not an audit event: line longer than 1048576 characters\)/);
    expect(seen[2]).toBe(first);
  });

  it("shows control characters in what an event holds as escapes: a tool name cannot redraw the terminal", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-cli-tail-"));
    dirs.push(dir);
    const path = join(dir, "audit.jsonl");
    const log = await openAuditLog(path, { clock: () => new Date(Date.UTC(2026, 0, 15)) });
    await log.append({ event_type: "tool_call_intercepted", tool: "read\u001b[2K\rsafe_tool", decision: "accept" });
    await log.close();
    appendFileSync(path, "not json \u001b]0;owned\u0007\n");
    const out = await runCli(["audit", "tail", path]);
    expect(out.code).toBe(0);
    // eslint-disable-next-line no-control-regex -- no control character but the newlines may be printed
    expect(out.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f]/);
    expect(out.stdout).toContain("read\\u001b[2K\\u000dsafe_tool");
    expect(out.stdout).toContain("not json \\u001b]0;owned\\u0007");
  });

  it("--json to a terminal escapes what canonical JSON leaves raw (C1 CSI, bidi override, DEL); piped, the bytes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-cli-tail-"));
    dirs.push(dir);
    const path = join(dir, "audit.jsonl");
    const log = await openAuditLog(path, { clock: () => new Date(Date.UTC(2026, 0, 15)) });
    await log.append({ event_type: "tool_call_intercepted", tool: "a\u009b2Jb\u202ec\u007f", decision: "accept" });
    await log.close();
    appendFileSync(path, "planted \u001b]0;owned\u0007\n");
    const written = readFileSync(path, "utf8");
    const tail = async (isTTY: boolean): Promise<string> => {
      let stdout = "";
      const io: CliIo = {
        stdout: { write: (text: string) => (stdout += text) },
        stdoutIsTTY: isTTY,
        stderr: { write: () => true },
        readStdin: () => Promise.resolve(""),
        stdinIsTTY: false,
        env: { HOME: "/nonexistent-home" },
        cwd: process.cwd(),
        now: () => new Date(),
      };
      expect(await run(["audit", "tail", "--json", path], io)).toBe(0);
      return stdout;
    };
    const shown = await tail(true);
    // eslint-disable-next-line no-control-regex -- nothing but the newlines: no C0, DEL, C1, bidi override
    expect(shown).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
    const [event, planted] = shown.trim().split("\n") as [string, string];
    expect(JSON.parse(event)).toEqual(JSON.parse(written.split("\n")[0] as string));
    expect(planted).toBe("planted \\u001b]0;owned\\u0007");
    expect(await tail(false)).toBe(written);
  });

  it("names the policy versions of a reload, and of a version that was not taken", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-cli-tail-"));
    dirs.push(dir);
    const path = join(dir, "audit.jsonl");
    const log = await openAuditLog(path, { clock: () => new Date(Date.UTC(2026, 0, 15)) });
    const [a, b, c] = ["a", "b", "c"].map((x) => `sha256:${x.repeat(64)}`) as [string, string, string];
    await log.append({ event_type: "policy_reloaded", metadata: { policy_hash: b, previous_policy_hash: a } });
    await log.append({ event_type: "policy_reload_refused", metadata: { policy_hash: b, refused_policy_hash: c } });
    await log.close();
    const lines = (await runCli(["audit", "tail", path])).stdout.trim().split("\n");
    expect(lines).toEqual([
      `2026-01-15T00:00:00.000Z  policy_reloaded        -  -  policy=${b} was=${a}`,
      `2026-01-15T00:00:00.000Z  policy_reload_refused  -  -  kept=${b} refused=${c}`,
    ]);
  });

  it("names a session event, its session and what the session said (quoted: a line break stays on the line)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-cli-tail-"));
    dirs.push(dir);
    const path = join(dir, "audit.jsonl");
    const log = await openAuditLog(path, { clock: () => new Date(Date.UTC(2026, 0, 15)) });
    const message = "suspended: the kill switch tripped\nforged line";
    await log.append({
      event_type: "session_event",
      metadata: { session_event: "suspended", session_id: "s-1", message },
    });
    await log.close();
    const lines = (await runCli(["audit", "tail", path])).stdout.trim().split("\n");
    expect(lines).toEqual([
      '2026-01-15T00:00:00.000Z  session_event          -  -  suspended session=s-1 "suspended: the kill switch tripped\\nforged line"',
    ]);
  });
});
