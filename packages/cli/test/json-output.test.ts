import { spawn } from "node:child_process";
import { request } from "node:http";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { afterAll, describe, expect, it } from "vitest";
import { createProgram } from "../src/main.js";
import { INTENT_TEMPLATES } from "../src/intent/templates.js";
import { runCli, silentContext } from "./run.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";

const BUILT_ACP = fileURLToPath(new URL("../bin/acp.js", import.meta.url));

function leaves(command: Command, path: string[] = []): { path: string[]; command: Command }[] {
  if (command.commands.length === 0) return [{ path, command }];
  return command.commands.flatMap((sub) => leaves(sub, [...path, sub.name()]));
}

// their stdout is not theirs to print data on: the MCP stream (proxy), the agent's own (run)
const NO_JSON = ["proxy", "run"];

const all = leaves(await createProgram(silentContext())).filter(({ path }) => path.at(-1) !== "help");

describe("every command that prints data takes --json", () => {
  it.each(
    all
      .filter(({ path }) => !NO_JSON.includes(path.join(" ")))
      .map(({ path, command }) => [path.join(" "), command] as const),
  )("acp %s --json", (_name, command) => {
    expect(command.options.map((o) => o.long)).toContain("--json");
  });

  it("the two without it are the two whose stdout carries something else", () => {
    const without = all.filter(({ command }) => !command.options.some((o) => o.long === "--json"));
    expect(without.map(({ path }) => path.join(" ")).sort()).toEqual(NO_JSON);
  });
});

describe("acp intent new --json", () => {
  it("--list --json: every template with its summary and what it asks for", async () => {
    const out = await runCli(["intent", "new", "--list", "--json"]);
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toEqual(
      INTENT_TEMPLATES.map((t) => ({ name: t.name, summary: t.summary, asks: t.asks })),
    );
  });

  it("prints {template, out, intent} with the values named; the intent is what -o writes", async () => {
    const out = await runCli([
      "intent",
      "new",
      "-t",
      "pay-a-bill",
      "--trusted",
      "accounts=DE44500105175407324931",
      "--json",
    ]);
    expect(out.code).toBe(0);
    const made = JSON.parse(out.stdout) as { template: string; out: null; intent: { trusted_values: unknown } };
    expect(made.template).toBe("pay-a-bill");
    expect(made.out).toBeNull();
    expect(made.intent.trusted_values).toEqual({ accounts: ["DE44500105175407324931"] });
  });
});

describe("acp vault list on an empty vault", () => {
  const root = tempRoot("json-output");
  afterAll(root.cleanup);

  it("says so on stderr with what to do next; stdout stays empty, --json says names: []", async () => {
    const { home } = fixtureHome(root.dir);
    const env = envFor(home);
    const out = await runCli(["vault", "list"], { env });
    expect(out).toEqual({
      code: 0,
      stdout: "",
      stderr: 'the vault is empty: add a credential with `printf %s "$TOKEN" | acp vault set NAME`\n',
    });
    expect(JSON.parse((await runCli(["vault", "list", "--json"], { env })).stdout)).toEqual({ names: [] });
  });
});

describe("acp claim serve --json", () => {
  const root = tempRoot("claim-serve-json");
  afterAll(root.cleanup);

  it("prints one JSON line once listening: the port --port 0 chose answers, SIGTERM stops it with 0", async () => {
    const child = spawn(process.execPath, [BUILT_ACP, "claim", "serve", "--port", "0", "--json"], {
      env: { PATH: process.env["PATH"] ?? "", HOME: root.dir, ACP_HOME: `${root.dir}/home` },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    try {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).once("line", resolve);
        child.once("exit", () => reject(new Error("acp claim serve exited before printing")));
      });
      const info = JSON.parse(line) as {
        bind: string;
        port: number;
        admission: string;
        api: string;
        claim_page: string;
      };
      expect(info).toMatchObject({ bind: "127.0.0.1", admission: "pow+reputation" });
      expect(info.api).toBe(`http://api.localhost:${info.port}`);
      expect(info.claim_page).toBe(`http://admin.localhost:${info.port}/claim`);
      const status = await new Promise<number | undefined>((resolve, reject) => {
        const req = request(
          { host: "127.0.0.1", port: info.port, path: "/", headers: { host: `api.localhost:${info.port}` } },
          (res) => {
            res.resume();
            resolve(res.statusCode);
          },
        );
        req.once("error", reject);
        req.end();
      });
      expect(status).toBeGreaterThanOrEqual(200);
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
  });
});
