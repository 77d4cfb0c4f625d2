import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { afterAll, describe, expect, it } from "vitest";
import { ed25519KeyPairFromSeed, wrapPrivateKey } from "@acp/core";
import { configTemplate, createHome, openAuditLog, STARTER_POLICY } from "@acp/store";
import { createProgram } from "../src/main.js";
import { runCli, silentContext } from "./run.js";
import { PASSPHRASE, tempRoot } from "./home-fixture.js";

// Every example of every command's --help is what a person who installed acp can type: it names no file
// of this repository, and it runs as written in a fresh home (after `acp init`), unless it is listed
// below with the reason it cannot run here (a placeholder only the person can fill in, a service that
// runs until stopped, a question asked at a terminal).

const ACP = fileURLToPath(new URL("../bin/acp.js", import.meta.url));
const root = tempRoot("help-examples");
afterAll(root.cleanup);

function leaves(command: Command, path: string[] = []): string[][] {
  if (command.commands.length === 0) return [path];
  return command.commands.flatMap((sub) => leaves(sub, [...path, sub.name()]));
}

/** The shell commands of a help text's Examples section: `$ ` prompts, comments and output lines dropped. */
export function examplesOf(help: string): string[] {
  const lines = help.split("\n");
  const start = lines.findIndex((l) => /^Examples?:$/.test(l));
  if (start === -1) return [];
  const out: string[] = [];
  let continued = false;
  for (const line of lines.slice(start + 1)) {
    if (line !== "" && !line.startsWith(" ")) break;
    const text = line.trim();
    if (text === "") continue;
    if (continued) out[out.length - 1] = `${(out[out.length - 1] ?? "").slice(0, -1)} ${text}`;
    else if (text.startsWith("#")) continue;
    else if (text.startsWith("$ ")) out.push(text.slice(2));
    else if (/^ {2}\S/.test(line)) out.push(text);
    else continue; // indented further: the output of the line before
    continued = (out[out.length - 1] ?? "").endsWith("\\");
  }
  return out;
}

