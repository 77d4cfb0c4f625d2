import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { homePaths } from "@acp/store";
import { checkIsolation } from "../src/doctor/isolation.js";
import { runCli } from "./run.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";

const root = tempRoot("doctor");
afterAll(root.cleanup);
const EXAMPLE_GRAPH = fileURLToPath(new URL("../../../spec/examples/consent-graph.json", import.meta.url));

interface Check {
  status: string;
  name: string;
  detail: string;
}

async function doctorJson(args: string[], env: Record<string, string>): Promise<{ code: number; checks: Check[] }> {
  const r = await runCli(["doctor", "--json", ...args], { env });
  return { code: r.code, checks: (JSON.parse(r.stdout) as { checks: Check[] }).checks };
}

/** A config with a bad value in every key the proxy checks (and a plain secret). */
const BAD_CONFIG = [
  'version: "1"',
  "channel: fax",
  "credentials: 7",
  "redaction:\n  values: ['(']",
  "session:\n  reads: { after_instructions: sometimes }\n  kill_switch: 3",
  "graph:\n  threshold: 2\n  mapping:\n    - { tool: send_email, domian: email, action: send }",
  "proxy:\n  port: -1",
  "",
].join("\n");

function line(stdout: string, name: string): string {
  return stdout.split("\n").find((l) => l.split(/\s{2,}/)[1] === name) ?? "";
}

