import { LineCounter, parseDocument, isMap, isSeq, type Node } from "yaml";
import { ROUTES, isRoute, yamlErrorMessage, yamlErrorPosition, type Issue, type Route } from "@acp/core";

/** One decision test case: a request, when, how often, and what must come out. */
export interface PolicyTestCase {
  readonly name: string;
  readonly line: number;
  readonly request: Record<string, unknown>;
  readonly at?: string;
  readonly times: number;
  readonly expect: { readonly route: Route; readonly rule?: string | null };
}

/** A parsed test file. Paths are as written (relative to the file). */
export interface PolicyTestFile {
  readonly policy?: string;
  readonly graph?: string;
  readonly cases: readonly PolicyTestCase[];
}

const FILE_KEYS = ["policy", "graph", "cases"];
const CASE_KEYS = ["name", "request", "at", "times", "expect"];
const EXPECT_KEYS = ["route", "rule"];

function position(node: Node | null | undefined, lines: LineCounter): { line?: number; column?: number } {
  const offset = node?.range?.[0];
  if (offset === undefined) return {};
  const pos = lines.linePos(offset);
  return { line: pos.line, column: pos.col };
}

function unknownKeys(
  node: Node,
  allowed: string[],
  path: (string | number)[],
  lines: LineCounter,
  issues: Issue[],
): void {
  if (!isMap(node)) return;
  for (const pair of node.items) {
    const key = (pair.key as { value?: unknown } | null)?.value;
    if (typeof key !== "string" || !allowed.includes(key)) {
      issues.push({
        code: "invalid_test_file",
        path: [...path, String(key)],
        message: `unknown key \`${String(key)}\` (expected ${allowed.join(", ")})`,
        ...position(pair.key as Node, lines),
      });
    }
  }
}

function checkCase(
  raw: unknown,
  node: Node,
  index: number,
  lines: LineCounter,
  issues: Issue[],
): PolicyTestCase | null {
  const path = ["cases", index];
  unknownKeys(node, CASE_KEYS, path, lines, issues);
  const where = position(node, lines);
  let label = `case ${index + 1}`;
  const bad = (message: string): null => {
    issues.push({ code: "invalid_test_file", path, message: `${label}: ${message}`, ...where });
    return null;
  };
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return bad("must be a mapping");
  const c = raw as Record<string, unknown>;
  if (typeof c["name"] !== "string" || c["name"] === "") return bad("needs a `name`");
  label = `case ${index + 1} (\`${c["name"]}\`)`;
  if (typeof c["request"] !== "object" || c["request"] === null || Array.isArray(c["request"]))
    return bad("needs a `request` mapping");
  const request = c["request"] as Record<string, unknown>;
  const args = request["arguments"];
  // a tools/call may leave `arguments` out (MCP makes it optional) and the proxy then decides on `{}`:
  // a case without it tests that call, a tool with no arguments
  if (args !== undefined && (typeof args !== "object" || args === null || Array.isArray(args)))
    return bad(
      "`request.arguments` must be a mapping of argument names to values " +
        "(`arguments: { path: /tmp/a }`; `arguments: {}` or no `arguments` for a tool without arguments)",
    );
  const times = c["times"] ?? 1;
  if (typeof times !== "number" || !Number.isInteger(times) || times < 1 || times > 100_000)
    return bad("`times` must be an integer from 1 to 100000");
  const at = c["at"];
  if (at !== undefined && (typeof at !== "string" || Number.isNaN(new Date(at).getTime())))
    return bad("`at` must be an ISO-8601 time");
  const expect = c["expect"];
  if (typeof expect !== "object" || expect === null) return bad("needs an `expect` mapping with `route`");
  const expectNode = isMap(node) ? (node.get("expect", true) as Node | undefined) : undefined;
  if (expectNode !== undefined) unknownKeys(expectNode, EXPECT_KEYS, [...path, "expect"], lines, issues);
  const e = expect as Record<string, unknown>;
  if (!isRoute(e["route"])) return bad(`\`expect.route\` must be one of ${ROUTES.join(", ")}`);
  const rule = e["rule"];
  if (rule !== undefined && rule !== null && typeof rule !== "string")
    return bad("`expect.rule` must be a string or null");
  const testCase: PolicyTestCase = {
    name: c["name"],
    line: where.line ?? 0,
    request: args === undefined ? { ...request, arguments: {} } : request,
    times,
    expect: rule === undefined ? { route: e["route"] } : { route: e["route"], rule },
    ...(typeof at === "string" ? { at } : {}),
  };
  return testCase;
}

/** Parses a decision test file; never throws. Unknown keys are errors. */
export function parsePolicyTestFile(
  text: string,
): { ok: true; value: PolicyTestFile } | { ok: false; issues: Issue[] } {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true });
  const issues: Issue[] = doc.errors.map((e) => ({
    code: "invalid_test_file",
    path: [],
    message: yamlErrorMessage(e),
    ...yamlErrorPosition(e),
  }));
  if (issues.length > 0) return { ok: false, issues };
  const root = doc.contents as Node | null;
  const value: unknown = doc.toJS({ maxAliasCount: 100 });
  if (root === null || !isMap(root) || typeof value !== "object" || value === null) {
    return {
      ok: false,
      issues: [{ code: "invalid_test_file", path: [], message: "a test file is a mapping with `cases`" }],
    };
  }
  unknownKeys(root, FILE_KEYS, [], lines, issues);
  const v = value as Record<string, unknown>;
  for (const key of ["policy", "graph"] as const) {
    if (v[key] !== undefined && typeof v[key] !== "string")
      issues.push({ code: "invalid_test_file", path: [key], message: `\`${key}\` must be a path` });
  }
  const casesNode = root.get("cases", true) as Node | undefined;
  if (!Array.isArray(v["cases"]) || casesNode === undefined || !isSeq(casesNode)) {
    issues.push({ code: "invalid_test_file", path: ["cases"], message: "`cases` must be a list" });
    return { ok: false, issues };
  }
  const cases: PolicyTestCase[] = [];
  (v["cases"] as unknown[]).forEach((raw, i) => {
    const parsed = checkCase(raw, casesNode.items[i] as Node, i, lines, issues);
    if (parsed !== null) cases.push(parsed);
  });
  if (issues.length > 0) return { ok: false, issues };
  const file: PolicyTestFile = {
    cases,
    ...(typeof v["policy"] === "string" ? { policy: v["policy"] } : {}),
    ...(typeof v["graph"] === "string" ? { graph: v["graph"] } : {}),
  };
  return { ok: true, value: file };
}
