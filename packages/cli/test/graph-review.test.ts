import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli } from "./run.js";

interface SavedRecord {
  domains: Record<string, { reviewed_at: string }>;
}
interface StatusRow {
  domain: string;
  decayed: boolean;
  reviewed_at: string | null;
}

const EXAMPLE = fileURLToPath(new URL("../../../spec/examples/consent-graph.json", import.meta.url));
let home: string;
let env: Record<string, string>;
const record = () => join(home, "consent-graph.reviews.json");

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "acp-graph-review-"));
  env = { HOME: home, ACP_HOME: home };
  copyFileSync(EXAMPLE, join(home, "consent-graph.json"));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

describe("acp graph review", () => {
  it("records every domain with mode 0600 and leaves the graph file unchanged", async () => {
    const before = readFileSync(join(home, "consent-graph.json"), "utf8");
    const out = await runCli(["graph", "review"], { env });
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("reviewed email, imessage,");
    expect(out.stdout).toContain("until 2026-02-14T12:00:00.000Z");
    const saved = JSON.parse(readFileSync(record(), "utf8")) as SavedRecord;
    expect(Object.keys(saved.domains)).toHaveLength(10);
    expect(saved.domains["email"]?.reviewed_at).toBe("2026-01-15T12:00:00.000Z");
    expect(statSync(record()).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(home, "consent-graph.json"), "utf8")).toBe(before);
  });

  it("records named domains only, and decay follows the record", async () => {
    expect((await runCli(["graph", "review", "email"], { env })).code).toBe(0);
    expect((await runCli(["graph", "check", "email", "read"], { env })).code).toBe(0);
    expect((await runCli(["graph", "check", "calendar", "read"], { env })).code).toBe(3);
    const later = await runCli(["graph", "check", "email", "read"], { env, now: new Date("2026-02-15T12:00:00Z") });
    expect(later.code).toBe(3);
  });

  it("a decayed domain's hint carries the --graph FILE it was judged with (graph check, policy simulate)", async () => {
    mkdirSync(join(home, "team"));
    copyFileSync(EXAMPLE, join(home, "team", "graph.json"));
    const hint = "(run `acp graph review email --graph team/graph.json` to re-approve)";
    const check = await runCli(["graph", "check", "email", "read", "0.9", "--graph", "team/graph.json"], {
      env,
      cwd: home,
    });
    expect(check.stdout).toContain(hint);
    writeFileSync(join(home, "policy.yml"), 'version: "1"\nrules: []\n');
    const simulate = await runCli(
      ["policy", "simulate", "--tool", "x", "--domain", "email", "--action", "read", "--graph", "team/graph.json"],
      { env, cwd: home },
    );
    expect(simulate.stdout).toContain(hint);
    // the home's own graph: no --graph to carry
    const own = await runCli(["graph", "check", "email", "read", "0.9"], { env, cwd: home });
    expect(own.stdout).toContain("(run `acp graph review email` to re-approve)");
  });

  it("refuses an unknown domain with a suggestion and writes nothing", async () => {
    const out = await runCli(["graph", "review", "emial"], { env });
    expect(out.code).toBe(4);
    expect(out.stderr).toContain("unknown domain `emial` in the consent graph (did you mean `email`)");
    expect(out.stderr.startsWith("unknown domain")).toBe(true);
    expect(() => statSync(record())).toThrow();
  });

  it("refuses to overwrite a malformed record", async () => {
    writeFileSync(record(), "{broken");
    const out = await runCli(["graph", "review"], { env });
    expect(out.code).toBe(4);
    expect(out.stderr).toContain("fix or delete");
    expect(readFileSync(record(), "utf8")).toBe("{broken");
  });

  it("a review record that cannot be read (a directory) is an I/O error, exit 1 and named, not invalid input", async () => {
    mkdirSync(record());
    const out = await runCli(["graph", "review"], { env });
    expect(out.code).toBe(1);
    expect(out.stderr).toBe(`acp: no review recorded: cannot read review record \`${record()}\`: not a file\n`);
    expect(statSync(record()).isDirectory()).toBe(true);
    const status = await runCli(["graph", "review", "--status"], { env });
    expect(status.code).toBe(0);
    expect(status.stderr).toContain(`cannot read review record \`${record()}\`: not a file`);
  });

  it("--status shows which domains have decayed", async () => {
    await runCli(["graph", "review", "email"], { env });
    const out = await runCli(["graph", "review", "--status", "--json"], { env });
    const status = JSON.parse(out.stdout) as { domains: StatusRow[] };
    expect(status.domains.find((d) => d.domain === "email")).toMatchObject({ decayed: false });
    expect(status.domains.find((d) => d.domain === "cron")).toMatchObject({
      decayed: true,
      reviewed_at: null,
    });
  });

  it("a VIP contact added after the review expires it: --status says changed since, graph check asks", async () => {
    expect((await runCli(["graph", "review"], { env })).code).toBe(0);
    expect((await runCli(["graph", "check", "email", "read"], { env })).code).toBe(0);
    const file = join(home, "consent-graph.json");
    const graph = JSON.parse(readFileSync(file, "utf8")) as { vip_contacts: Record<string, string> };
    graph.vip_contacts["new"] = "someone@example.com";
    writeFileSync(file, JSON.stringify(graph));
    const out = await runCli(["graph", "review", "--status", "--json"], { env });
    const status = JSON.parse(out.stdout) as { domains: (StatusRow & { changed_since_review: boolean })[] };
    expect(status.domains.find((d) => d.domain === "email")).toMatchObject({
      decayed: true,
      changed_since_review: true,
    });
    const check = await runCli(["graph", "check", "email", "read"], { env });
    expect(check.code).toBe(3);
    expect(check.stdout).toContain("the VIP contacts changed since its last review");
  });
});