describe("acp doctor", () => {
  it("reports a healthy home, one `status  name  detail` line per check, and exits 0", async () => {
    const { home } = fixtureHome(root.dir);
    const r = await runCli(["doctor"], { env: envFor(home) });
    expect(r.code).toBe(0);
    for (const l of r.stdout.trim().split("\n")) expect(l).toMatch(/^(ok {2}|warn|fail) {2}\S.*? {2}\S/);
    expect(line(r.stdout, "permissions keys/private.key")).toMatch(/^ok {4}/);
    expect(line(r.stdout, "policy")).toMatch(/^ok {4}policy {2}\d+ rules, default ask/);
    expect(line(r.stdout, "vault")).toMatch(/^ok {4}vault {2}0 entries/);
    expect(line(r.stdout, "session")).toMatch(
      /^ok {4}session {2}changes ask after injected text; reads ask after injected text$/,
    );
    expect(r.stdout).toMatch(/^warn {2}private key {2}weak scrypt parameters/m);
    expect(line(r.stdout, "isolation")).toMatch(/^(ok {2}|warn) {2}isolation/);
  });

  it("says it did not open an encrypted key without a passphrase, and does not ask", async () => {
    const { home } = fixtureHome(root.dir);
    const r = await runCli(["doctor"], { env: envFor(home, null) });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/warn {2}private key {2}encrypted; not opened \(set ACP_PASSPHRASE/);
  });

  it("fails on a readable private key, a wrong passphrase, a broken policy and a plain config secret", async () => {
    const { home } = fixtureHome(root.dir);
    const p = homePaths(home);
    chmodSync(p.privateKey, 0o644);
    writeFileSync(p.policy, 'version: "1"\ndefault_action: alow\n');
    writeFileSync(p.config, 'version: "1"\ntelegram:\n  bot_token: "123:plain"\n');
    const r = await runCli(["doctor", "--json"], { env: envFor(home, "wrong") });
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout) as {
      healthy: boolean;
      checks: { status: string; name: string; detail: string }[];
    };
    expect(out.healthy).toBe(false);
    const failed = out.checks.filter((c) => c.status === "fail").map((c) => c.name);
    expect(failed).toEqual(["permissions keys/private.key", "private key", "config", "policy"]);
    expect(out.checks.find((c) => c.name === "policy")?.detail).toMatch(/^policy\.yml:2:\d+: /);
    expect(r.stdout).not.toContain("123:plain");

    // the approvers' token written in clear is a plain secret too, named and never shown
    writeFileSync(p.config, 'version: "1"\nserve:\n  approver_token: "approver-plain-0123456789"\n');
    const approver = await runCli(["doctor", "--json"], { env: envFor(home) });
    const config = (JSON.parse(approver.stdout) as { checks: { name: string; detail: string }[] }).checks.find(
      (c) => c.name === "config",
    );
    expect(config?.detail).toContain("plain secret in `serve.approver_token`");
    expect(approver.stdout).not.toContain("approver-plain-0123456789");
  });

  it("says a chosen channel's plain secret once: in the channel's check, where it is and what to run", async () => {
    const { home } = fixtureHome(root.dir);
    const p = homePaths(home);
    writeFileSync(p.config, 'version: "1"\nchannel: telegram\ntelegram:\n  bot_token: "123:plain"\n  chat_id: "42"\n');
    const chosen = await doctorJson([], envFor(home));
    expect(chosen.code).toBe(1);
    const failed = chosen.checks.filter((c) => c.status === "fail");
    expect(failed.map((c) => c.name)).toEqual(["channel"]);
    expect(failed[0]?.detail).toBe(
      `${p.config}:4:14: \`telegram.bot_token\` in config.yml is not sealed (run \`acp config set-secret telegram.bot_token\`)`,
    );
    expect(chosen.checks.find((c) => c.name === "config")?.detail).toBe(
      `${p.config} parses; no other plain secrets (see below)`,
    );
    // a plain secret of a channel not chosen has no check of its own: the config check says it
    writeFileSync(
      p.config,
      'version: "1"\nchannel: telegram\ntelegram:\n  bot_token: "123:plain"\n  chat_id: "42"\nwebhook:\n  secret: "whsec-plain-0123456789"\n',
    );
    const both = await doctorJson([], envFor(home));
    expect(both.checks.filter((c) => c.status === "fail").map((c) => c.name)).toEqual(["config", "channel"]);
    expect(both.checks.find((c) => c.name === "config")?.detail).toBe(
      `plain secret in \`webhook.secret\` of ${p.config} (seal it with \`acp config set-secret\`)`,
    );
  });

  it("fails on a `session:` block the proxy would refuse, naming the key", async () => {
    const { home } = fixtureHome(root.dir);
    writeFileSync(homePaths(home).config, 'version: "1"\nsession:\n  reads: { after_instructions: sometimes }\n');
    const r = await runCli(["doctor", "--json"], { env: envFor(home) });
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout) as { checks: { status: string; name: string; detail: string }[] };
    const session = out.checks.find((c) => c.name === "session");
    expect(session?.status).toBe("fail");
    expect(session?.detail).toContain("session.reads.after_instructions");
    expect(session?.detail).toContain("sometimes");
  });

  it("checks config.yml's serve: and storage: sections as acp serve does, and says SQLite when no storage URL is set", async () => {
    const { home } = fixtureHome(root.dir);
    const healthy = await doctorJson([], envFor(home));
    expect(healthy.code).toBe(0);
    expect(healthy.checks.find((c) => c.name === "serve")).toEqual({
      status: "ok",
      name: "serve",
      detail: "acp serve: port 8787, bind 127.0.0.1, decision audit queued",
    });
    expect(healthy.checks.find((c) => c.name === "storage")).toEqual({
      status: "ok",
      name: "storage",
      detail: `SQLite ${join(home, "state.db")} (no storage URL set)`,
    });
    expect(healthy.checks.at(-1)?.name).toBe("isolation");

    writeFileSync(
      homePaths(home).config,
      'version: "1"\nserve:\n  prot: 8787\n  port: 99999\n  decision_audit: sometimes\nstorage: postgres://x\n',
    );
    const bad = await doctorJson([], envFor(home));
    expect(bad.code).toBe(1);
    expect(bad.checks.filter((c) => c.name === "serve").map((c) => [c.status, c.detail])).toEqual([
      ["fail", "config.yml: serve.prot: unknown key (did you mean `serve.port`?)"],
      ["fail", "config.yml: storage: must be a mapping (of url, connect_wait)"],
      ["fail", "config.yml: serve.port: `99999` is not a port (0 to 65535; 0 picks a free one)"],
      ["fail", "config.yml: serve.decision_audit: unknown value `sometimes` (expected queued or durable)"],
    ]);
  });

  it("warns about a password written in storage.url (saying how to pass it instead) and fails when the database does not answer, never printing the password", async () => {
    const { home } = fixtureHome(root.dir);
    writeFileSync(homePaths(home).config, 'version: "1"\nstorage:\n  url: postgres://acp:hunter2pw@127.0.0.1:1/acp\n');
    const r = await runCli(["doctor"], { env: envFor(home) });
    expect(r.code).toBe(1);
    expect(line(r.stdout, "storage.url")).toMatch(
      /^warn {2}storage\.url {2}config\.yml storage\.url holds a password \(postgres:\/\/acp:\*\*\*@127\.0\.0\.1:1\/acp\).*ACP_STORAGE_URL instead/,
    );
    expect(line(r.stdout, "storage")).toMatch(
      /^fail {2}storage {2}config\.yml storage\.url: cannot reach PostgreSQL at postgres:\/\/acp:\*\*\*@127\.0\.0\.1:1\/acp \(cannot connect/,
    );
    expect(r.stdout + r.stderr).not.toContain("hunter2pw");

    // a ?password= parameter is a password too; ACP_STORAGE_URL is the one checked, and said to win
    writeFileSync(
      homePaths(home).config,
      'version: "1"\nstorage:\n  url: "postgres://acp@db/acp?password=hunter2pw"\n',
    );
    const env = await runCli(["doctor"], {
      env: { ...envFor(home), ACP_STORAGE_URL: "postgres://acp@127.0.0.1:1/acp" },
    });
    expect(line(env.stdout, "storage.url")).toMatch(/^warn {2}storage\.url {2}.*password=\*\*\*/);
    expect(line(env.stdout, "storage")).toMatch(/^fail {2}storage {2}ACP_STORAGE_URL: cannot reach PostgreSQL/);
    expect(env.stdout + env.stderr).not.toContain("hunter2pw");

    // the same URL without a password: no warning
    writeFileSync(homePaths(home).config, 'version: "1"\nstorage:\n  url: postgres://acp@127.0.0.1:1/acp\n');
    expect(line((await runCli(["doctor"], { env: envFor(home) })).stdout, "storage.url")).toBe("");
  });

  it("fails when the home does not exist, saying to run acp init", async () => {
    const home = join(root.dir, "missing");
    const r = await runCli(["doctor"], { env: envFor(home) });
    expect(r.code).toBe(1);
    expect(line(r.stdout, "home")).toBe(
      `fail  home  \`${home}\` does not exist: run \`acp init\` to create the home there (or set ACP_HOME to the home you made)`,
    );
  });

  // before, a directory that merely existed was taken for a home: an empty one or one holding only the
  // pins.json acp proxy keeps before acp init got "ok  home" and a failure per missing file, the audit check
  // and all, while acp proxy and acp pending (isExistingHome) took it for no home
  it("fails an empty directory and one holding only pins.json as no home yet, with one home check naming acp init", async () => {
    const empty = join(root.dir, "empty");
    mkdirSync(empty);
    const pins = join(root.dir, "pins-only");
    mkdirSync(pins);
    writeFileSync(join(pins, "pins.json"), "{}\n");
    const missing = "is no acp home yet: it holds no config.yml, policy.yml, keys/ or vault.json";
    const cases: [string, string][] = [
      [empty, `${missing} (the directory is empty)`],
      [pins, `${missing} (pins.json there is what acp proxy keeps before acp init; acp init keeps it)`],
    ];
    for (const [home, detail] of cases) {
      const r = await doctorJson([], envFor(home));
      expect(r.code).toBe(1);
      const names = r.checks.map((c) => c.name);
      expect(names).not.toContain("audit log");
      expect(names.filter((n) => n.startsWith("permissions") || n.endsWith("key") || n === "policy")).toEqual([]);
      expect(r.checks[0]).toEqual({
        status: "fail",
        name: "home",
        detail: `\`${home}\` ${detail}; run \`acp init\` to make it one (until then acp proxy audits nothing and keeps its state in memory)`,
      });
      expect(r.checks.filter((c) => c.status === "fail").map((c) => c.name)).toEqual(["home"]);
    }
    // doctor changed nothing there
    expect(readdirSync(empty)).toEqual([]);
    expect(readdirSync(pins)).toEqual(["pins.json"]);
  });

  it("fails a home path that is a file, saying so", async () => {
    const file = join(root.dir, "a-file");
    writeFileSync(file, "");
    const r = await doctorJson([], envFor(file));
    expect(r.code).toBe(1);
    expect(r.checks[0]?.detail).toBe(
      `\`${file}\` is not a directory: set ACP_HOME to your home, or move the file away and run \`acp init\``,
    );
  });

  it("checks a real home in full, and one written by hand (a policy only) as a home too", async () => {
    const { home } = fixtureHome(root.dir);
    const full = await doctorJson([], envFor(home));
    expect(full.checks[0]).toEqual({ status: "ok", name: "home", detail: home });
    expect(full.checks.map((c) => c.name)).toContain("audit log");
    const byHand = join(root.dir, "by-hand");
    mkdirSync(byHand, { mode: 0o700 });
    writeFileSync(join(byHand, "policy.yml"), readFileSync(homePaths(home).policy), { mode: 0o600 });
    const r = await doctorJson([], envFor(byHand));
    expect(r.checks[0]).toEqual({ status: "ok", name: "home", detail: byHand });
    // its missing keys are named as the proxy would name them
    expect(r.checks.find((c) => c.name === "public key")?.status).toBe("fail");
  });

  it("fails a key with scrypt parameters below the floor in the words acp proxy and acp vault use", async () => {
    const { home } = fixtureHome(root.dir);
    const p = homePaths(home);
    const key = JSON.parse(readFileSync(p.privateKey, "utf8")) as { kdf: { log_n: number } };
    key.kdf.log_n = 10;
    writeFileSync(p.privateKey, JSON.stringify(key));
    const r = await runCli(["doctor"], { env: envFor(home) });
    expect(r.code).toBe(1);
    const doctor = line(r.stdout, "private key");
    expect(doctor).toMatch(
      /^fail {2}private key {2}private key file: scrypt parameters too weak \(N = 2\^10, r = 8, p = 1;/,
    );
    const vault = await runCli(["vault", "list"], { env: envFor(home) });
    expect(vault.code).toBe(1);
    expect(vault.stderr).toContain(doctor.split(/ {2}/)[2]);
    expect(doctor).toContain("acp init --force");
  });

  it("fails a private key or a vault others can read, with the chmod that fixes it", async () => {
    const { home } = fixtureHome(root.dir);
    const p = homePaths(home);
    expect((await runCli(["vault", "set", "A"], { env: envFor(home), stdin: "a" })).code).toBe(0);
    chmodSync(p.vault, 0o604);
    const { code, checks } = await doctorJson([], envFor(home));
    expect(code).toBe(1);
    const detail = (name: string): string => checks.find((c) => c.name === name)?.detail ?? "";
    expect(detail("permissions vault.json")).toContain(`run \`chmod 600 ${p.vault}\``);
    expect(detail("vault")).toContain(`run \`chmod 600 ${p.vault}\``);
    chmodSync(p.vault, 0o600);
    chmodSync(p.privateKey, 0o644);
    const again = await doctorJson([], envFor(home));
    const key = again.checks.find((c) => c.name === "private key");
    expect(key?.status).toBe("fail");
    expect(key?.detail).toContain(
      `is readable or writable by others (mode 0644): a private key must be yours alone; run \`chmod 600 ${p.privateKey}\``,
    );
  });

  it("fails a policy.yml that is a named pipe instead of waiting on it for ever", async () => {
    const { home } = fixtureHome(root.dir);
    rmSync(homePaths(home).policy);
    execFileSync("mkfifo", [homePaths(home).policy]);
    const { code, checks } = await doctorJson([], envFor(home));
    expect(code).toBe(1);
    expect(checks.find((c) => c.name === "policy")).toMatchObject({
      status: "fail",
      // the fixture's config.yml names it in defaults.policy: refused as the file it names
      detail: `cannot read policy \`${homePaths(home).policy}\` (defaults.policy in ${join(home, "config.yml")}): not a regular file (fix defaults.policy, or pass --policy FILE)`,
    });
  });

  it("fails when a key file is missing or truncated", async () => {
    const { home } = fixtureHome(root.dir);
    writeFileSync(homePaths(home).privateKey, '{"type":"acp_private_key","vers');
    const r = await runCli(["doctor"], { env: envFor(home) });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^fail {2}private key {2}private key file is not json \(truncated or corrupted\)/m);
    rmSync(homePaths(home).publicKey);
    expect((await runCli(["doctor"], { env: envFor(home) })).stdout).toMatch(/^fail {2}public key/m);
  });
});