/** Examples that are not run here, and why; each must still match an example (no stale entries). */
const NOT_RUN: readonly { readonly match: RegExp; readonly why: string }[] = [
  { match: /cr_3f2a…|sbx_…|sbx_4fQ…|k3…q|subject:3q2…|stdio_3f9a…/, why: "an id only a running system hands out" },
  { match: /postgres:\/\/acp:…@db/, why: "a PostgreSQL server of the person's" },
  { match: /(^|[\s"'])acp (demo|proxy|run|serve|claim serve)\b/, why: "runs until stopped (its own e2e tests)" },
  { match: /acp proof verify/, why: "needs a signed consent response from a consent flow (proof-verify tests)" },
  { match: /acp claim reputation/, why: "needs a claim provider's state (claim-operator tests)" },
  { match: /acp console-link/, why: "needs a running acp serve (console-link.test.ts)" },
  {
    match: /acp claim (create-faq|publish|link)\b|--provider http/,
    why: "needs a running claim provider (claim.test.ts)",
  },
  { match: /acp (pending --watch|audit tail -f)/, why: "follows until Ctrl-C (pending.test.ts, audit-tail.test.ts)" },
  {
    match: /^acp intent new +(#|$)|acp vault set SMTP_PASSWORD|set-secret (webhook\.secret|proxy\.agent_tokens)/,
    why: "asks at a terminal",
  },
  { match: /^acp init( +#|$)/, why: "asks for a passphrase at a terminal" },
];

/** The consent graph acp's "no such file" message offers to start from. */
const STARTER_GRAPH = '{"email": {"autonomous": ["read"], "requires_approval": ["send"], "blocked": []}}\n';

/**
 * A fresh $HOME whose ~/.acp is a home as `acp init` makes it (cheap scrypt), used a little: a few audit
 * events and the starter consent graph (graph commands without --graph read one).
 */
async function freshHome(name: string, init: boolean): Promise<{ home: string; cwd: string }> {
  const home = join(root.dir, name);
  const cwd = join(home, "work");
  mkdirSync(cwd, { recursive: true });
  if (!init) return { home, cwd };
  const acpHome = join(home, ".acp");
  const seed = randomBytes(32);
  const created = createHome(acpHome, {
    privateKeyFile: wrapPrivateKey(seed, PASSPHRASE, randomBytes, { log_n: 15, r: 8, p: 1 }),
    configText: configTemplate(join(acpHome, "policy.yml")),
    policyText: STARTER_POLICY,
    force: false,
    stamp: "t",
  });
  if (!created.ok) throw new Error(created.issues[0]?.message);
  writeFileSync(join(acpHome, "consent-graph.json"), STARTER_GRAPH, { mode: 0o600 });
  let t = Date.UTC(2026, 0, 15);
  const log = await openAuditLog(join(acpHome, "audit.jsonl"), {
    clock: () => new Date(t++),
    signer: ed25519KeyPairFromSeed(seed).privateKey,
    checkpointEvery: 2,
  });
  for (const tool of ["read_file", "send_email", "list_events"])
    await log.append({ event_type: "policy_evaluated", tool, decision: tool === "send_email" ? "ask" : "accept" });
  await log.close();
  return { home, cwd };
}

/** Runs one example as a person would, in bash with `acp` on PATH; a `…` passphrase is the home's. */
function runExample(example: string, where: { home: string; cwd: string }): { code: number; out: string } {
  const bin = join(where.home, "bin");
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, "acp"), `#!/bin/sh\nexec "${process.execPath}" "${ACP}" "$@"\n`);
  chmodSync(join(bin, "acp"), 0o755);
  // examples pipe into jq; where it is not installed, a stand-in passes the JSON through (acp's exit code counts)
  if (!HAS_JQ) {
    writeFileSync(join(bin, "jq"), "#!/bin/sh\ncat\n");
    chmodSync(join(bin, "jq"), 0o755);
  }
  const text = example.replaceAll("ACP_PASSPHRASE=…", `ACP_PASSPHRASE='${PASSPHRASE}'`);
  const r = spawnSync("bash", ["-o", "pipefail", "-c", text], {
    cwd: where.cwd,
    env: {
      PATH: `${bin}:${process.env["PATH"] ?? "/usr/bin:/bin"}`,
      HOME: where.home,
      TMPDIR: where.home,
      ACP_PASSPHRASE: PASSPHRASE,
      // the person's own secrets, which the vault and set-secret examples read
      GITHUB_TOKEN: "ghp_exampleexampleexample",
      BOT_TOKEN: "123456789:exampleexampleexampleexample",
    },
    input: "",
    encoding: "utf8",
    timeout: 120_000,
  });
  return { code: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
}

const HAS_JQ = spawnSync("sh", ["-c", "command -v jq"]).status === 0;
const commands = leaves(await createProgram(silentContext()));
const helps = new Map<string, string>();
async function helpOf(path: readonly string[]): Promise<string> {
  const key = path.join(" ");
  const known = helps.get(key);
  if (known !== undefined) return known;
  const help = (await runCli([...path, "--help"])).stdout;
  helps.set(key, help);
  return help;
}

describe("every --help example is one a person who installed acp can run", () => {
  it("parses a help's examples: prompts, comments, output lines and continuations", () => {
    const help =
      "x\n\nExamples:\n  acp a \\\n    --b c\n    output line\n  # a comment\n  $ acp d  # why\nExit codes: 0\n";
    expect(examplesOf(help)).toEqual(["acp a  --b c", "acp d  # why"]);
  });

  it.each(commands.map((path) => [path.join(" "), path] as const))(
    "acp %s: no example names a file of the repository (spec/, examples/)",
    async (_name, path) => {
      for (const example of examplesOf(await helpOf(path))) expect(example).not.toMatch(/(^|[\s'"=])(spec|examples)\//);
    },
  );

  it.each(commands.map((path) => [path.join(" "), path] as const))(
    "acp %s: every example runs in a fresh home as written (exit 0, 3 or 4: never a missing file or a usage error)",
    async (name, path) => {
      const init = name !== "init";
      // acp init's examples are alternatives, each for a home not made yet; the others run in order
      let where = await freshHome(name.replaceAll(" ", "-"), init);
      for (const [i, example] of examplesOf(await helpOf(path)).entries()) {
        if (NOT_RUN.some((n) => n.match.test(example))) continue;
        if (!init && i > 0) where = await freshHome(`${name}-${i}`, false);
        // it runs here as the person runs it: it must not write beside the test's own directory
        expect(example).not.toMatch(/(^|[\s='"])\/(tmp|var|run|dev\/shm)\//);
        const r = runExample(example, where);
        expect([0, 3, 4], `${example}\nexited ${r.code}:\n${r.out}`).toContain(r.code);
        expect(r.out, example).not.toMatch(/no such file|unknown option|command not found/);
      }
    },
    180_000,
  );

  it("lists no example it does not run that no help shows any more", async () => {
    const all = (await Promise.all(commands.map((path) => helpOf(path)))).flatMap(examplesOf);
    for (const n of NOT_RUN)
      expect(
        all.some((e) => n.match.test(e)),
        n.why,
      ).toBe(true);
  });
});
