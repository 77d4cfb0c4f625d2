import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { compileIntent } from "@acp/core";
import { run } from "../src/main.js";
import type { CliIo } from "../src/context.js";
import { runCli } from "./run.js";

const dir = (): string => mkdtempSync(join(tmpdir(), "acp-intent-i-"));

interface Written {
  goal: string;
  trusted_values: Record<string, string[]>;
}

describe("acp intent new, interactive", () => {
  it("asks for the template, the trusted values and the goal, shows the YAML, and writes it after a yes", async () => {
    const file = join(dir(), "day.yml");
    const out = await runCli(["intent", "new", "--interactive", "-o", file], {
      stdin: "1\nme@example.com, me@work.example\nSummarise my Monday\ny\n",
    });
    expect(out.code).toBe(0);
    expect(out.stderr).toContain("summarise-my-day");
    expect(out.stderr).toContain("me@work.example");
    const intent = parse(readFileSync(file, "utf8")) as Written;
    expect(intent.goal).toBe("Summarise my Monday");
    expect(intent.trusted_values["recipients"]).toEqual(["me@example.com", "me@work.example"]);
    expect(compileIntent(intent).ok).toBe(true);
  });

  it("takes a template by name, keeps the template's goal on an empty answer, and prints to stdout", async () => {
    const out = await runCli(["intent", "new", "--interactive"], {
      stdin: "pay-a-bill\nDE89370400440532013000\n\n\ny\n",
    });
    expect(out.code).toBe(0);
    const intent = parse(out.stdout) as Written;
    expect(intent.trusted_values["accounts"]).toEqual(["DE89370400440532013000"]);
    expect(intent.goal).toContain("Pay the bill");
    expect(out.stdout).not.toContain("template [");
  });

  it("asks again after an unknown template or an empty required value", async () => {
    const file = join(dir(), "x.yml");
    const out = await runCli(["intent", "new", "-i", "-o", file], {
      stdin: "9\nnope\n1\n\nme@example.com\n\ny\n",
    });
    expect(out.code).toBe(0);
    expect(out.stderr).toContain("no template `9`");
    expect(out.stderr).toContain("`recipients` needs at least one value");
    expect((parse(readFileSync(file, "utf8")) as Written).trusted_values["recipients"]).toEqual(["me@example.com"]);
  });

  it("flags are the defaults: --template skips the question, --trusted is kept on Enter", async () => {
    const file = join(dir(), "t.yml");
    const out = await runCli(
      ["intent", "new", "-i", "-t", "triage-my-inbox", "--trusted", "recipients=boss@example.com", "-o", file],
      { stdin: "\n\ny\n" },
    );
    expect(out.code).toBe(0);
    expect(out.stderr).not.toContain("template [");
    expect((parse(readFileSync(file, "utf8")) as Written).trusted_values["recipients"]).toEqual(["boss@example.com"]);
  });

  it("input that ends mid-way is a usage error and writes nothing", async () => {
    const file = join(dir(), "cut.yml");
    const out = await runCli(["intent", "new", "--interactive", "-o", file], { stdin: "1\n" });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("input ended");
    expect(existsSync(file)).toBe(false);
  });

  it("anything but a yes writes nothing", async () => {
    const file = join(dir(), "no.yml");
    const out = await runCli(["intent", "new", "--interactive", "-o", file], { stdin: "1\nme@example.com\n\nn\n" });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("nothing written");
    expect(existsSync(file)).toBe(false);
  });

  it("an existing --out without --force is refused before any question", async () => {
    const file = join(dir(), "exists.yml");
    writeFileSync(file, "keep me\n");
    const out = await runCli(["intent", "new", "--interactive", "-o", file], { stdin: "1\nme@example.com\n\ny\n" });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("exists");
    expect(out.stderr).not.toContain("template [");
    expect(readFileSync(file, "utf8")).toBe("keep me\n");
  });

  it("refuses a value with control characters and asks again", async () => {
    const out = await runCli(["intent", "new", "--interactive"], {
      stdin: "1\nme@example.com\u0007\nme@example.com\n\n\ny\n",
    });
    expect(out.code).toBe(0);
    expect(out.stderr).toContain("control characters");
  });

  it("without a terminal and without --template or --interactive: exit 2, nothing read", async () => {
    let read = false;
    const out = await runWith(["intent", "new"], false, () => {
      read = true;
      return "1\n";
    });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("--interactive");
    expect(read).toBe(false);
  });

  it("the piped example of --help writes the file it names", async () => {
    const help = await runCli(["intent", "new", "--help"]);
    const example = /printf '([^']*)' \| acp intent new --interactive -o day\.yml/.exec(help.stdout);
    expect(example).not.toBeNull();
    const input = (example?.[1] ?? "").replaceAll("\\n", "\n");
    const cwd = dir();
    const out = await runCli(["intent", "new", "--interactive", "-o", "day.yml"], { stdin: input, cwd });
    expect(out.stderr).not.toContain("nothing written");
    expect(out.code).toBe(0);
    expect((parse(readFileSync(join(cwd, "day.yml"), "utf8")) as Written).trusted_values["recipients"]).toEqual([
      "me@example.com",
    ]);
  });

  it("on a terminal without --template it asks", async () => {
    const out = await runWith(["intent", "new"], true, () => "3\nDE89370400440532013000\n\n\ny\n");
    expect(out.code).toBe(0);
    expect((parse(out.stdout) as Written).trusted_values["accounts"]).toEqual(["DE89370400440532013000"]);
  });
});

async function runWith(
  argv: string[],
  tty: boolean,
  stdin: () => string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const io: CliIo = {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    readStdin: () => Promise.resolve(stdin()),
    stdinIsTTY: tty,
    env: { HOME: "/nonexistent-home" },
    cwd: process.cwd(),
    now: () => new Date("2026-01-15T12:00:00Z"),
  };
  const code = await run(argv, io);
  return { code, stdout, stderr };
}