describe("acp doctor: the config file, checked as acp proxy checks it", () => {
  it("fails every key the proxy would refuse, one check per problem, in the proxy's own words", async () => {
    const { home } = fixtureHome(root.dir);
    const env = envFor(home);
    writeFileSync(homePaths(home).config, BAD_CONFIG);
    const { code, checks } = await doctorJson([], env);
    expect(code).toBe(1);
    const failed = checks.filter((c) => c.status === "fail");
    expect([...new Set(failed.map((c) => c.name))]).toEqual([
      "proxy",
      "credentials",
      "redaction",
      "session",
      "graph",
      "channel",
    ]);
    expect(failed.filter((c) => c.name === "session")).toHaveLength(2);
    expect(failed.filter((c) => c.name === "graph").length).toBeGreaterThanOrEqual(2);
    // the proxy stops (exit 4) with the same lines
    const proxy = await runCli(["proxy", "--upstream", "true"], { env });
    expect(proxy.code).toBe(4);
    const stderr = proxy.stderr.replace(/^acp: /, "");
    for (const c of failed.filter((f) => f.name !== "session")) expect(stderr).toContain(c.detail);
    for (const c of failed) expect(c.detail.startsWith(homePaths(home).config)).toBe(true);
    expect(failed.find((c) => c.name === "graph" && c.detail.includes("graph.threshold"))?.detail).toBe(
      `${homePaths(home).config}:10:14: \`graph.threshold\` must be a number from 0 to 1`,
    );
  });

  it("--config FILE checks FILE instead of the home's config.yml, naming FILE", async () => {
    const { home } = fixtureHome(root.dir);
    const env = envFor(home);
    const bad = join(root.dir, "doctor-bad.yml");
    writeFileSync(bad, BAD_CONFIG);
    const withBad = await doctorJson(["--config", bad], env);
    expect(withBad.code).toBe(1);
    const failed = withBad.checks.filter((c) => c.status === "fail");
    expect(failed.length).toBeGreaterThan(6);
    for (const c of failed) expect(c.detail).toContain(bad);
    // and the other way round: a bad home config.yml does not matter for a good FILE
    writeFileSync(homePaths(home).config, BAD_CONFIG);
    const good = join(root.dir, "doctor-good.yml");
    writeFileSync(
      good,
      'version: "1"\ngraph:\n  threshold: 0.5\n  mapping:\n    - { tool: send_email, domain: email, action: send }\n',
    );
    const withGood = await doctorJson(["--config", good], env);
    expect(withGood.checks.filter((c) => c.status === "fail")).toEqual([]);
    expect(withGood.code).toBe(0);
    expect(withGood.checks.find((c) => c.name === "config")?.detail).toBe(`${good} parses; no plain secrets`);
    expect(withGood.checks.find((c) => c.name === "graph")?.detail).toBe("1 mapping entry, threshold 0.5");
    expect(withGood.checks.find((c) => c.name === "sandbox")?.detail).toBe(
      "acp run: no destination allowed without asking",
    );
    // acp run's `sandbox.allow_egress`, checked as acp run checks it
    const egress = join(root.dir, "doctor-egress.yml");
    writeFileSync(egress, 'version: "1"\nsandbox:\n  allow_egress: [api.example.com:443, nope]\n');
    const withEgress = await doctorJson(["--config", egress], env);
    expect(withEgress.code).toBe(1);
    expect(withEgress.checks.filter((c) => c.status === "fail")).toEqual([
      { status: "fail", name: "sandbox", detail: `${egress}:3:39: \`nope\` is not HOST:PORT` },
    ]);
    const missing = await doctorJson(["--config", join(root.dir, "no-such.yml")], env);
    expect(missing.checks.find((c) => c.name === "config")).toMatchObject({
      status: "fail",
      detail: expect.stringContaining("no-such.yml") as unknown,
    });
  });

  it("fails the config check on a misspelt top-level key or another version, naming the key; takes every real one", async () => {
    const { home } = fixtureHome(root.dir);
    const env = envFor(home);
    const typos = join(root.dir, "doctor-typos.yml");
    writeFileSync(typos, 'version: "9"\nchanel: webhook\nsesion:\n  escalate_after_instructions: true\nzzz: 1\n');
    const { code, checks } = await doctorJson(["--config", typos], env);
    expect(code).toBe(1);
    expect(checks.filter((c) => c.name === "config")).toEqual([
      {
        status: "fail",
        name: "config",
        detail: `${typos}:1:10: \`version\` must be "1", the only format this acp reads (not \`9\`)`,
      },
      { status: "fail", name: "config", detail: `${typos}:2:9: unknown key \`chanel\` (did you mean \`channel\`?)` },
      { status: "fail", name: "config", detail: `${typos}:4:3: unknown key \`sesion\` (did you mean \`session\`?)` },
      {
        status: "fail",
        name: "config",
        detail: expect.stringMatching(
          /:5:6: unknown key `zzz` \(expected version, channel, .*, serve, storage\)$/,
        ) as unknown,
      },
    ]);
    // every top-level key a command reads is taken (version as a number too)
    const all = join(root.dir, "doctor-all-keys.yml");
    writeFileSync(
      all,
      [
        "version: 1",
        "channel: prompt",
        'telegram:\n  bot_token: ""\n  chat_id: ""',
        'webhook:\n  url: ""\n  secret: ""',
        "proxy:\n  port: 8443\n  upstream_servers: []",
        "defaults:\n  timeout_seconds: 120",
        "credentials: []",
        "redaction:\n  keys: ['*pin*']",
        "session:\n  escalate_after_instructions: true",
        "graph:\n  threshold: 0.5",
        "sandbox:\n  allow_egress: []",
        "serve:\n  port: 8787",
        'storage:\n  url: "postgres://acp@127.0.0.1:5432/acp"',
        "",
      ].join("\n"),
    );
    const good = await doctorJson(["--config", all], env);
    expect(good.checks.find((c) => c.name === "config")).toEqual({
      status: "ok",
      name: "config",
      detail: `${all} parses; no plain secrets`,
    });
  });

  it("fails a consent-graph.json the proxy would refuse, and says a valid one validates", async () => {
    const { home } = fixtureHome(root.dir);
    const env = envFor(home);
    copyFileSync(EXAMPLE_GRAPH, join(home, "consent-graph.json"));
    expect((await doctorJson([], env)).checks.find((c) => c.name === "consent graph")).toEqual({
      status: "ok",
      name: "consent graph",
      detail: "validates",
    });
    writeFileSync(join(home, "consent-graph.json"), '{"email": 3}\n');
    const { code, checks } = await doctorJson([], env);
    expect(code).toBe(1);
    const graph = checks.filter((c) => c.name === "consent graph");
    expect(graph.length).toBeGreaterThan(0);
    expect(graph.every((c) => c.status === "fail" && c.detail.includes("consent-graph.json"))).toBe(true);
  });
});

