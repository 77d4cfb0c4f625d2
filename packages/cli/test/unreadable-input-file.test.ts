import { afterAll, describe, expect, it } from "vitest";
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "./run.js";

// A directory stands for a file that is there and cannot be read: root ignores file permissions, so a
// chmod 000 file would read fine in CI as root, where a directory never does.
const home = mkdtempSync(join(tmpdir(), "acp-unreadable-input-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const env = { HOME: home, ACP_HOME: home };
writeFileSync(join(home, "policy.yml"), 'version: "1"\nrules: []\n');
mkdirSync(join(home, "dir-policy.yml"));
mkdirSync(join(home, "dir-graph.json"));

describe("a file that is there and cannot be read: exit 1 (I/O) in acp policy … and acp graph … alike", () => {
  it("acp policy validate: the reference the graph commands follow", async () => {
    const out = await runCli(["policy", "validate", "dir-policy.yml"], { env, cwd: home });
    expect(out.code).toBe(1);
    expect(out.stderr).toBe("acp: cannot read policy `dir-policy.yml`: not a file\n");
  });

  it.each([
    ["graph check --graph", ["graph", "check", "email", "read", "--graph", "dir-graph.json"]],
    ["graph lint", ["graph", "lint", "dir-graph.json"]],
    ["graph lint --json", ["graph", "lint", "dir-graph.json", "--json"]],
    ["graph review --graph", ["graph", "review", "--graph", "dir-graph.json"]],
    ["graph review --status --graph", ["graph", "review", "--status", "--graph", "dir-graph.json"]],
  ])("acp %s exits 1 naming the file as given, not as invalid input", async (_name, argv) => {
    const out = await runCli(argv, { env, cwd: home });
    expect(out.code).toBe(1);
    expect(out.stderr).toBe("acp: cannot read consent graph `dir-graph.json`: not a file\n");
    // with --json, stdout carries the same error as JSON (docs/reference/cli.md, exit codes)
    expect(out.stdout).toBe(
      argv.includes("--json")
        ? `${JSON.stringify({ error: { message: "cannot read consent graph `dir-graph.json`: not a file", exit_code: 1 } })}\n`
        : "",
    );
  });

  it("the home's default graph unreadable is exit 1 too, named by its path", async () => {
    const other = mkdtempSync(join(tmpdir(), "acp-unreadable-home-"));
    try {
      mkdirSync(join(other, "consent-graph.json"));
      for (const argv of [
        ["graph", "check", "email", "read"],
        ["graph", "lint"],
        ["graph", "review"],
      ]) {
        const out = await runCli(argv, { env: { HOME: other, ACP_HOME: other }, cwd: other });
        expect(out.code, argv.join(" ")).toBe(1);
        expect(out.stderr).toBe(
          `acp: cannot read consent graph \`${join(other, "consent-graph.json")}\`: not a file\n`,
        );
      }
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});

describe("a home file that is there and cannot be read stops acp proxy with exit 1 and its name, not an internal error", () => {
  it.each([
    ["policy.yml", "policy"],
    ["consent-graph.json", "consent graph"],
  ])("the home's %s", async (file, what) => {
    const other = mkdtempSync(join(tmpdir(), "acp-unreadable-home-"));
    try {
      mkdirSync(join(other, file));
      const out = await runCli(["proxy", "--upstream", "echo hi"], {
        env: { HOME: other, ACP_HOME: other },
        cwd: other,
      });
      expect(out.code).toBe(1);
      expect(out.stderr).toContain(`acp: cannot read ${what} \`${join(other, file)}\`: not a file\n`);
      expect(out.stderr).not.toContain("internal error");
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it("the home's state.db a symbolic link planted there: refused, its target neither created nor written", async () => {
    const other = mkdtempSync(join(tmpdir(), "acp-unreadable-home-"));
    try {
      writeFileSync(join(other, "policy.yml"), 'version: "1"\nrules: []\n');
      const target = join(other, "elsewhere.db");
      symlinkSync(target, join(other, "state.db"));
      const out = await runCli(["proxy", "--upstream", "echo hi"], {
        env: { HOME: other, ACP_HOME: other },
        cwd: other,
      });
      expect(out.code).toBe(1);
      expect(out.stderr).toContain(
        `acp: \`${join(other, "state.db")}\` is a symbolic link: a home file must be a regular file you own (remove it)\n`,
      );
      expect(out.stderr).not.toContain("internal error");
      expect(existsSync(target)).toBe(false);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it("acp intent new -o into a directory that does not exist says so (exit 1)", async () => {
    const out = await runCli(["intent", "new", "--template", "triage-my-inbox", "-o", "no-such-dir/x.yml"], {
      env,
      cwd: home,
    });
    expect(out.code).toBe(1);
    expect(out.stderr).toBe(
      `acp: cannot write \`${join(home, "no-such-dir/x.yml")}\`: no such directory (create \`${join(home, "no-such-dir")}\` first)\n`,
    );
  });
});

describe("every other command names a file it cannot read and why, in words (not ENOENT, EISDIR or nothing)", () => {
  const key = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
  mkdirSync(join(home, "dir-event.json"));

  it.each([
    [
      "proof verify FILE",
      ["proof", "verify", "nope.json", "--public-key", key],
      "cannot read proof `nope.json`: no such file",
    ],
    [
      "proof verify DIR",
      ["proof", "verify", "dir-event.json", "--public-key", key],
      "cannot read proof `dir-event.json`: not a file",
    ],
    [
      "proof verify --public-key FILE",
      ["proof", "verify", "nope.json", "--public-key", "nope.pub"],
      "cannot read public key `nope.pub`: no such file (give 64 lowercase hex digits, or a file holding them or a PEM key)",
    ],
    ["check DIR", ["check", "dir-event.json"], "cannot read `dir-event.json`: not a file"],
    [
      "claim publish --file",
      ["claim", "publish", "--provider", "http://127.0.0.1:9", "--file", "nope.json"],
      "cannot read `nope.json`: no such file",
    ],
    [
      "claim issuer issue --key",
      ["claim", "issuer", "issue", "--subject", "a", "--audience", "http://api.localhost:8080", "--key", "nope.key"],
      `cannot read the issuer key \`${join(home, "nope.key")}\`: no such file (create one with acp claim issuer keygen)`,
    ],
  ])("acp %s exits 1", async (_name, argv, message) => {
    const out = await runCli(argv, { env, cwd: home });
    expect(out.code).toBe(1);
    expect(out.stderr).toBe(`acp: ${message}\n`);
  });

  it("acp proof verify --public-key in upper case is a usage error that says so, not a file it cannot read", async () => {
    const out = await runCli(["proof", "verify", "nope.json", "--public-key", key.toUpperCase()], { env, cwd: home });
    expect(out.code).toBe(2);
    expect(out.stderr).toBe(
      `acp: --public-key: \`${key.toUpperCase()}\` has upper-case hex digits; give the key in lower case\n`,
    );
  });
});

describe("--config naming a directory says so, exit 1 (not EISDIR)", () => {
  mkdirSync(join(home, "dir-config.yml"));
  const said =
    `\`${join(home, "dir-config.yml")}\` is a directory, not a config file: ` +
    "name a YAML file (`acp init` writes one: $ACP_HOME/config.yml)";

  it.each([
    ["proxy", ["proxy", "--upstream", "echo hi", "--config", "dir-config.yml"]],
    ["run", ["run", "--config", "dir-config.yml", "--", "true"]],
    ["policy simulate", ["policy", "simulate", "--tool", "x", "--config", "dir-config.yml"]],
    ["policy test", ["policy", "test", "--config", "dir-config.yml", "policy.yml"]],
  ])("acp %s", async (_name, argv) => {
    const out = await runCli(argv, { env, cwd: home });
    expect(out.code).toBe(1);
    expect(out.stderr).toBe(`acp: ${said}\n`);
  });

  it("acp doctor fails the config check with the same words", async () => {
    const out = await runCli(["doctor", "--config", "dir-config.yml"], { env, cwd: home });
    expect(out.code).toBe(1);
    expect(out.stdout + out.stderr).toContain(said);
    expect(out.stdout + out.stderr).not.toContain("EISDIR");
  });
});
