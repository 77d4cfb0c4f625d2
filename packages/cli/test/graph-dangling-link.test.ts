import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readHomeConsentGraph } from "../src/wiring/decide.js";
import { runCli } from "./run.js";

const homes: string[] = [];
afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

/** A home whose consent-graph.json is a symbolic link to a file that is not there (a volume not mounted). */
function homeWithDanglingGraph(): { home: string; graph: string } {
  const home = mkdtempSync(join(tmpdir(), "acp-graph-link-"));
  homes.push(home);
  writeFileSync(join(home, "policy.yml"), 'version: "1"\ndefault_action: allow\n');
  const graph = join(home, "consent-graph.json");
  symlinkSync(join(home, "unmounted", "consent-graph.json"), graph);
  return { home, graph };
}

describe("a consent graph that is a symbolic link to nothing", () => {
  it("stops acp proxy's and acp run's pipeline rather than leaving the graph out", () => {
    const { home, graph } = homeWithDanglingGraph();
    expect(() => readHomeConsentGraph(home)).toThrow(graph);
  });

  it("stops acp policy simulate (exit 1, naming the file) rather than judging without the graph", async () => {
    const { home, graph } = homeWithDanglingGraph();
    const out = await runCli(["policy", "simulate", "--tool", "send_email"], { env: { ACP_HOME: home } });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(graph);
  });

  it("acp graph check says it cannot read the graph (exit 1), not that there is none", async () => {
    const { home, graph } = homeWithDanglingGraph();
    const out = await runCli(["graph", "check", "email", "read"], { env: { ACP_HOME: home } });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(`cannot read consent graph \`${graph}\`: a symbolic link to a file that is not there`);
  });
});