describe("isolation probe", () => {
  const proc = (files: Record<string, string>) => (path: string) => files[path];
  it("is ok as root on linux and with unprivileged user namespaces", () => {
    expect(checkIsolation({ platform: "linux", uid: 0, read: proc({}) }).status).toBe("ok");
    const userns = { "/proc/sys/user/max_user_namespaces": "63000", "/proc/sys/kernel/unprivileged_userns_clone": "1" };
    expect(checkIsolation({ platform: "linux", uid: 1000, read: proc(userns) }).status).toBe("ok");
  });

  it("warns when namespaces are disabled, restricted, unknown, or the platform has none", () => {
    const cases = [
      { "/proc/sys/kernel/unprivileged_userns_clone": "0", "/proc/sys/user/max_user_namespaces": "100" },
      { "/proc/sys/user/max_user_namespaces": "0" },
      { "/proc/sys/user/max_user_namespaces": "100", "/proc/sys/kernel/apparmor_restrict_unprivileged_userns": "1" },
      {},
    ];
    for (const files of cases)
      expect(checkIsolation({ platform: "linux", uid: 1000, read: proc(files) }).status).toBe("warn");
    expect(checkIsolation({ platform: "darwin", uid: 501, read: proc({}) }).status).toBe("warn");
  });
});
