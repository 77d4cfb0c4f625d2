import { readdir, stat } from "node:fs/promises";
import type { Stats } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { createMemoryRateLimiter, formatIssue } from "@acp/core";
import { CliError, EXIT } from "../exit-codes.js";
import { buildPipeline, loadGraphFile, loadPolicyFile, type DecisionInputs } from "./load.js";
import { readFailure, readInputFile } from "./read-input.js";
import type { GraphSettings } from "./graph-config.js";
import { parsePolicyTestFile } from "./test-cases.js";

/** One case's outcome. */
export interface CaseResult {
  readonly file: string;
  readonly name: string;
  readonly line: number;
  readonly passed: boolean;
  readonly expected: { route: string; rule?: string | null };
  readonly actual: { route: string; rule: string | null };
  readonly reasons: readonly string[];
}

/** Finds test files: FILE itself, or every `*.test.yml` / `*.test.yaml` under a directory. */
export async function findTestFiles(path: string): Promise<string[]> {
  let info: Stats;
  try {
    info = await stat(path);
  } catch (err) {
    throw new CliError(`cannot read test path \`${path}\`: ${readFailure(err)}`, EXIT.error);
  }
  if (info.isFile()) return [path];
  const found: string[] = [];
  for (const entry of (await readdir(path, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
    const full = join(path, entry.name);
    if (entry.isDirectory()) found.push(...(await findTestFiles(full)));
    else if (/\.test\.ya?ml$/.test(entry.name)) found.push(full);
  }
  return found;
}

/**
 * Runs one test file: cases run in order against one pipeline, so rate limits carry from case to case
 * (a case with `times: N` runs its request N times and checks the last decision).
 */
export async function runTestFile(
  file: string,
  overrides: { policy?: string; graph?: string; graphSettings?: GraphSettings },
  now: Date,
): Promise<CaseResult[]> {
  const parsed = parsePolicyTestFile(await readInputFile(file, "test file"));
  if (!parsed.ok) {
    throw new CliError(
      `invalid test file:\n${parsed.issues.map((i) => formatIssue(i, file)).join("\n")}`,
      EXIT.invalid,
    );
  }
  const base = dirname(file);
  const policyPath =
    overrides.policy ?? (parsed.value.policy !== undefined ? resolve(base, parsed.value.policy) : undefined);
  if (policyPath === undefined)
    throw new CliError(`${file}: names no \`policy\` and no --policy was given`, EXIT.invalid);
  const graphPath =
    overrides.graph ?? (parsed.value.graph !== undefined ? resolve(base, parsed.value.graph) : undefined);
  const inputs: DecisionInputs = {
    policy: await loadPolicyFile(policyPath),
    policyFile: policyPath,
    ...(graphPath !== undefined
      ? { graph: await loadGraphFile(graphPath), graphFile: graphPath, graphNamed: graphPath }
      : {}),
    ...(overrides.graphSettings !== undefined ? { graphSettings: overrides.graphSettings } : {}),
  };
  const pipeline = buildPipeline(inputs, createMemoryRateLimiter());
  const results: CaseResult[] = [];
  for (const testCase of parsed.value.cases) {
    const at = testCase.at !== undefined ? new Date(testCase.at) : now;
    let decision = await pipeline.decide(testCase.request, at);
    for (let i = 1; i < testCase.times; i++) decision = await pipeline.decide(testCase.request, at);
    const routeOk = decision.route === testCase.expect.route;
    const ruleOk = testCase.expect.rule === undefined || testCase.expect.rule === decision.rule;
    results.push({
      file,
      name: testCase.name,
      line: testCase.line,
      passed: routeOk && ruleOk,
      expected: testCase.expect,
      actual: { route: decision.route, rule: decision.rule },
      reasons: decision.reasons.map((r) => r.message),
    });
  }
  return results;
}

/** The one-line report of a failed case: `FILE:LINE: case `name`: expected …, got …`. */
export function describeFailure(result: CaseResult): string {
  const expected =
    result.expected.rule === undefined
      ? `route \`${result.expected.route}\``
      : `route \`${result.expected.route}\` by rule \`${String(result.expected.rule)}\``;
  const actual = `route \`${result.actual.route}\` by rule \`${String(result.actual.rule)}\``;
  const why = result.reasons[0] !== undefined ? ` (${result.reasons[0]})` : "";
  return `${result.file}:${result.line}: case \`${result.name}\`: expected ${expected}, got ${actual}${why}`;
}
