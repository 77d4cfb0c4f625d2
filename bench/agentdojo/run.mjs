#!/usr/bin/env node
// `npm run bench:agentdojo`: replays AgentDojo v1.2.2 (benign tasks and attack cases, worst case: the
// model obeys every injected instruction) through the pipeline with the policy and session we would
// ship, and prints per suite: benign tasks that run with no person / need a person / are refused, and
// attacker calls stopped. The benchmark lives outside the repository; point at it with
// ACP_AGENTDOJO_DIR or --dir (default: ../shared/benchmarks/agentdojo from the repository root).
// `--no-detection` turns off the escalation on instruction-like text (provenance and intent alone).
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { NO_SESSION } from "@acp/cli";
import { parsePolicy } from "@acp/core";
import { collectPrompts, scoreAgentDojo, SUITES } from "./score.mjs";
import { formatTable } from "./table.mjs";
import { benchSessions, benchSettings, readTools, SESSION_RUNTIME } from "./session.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "../..");

function option(name) {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
}

const dir = resolve(option("--dir") ?? process.env.ACP_AGENTDOJO_DIR ?? join(repo, "../shared/benchmarks/agentdojo"));
if (!existsSync(join(dir, "benign.jsonl"))) {
  process.stderr.write(
    `bench:agentdojo: no AgentDojo traces at \`${dir}\` (set ACP_AGENTDOJO_DIR or pass --dir to the folder holding benign.jsonl)\n`,
  );
  process.exit(1);
}
const policyFile = resolve(option("--policy") ?? join(here, "policy.yml"));
const parsed = parsePolicy(readFileSync(policyFile, "utf8"), { file: policyFile });
if (!parsed.ok) {
  process.stderr.write(
    `bench:agentdojo: invalid policy \`${policyFile}\`: ${parsed.issues.map((i) => i.message).join("; ")}\n`,
  );
  process.exit(1);
}
const inputs = { policy: parsed.value, policyFile };
const now = new Date("2024-05-15T00:00:00Z");

const rows = [["policy only", await scoreAgentDojo(dir, { inputs, sessions: NO_SESSION, now })]];
if (SESSION_RUNTIME) {
  const sessions = benchSessions({
    prompts: collectPrompts(dir),
    tools: readTools(join(dir, "tools.json")),
    classify: parsed.value.classify,
    now,
    settings: benchSettings(process.argv),
  });
  rows.push(["policy + session", await scoreAgentDojo(dir, { inputs, sessions, now })]);
} else process.stdout.write("(the session runtime is not in this build: policy only)\n");

if (process.argv.includes("--json")) {
  process.stdout.write(`${JSON.stringify(Object.fromEntries(rows), null, 2)}\n`);
} else {
  for (const [label, result] of rows) process.stdout.write(`\n### ${label}\n\n${formatTable(result, SUITES)}\n`);
}
