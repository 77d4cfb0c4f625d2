import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CliError } from "../src/exit-codes.js";
import { readConfigFile } from "../src/wiring/config-file.js";
import { configInUse } from "../src/wiring/config-in-use.js";
import { checkServeConfig } from "../src/wiring/serve-config.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";
import { runCli } from "./run.js";

const root = tempRoot("config-section-keys");
afterAll(root.cleanup);
let n = 0;

function configFile(text: string): string {
  const path = join(root.dir, `config-${++n}.yml`);
  writeFileSync(path, text);
  return path;
}

function problems(path: string): { code: number; lines: string[] } {
  try {
    configInUse(readConfigFile(path, true));
  } catch (err) {
    if (err instanceof CliError) return { code: err.exitCode, lines: err.message.split("\n") };
    throw err;
  }
  throw new Error("no error");
}

describe("config.yml: an unknown key in a section is refused at FILE:LINE:COL with the closest key", () => {
  it("sandbox: a misspelt max_processes is refused, not silently left at the default cap (exit 4)", () => {
    const path = configFile('version: "1"\nsandbox:\n  max_proceses: 10\n  colour: red\n');
    const got = problems(path);
    expect(got.code).toBe(4);
    expect(got.lines).toEqual([
      `${path}:3:17: unknown key \`sandbox.max_proceses\` (did you mean \`sandbox.max_processes\`?)`,
      `${path}:4:11: unknown key \`sandbox.colour\` (expected allow_egress, max_processes, max_memory, max_cpu)`,
    ]);
  });

  it("sandbox: a misspelt max_memory or max_cpu is refused with the key meant, not left at no cap", () => {
    const path = configFile('version: "1"\nsandbox:\n  max_memroy: 2G\n  maxcpu: 1\n');
    const got = problems(path);
    expect(got.code).toBe(4);
    expect(got.lines).toEqual([
      `${path}:3:15: unknown key \`sandbox.max_memroy\` (did you mean \`sandbox.max_memory\`?)`,
      `${path}:4:11: unknown key \`sandbox.maxcpu\` (did you mean \`sandbox.max_cpu\`?)`,
    ]);
  });

  it("serve and storage: a misspelt insecure_plain_http or connect_wait is refused with the key meant", () => {
    const values = { serve: { insecure_plain_htp: true }, storage: { conect_wait: 60 } };
    expect(checkServeConfig(values)).toEqual({
      ok: false,
      problems: [
        "serve.insecure_plain_htp: unknown key (did you mean `serve.insecure_plain_http`?)",
        "storage.conect_wait: unknown key (did you mean `storage.connect_wait`?)",
      ],
    });
  });

  it("sandbox: its own keys load", () => {
    const path = configFile('version: "1"\nsandbox:\n  max_processes: 10\n  allow_egress: ["example.com:443"]\n');
    expect(configInUse(readConfigFile(path, true)).proxy).toBeDefined();
  });

  it("telegram, graph and credentials suggest the key meant", () => {
    const path = configFile(
      'version: "1"\ntelegram:\n  chat_idd: "1"\ngraph:\n  mapingg: {}\ncredentials:\n  - secret: s\n    servr: x\n',
    );
    const got = problems(path);
    expect(got.code).toBe(4);
    expect(got.lines).toContain(`${path}:3:13: unknown key \`telegram.chat_idd\` (did you mean \`telegram.chat_id\`?)`);
    expect(got.lines).toContain(`${path}:5:12: unknown key \`graph.mapingg\` (did you mean \`graph.mapping\`?)`);
    expect(got.lines).toContain(`${path}:7:5: credentials.0: unknown key \`servr\` (did you mean \`server\`?)`);
  });

  it("proxy, an upstream server, session and redaction suggest the key meant too", () => {
    const path = configFile(
      'version: "1"\nproxy:\n  prot: 1\n  upstream_servers:\n    - name: a\n      command: x\n      crwd: /\nsession:\n  escalate_after_instruction: true\nredaction:\n  value: []\n',
    );
    const got = problems(path);
    expect(got.code).toBe(4);
    expect(got.lines).toContain(`${path}:3:9: unknown key \`prot\` in \`proxy\` (did you mean \`port\`?)`);
    expect(got.lines).toContain(`${path}:7:13: unknown key \`crwd\` in upstream server (did you mean \`cwd\`?)`);
    expect(got.lines).toContain(
      `${path}:9:31: \`session.escalate_after_instruction\`: unknown key \`escalate_after_instruction\` (did you mean \`escalate_after_instructions\`?)`,
    );
    expect(got.lines).toContain(`${path}:11:10: unknown key \`redaction.value\` (did you mean \`redaction.values\`?)`);
  });

  it("acp doctor: serve: suggests the key meant", async () => {
    const { home } = fixtureHome(root.dir);
    writeFileSync(join(home, "config.yml"), 'version: "1"\nserve:\n  prot: 8787\n');
    const out = await runCli(["doctor", "--json"], { env: envFor(home) });
    const checks = (JSON.parse(out.stdout) as { checks: { status: string; name: string; detail: string }[] }).checks;
    expect(checks.filter((c) => c.name === "serve" && c.status === "fail").map((c) => c.detail)).toEqual([
      "config.yml: serve.prot: unknown key (did you mean `serve.port`?)",
    ]);
  });

  it("acp doctor fails its config check on a sandbox typo", async () => {
    const { home } = fixtureHome(root.dir);
    const path = configFile('version: "1"\nsandbox:\n  max_proceses: 10\n');
    const out = await runCli(["doctor", "--json", "--config", path], { env: envFor(home) });
    expect(out.code).toBe(1);
    const checks = (JSON.parse(out.stdout) as { checks: { status: string; name: string; detail: string }[] }).checks;
    expect(checks.filter((c) => c.name === "config")).toEqual([
      {
        status: "fail",
        name: "config",
        detail: `${path}:3:17: unknown key \`sandbox.max_proceses\` (did you mean \`sandbox.max_processes\`?)`,
      },
    ]);
  });
});
