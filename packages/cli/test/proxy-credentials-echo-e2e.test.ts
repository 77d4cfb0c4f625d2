import { Buffer } from "node:buffer";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { runCli } from "./run.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const ACP = join(ROOT, "packages/cli/bin/acp.js");
const FIXTURE = join(ROOT, "packages/proxy/test/upstream/vault-leak-server.mjs");
// `/`, `&`, `<` and `>` are written otherwise by Go's and PHP's JSON encoders
const ENV_CANARY = "envcanary/a0b7e2f4&value<3377>";
const ARG_CANARY = "argcanary/77c1d0e9&value<5511>";

/** The ways an echoed canary could still be read: as it is, in other case, as hex, URL- or JSON-escaped, as base64. */
function spellings(canary: string): string[] {
  const hex = Buffer.from(canary).toString("hex");
  const json = JSON.stringify(canary).slice(1, -1);
  return [
    canary,
    canary.toUpperCase(),
    hex,
    hex.toUpperCase(),
    encodeURIComponent(canary),
    json.replace(/[<>&]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`),
    json.replace(/\//g, "\\/"),
    Buffer.from(canary).toString("base64").slice(0, 24),
    // cut in two, each half in its own part: the halves are not each a secret, but both in one answer are
    canary.slice(0, 14),
  ];
}

function expectNone(label: string, value: unknown, canary: string): void {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  for (const spelling of spellings(canary)) expect(text, `${label}: ${spelling}`).not.toContain(spelling);
}

/** What the fixture's `leak` tool does with the credential (see vault-leak-server.mjs). */
const FORMS = [
  "plain",
  "split",
  "split-three",
  "split-structured",
  "hex",
  "HEX",
  "upper",
  "lower",
  "go-html",
  "php-slash",
  "base64",
  "url",
  "structured",
  "meta",
  "image",
  "embedded",
  "blob",
  "iserror",
  "error",
  "throw",
  "log",
  "progress",
];

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe("an upstream echoes an injected vault value back in every form it can: none reaches the agent", () => {
  const root = tempRoot("proxy-credentials-echo");
  let home = "";
  let client: Client;
  let stderr = "";
  const logs: unknown[] = [];
  let tools: string[] = [];

  beforeAll(async () => {
    ({ home } = fixtureHome(root.dir));
    const env = envFor(home);
    expect((await runCli(["vault", "set", "ENV_TOKEN"], { env, stdin: `${ENV_CANARY}\n` })).code).toBe(0);
    expect((await runCli(["vault", "set", "ARG_TOKEN"], { env, stdin: `${ARG_CANARY}\n` })).code).toBe(0);
    writeFileSync(
      join(home, "policy.yml"),
      'version: "1"\ndefault_action: deny\nrules:\n  - id: all\n    match: { tool: "*" }\n    action: allow\n' +
        "  - id: reads\n    match: { tool: resources/read }\n    action: allow\n",
    );
    writeFileSync(
      join(home, "config.yml"),
      `proxy:
  upstream_servers:
    - name: envleak
      command: ${JSON.stringify(`${process.execPath} ${FIXTURE} LEAK_ENV`)}
    - name: argleak
      command: ${JSON.stringify(`${process.execPath} ${FIXTURE} UNSET_ENV`)}
credentials:
  - secret: ENV_TOKEN
    server: envleak
    inject: { env: LEAK_ENV }
  - secret: ARG_TOKEN
    server: argleak
    tool: "*"
    inject: { argument: token }
`,
    );
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [ACP, "proxy"],
      env: { PATH: process.env["PATH"] ?? "", ...env },
      stderr: "pipe",
    });
    transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    client = new Client({ name: "echo-agent", version: "1.0.0" });
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n));
    await client.connect(transport);
    tools = (await client.listTools()).tools.map((t) => t.name);
  }, 120_000);

  afterAll(() => {
    root.cleanup();
  });

  for (const [server, canary] of [
    ["envleak", ENV_CANARY],
    ["argleak", ARG_CANARY],
  ] as const) {
    it(`${server}: every form of the tool's answer, its progress and its log lines hide the value`, async () => {
      const name = tools.find((t) => t.includes(server)) ?? `${server}__leak`;
      let redacted = 0;
      const failed: string[] = [];
      for (const form of FORMS) {
        const progress: unknown[] = [];
        let answer: unknown;
        try {
          // `zz` + form: a word no result holds (the proxy would ask before sending a value it read back)
          answer = await client.callTool({ name, arguments: { form: `zz${form}` } }, undefined, {
            onprogress: (p) => void progress.push(p),
          });
        } catch (err) {
          failed.push(form);
          answer = { error: err instanceof Error ? err.message : String(err) };
        }
        expectNone(`${server} ${form}`, answer, canary);
        expectNone(`${server} ${form} progress`, progress, canary);
        if (JSON.stringify(answer).includes("[REDACTED]")) redacted++;
      }
      // only the upstream's own JSON-RPC error is one: an image or blob holding the value comes back valid
      expect(failed).toEqual(["throw"]);
      // the fixture did send the value back (so the test tested something): nearly every answer was redacted
      expect(redacted).toBeGreaterThanOrEqual(FORMS.length - 4);
      expect(logs.length).toBeGreaterThan(0);
      expectNone(`${server} logs`, logs, canary);
    });
  }

  it("listings, resources, prompts and completions hide the variable's value", async () => {
    const listed = await client.listTools();
    expect(JSON.stringify(listed)).toContain("configured as [REDACTED]");
    expectNone("tools/list", listed, ENV_CANARY);
    const resources = await client.listResources();
    expectNone("resources/list", resources, ENV_CANARY);
    expect(resources.resources.length).toBeGreaterThan(0);
    for (const r of resources.resources) {
      // the text content and the blob's bytes come with the value hidden, the blob still base64
      const read = await client.readResource({ uri: r.uri });
      expectNone(`read ${r.uri}`, read, ENV_CANARY);
      const texts = read.contents.map((c) =>
        "blob" in c ? Buffer.from(c.blob, "base64").toString("utf8") : "text" in c ? c.text : "",
      );
      expect(texts).toEqual(["TOKEN=[REDACTED]", "TOKEN=[REDACTED]"]);
    }
    const prompts = (await client.listPrompts()).prompts;
    expectNone("prompts/list", prompts, ENV_CANARY);
    for (const p of prompts) {
      expectNone(`prompt ${p.name}`, await client.getPrompt({ name: p.name }), ENV_CANARY);
      const completion = await client.complete({
        ref: { type: "ref/prompt", name: p.name },
        argument: { name: "x", value: "" },
      });
      expectNone(`complete ${p.name}`, completion, ENV_CANARY);
    }
  });

  it("the proxy's log, the audit and the home's files hold neither value in any spelling", async () => {
    await client.close();
    expect(stderr).toContain("LEAK_ENV=[REDACTED]");
    expectNone("stderr", stderr, ENV_CANARY);
    expectNone("stderr", stderr, ARG_CANARY);
    const audit = readFileSync(join(home, "audit.jsonl"), "utf8");
    expect(audit).toContain("ARG_TOKEN");
    for (const file of filesUnder(home)) {
      const text = readFileSync(file, "latin1");
      expectNone(file, text, ENV_CANARY);
      expectNone(file, text, ARG_CANARY);
    }
  });
});
