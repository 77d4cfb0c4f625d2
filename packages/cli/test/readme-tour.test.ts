import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { runCli } from "./run.js";
import { tempRoot } from "./home-fixture.js";

// README.md's five-minute tour, run as written from the repository root: each `$ npx acp …` of its console
// blocks prints what the README shows under it, and the policy it shows is the one the tour's files hold.

const root = fileURLToPath(new URL("../../../", import.meta.url));
const readme = readFileSync(`${root}README.md`, "utf8");
const tour = readme.slice(readme.indexOf("## A five-minute tour"), readme.indexOf("## What is here"));

/** A shell line as argv: words split on spaces, single-quoted strings kept whole. */
function argvOf(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? "");
}

interface Step {
  readonly argv: string[];
  readonly shown: string[];
}

/** Every console block of the tour: the command after `$ npx acp` (continuations joined) and its output. */
function consoleSteps(): Step[] {
  return [...tour.matchAll(/```console\n([\s\S]*?)```/g)].map((block) => {
    const lines = (block[1] ?? "").trimEnd().split("\n");
    let command = (lines.shift() ?? "").replace(/^\$ npx acp /, "");
    while (command.endsWith("\\")) command = `${command.slice(0, -1)} ${(lines.shift() ?? "").trim()}`;
    return { argv: argvOf(command), shown: lines };
  });
}

describe("README's five-minute tour does what it says", () => {
  const steps = consoleSteps();

  it("has the three console blocks it walks through (validate, simulate, test)", () => {
    expect(steps.map((s) => s.argv.slice(0, 2).join(" "))).toEqual([
      "policy validate",
      "policy simulate",
      "policy test",
    ]);
  });

  it("2. validate: the lines shown, in order, and exit 4", async () => {
    const step = steps[0] as Step;
    const out = await runCli(step.argv, { cwd: root });
    expect(out.code).toBe(4);
    expect(out.stderr.trimEnd().split("\n")).toEqual(step.shown);
  });

  it("3. simulate: every key the README shows, with its value", async () => {
    const step = steps[1] as Step;
    const out = await runCli(step.argv, { cwd: root });
    expect(out.code).toBe(0);
    const shown = JSON.parse((step.shown[0] ?? "").replace(/, … }$/, " }")) as Record<string, unknown>;
    expect(JSON.parse(out.stdout)).toMatchObject(shown);
  });

  it("4. test: the summary line shown", async () => {
    const step = steps[2] as Step;
    const out = await runCli(step.argv, { cwd: root });
    expect(out.code).toBe(0);
    expect(out.stdout.trimEnd().split("\n").at(-1)).toBe(step.shown[0]);
  });

  it("1. the policy shown is the start of examples/policy-tour/policy.yml, rule for rule", () => {
    const shown = parse(/```yaml\n([\s\S]*?)```/.exec(tour)?.[1] ?? "") as { rules: Record<string, unknown>[] };
    const file = parse(readFileSync(`${root}examples/policy-tour/policy.yml`, "utf8")) as typeof shown;
    expect(shown).toMatchObject({ version: (file as { version?: string }).version });
    shown.rules.forEach((rule, i) => {
      // the README leaves out each rule's description, and nothing else
      const inFile = Object.fromEntries(Object.entries(file.rules[i] ?? {}).filter(([key]) => key !== "description"));
      expect(rule).toEqual(inFile);
    });
  });

  it("5. the consent graph: VISIBLE (exit 0) and BLOCKED (exit 3), as the README says", async () => {
    const command = /`npx acp (graph check imessage send_vip 0\.9 --graph \S+)`/.exec(tour)?.[1] ?? "";
    const visible = await runCli(argvOf(command), { cwd: root });
    expect(visible.code).toBe(0);
    expect(visible.stdout).toMatch(/^VISIBLE /);
    const graph = argvOf(command).slice(-2);
    const blocked = await runCli(["graph", "check", "self_modification", "modify_soul_md", "0.99", ...graph], {
      cwd: root,
    });
    expect(tour.replace(/\s+/g, " ")).toContain("`self_modification modify_soul_md 0.99` prints `BLOCKED`");
    expect(blocked.code).toBe(3);
    expect(blocked.stdout).toMatch(/^BLOCKED /);
  });

  it("6. the action contract: exit 3 and route ask", async () => {
    const command = /`npx acp (check \S+)`/.exec(tour)?.[1] ?? "";
    const out = await runCli(argvOf(command), { cwd: root });
    expect(out.code).toBe(3);
    expect((JSON.parse(out.stdout) as { recommended_action: string }).recommended_action).toBe("ask");
  });
});

describe("README's step 7 as a new user runs it, in a fresh home", () => {
  const dir = tempRoot("readme-install");
  afterAll(dir.cleanup);

  it("npm install -g ./packages/cli puts an acp on PATH that makes a home, checks it and shows the proxy guide", () => {
    const install = /`(npm install -g \.\/packages\/cli)`/.exec(tour)?.[1] ?? "";
    expect(install).toBe("npm install -g ./packages/cli");
    // the global prefix is a temporary directory, so the machine's own global packages are left alone
    const prefix = join(dir.dir, "global");
    const installed = spawnSync("npm", [...install.split(" ").slice(1), "--prefix", prefix], {
      cwd: root,
      encoding: "utf8",
    });
    expect(installed.status, installed.stderr).toBe(0);
    const env = {
      PATH: `${join(prefix, "bin")}:${process.env["PATH"] ?? ""}`,
      HOME: dir.dir,
      ACP_HOME: join(dir.dir, "acp"),
      ACP_PASSPHRASE: "a passphrase for the tour",
    };
    const acp = (...args: string[]) => spawnSync("acp", args, { cwd: dir.dir, env, encoding: "utf8" });
    const init = acp("init");
    expect(init.status, init.stderr).toBe(0);
    // what init says to do next is a page the installed acp has
    const next = /\(`acp docs (\S+)`\)/.exec(init.stdout + init.stderr)?.[1];
    expect(next).toBe("guides/proxy");
    const doctor = acp("doctor");
    expect(doctor.status, doctor.stdout + doctor.stderr).toBe(0);
    const guide = acp("docs", next ?? "");
    expect(guide.status, guide.stderr).toBe(0);
    expect(guide.stdout).toBe(readFileSync(join(root, "docs", "guides", "proxy.md"), "utf8"));
  }, 120_000);
});
