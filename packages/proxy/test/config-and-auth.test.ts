import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  buildNameIndex,
  checkBearer,
  createBearerIdentity,
  defaultUpstreamName,
  isLoopbackAddress,
  parseProxyConfig,
  parseUpstreamArgument,
  splitCommandLine,
} from "../src/index.js";

describe("createBearerIdentity: the shared token and tokens that name their agent", () => {
  const shared = "shared-token-0123456789";
  const named = new Map([
    ["ci_bot", "ci-bot-token-0123456789"],
    ["nightly", "nightly-token-0123456789"],
  ]);
  const identify = createBearerIdentity(shared, named);

  it("names the agent of a named token, none for the shared one", () => {
    expect(identify("Bearer ci-bot-token-0123456789")).toEqual({ ok: true, agent: "ci_bot" });
    expect(identify("bearer nightly-token-0123456789")).toEqual({ ok: true, agent: "nightly" });
    expect(identify(`Bearer ${shared}`)).toEqual({ ok: true });
  });

  it("refuses as checkBearer does: 401 missing or wrong, 400 malformed or repeated", () => {
    expect(identify(undefined)).toMatchObject({ ok: false, status: 401, message: "missing bearer token" });
    expect(identify("Bearer ci-bot-token-012345678")).toMatchObject({ ok: false, status: 401 });
    expect(identify("Bearer ci_bot")).toMatchObject({ ok: false, status: 401 });
    expect(identify("Basic abc")).toMatchObject({ ok: false, status: 400 });
    expect(identify(["Bearer a", "Bearer b"])).toMatchObject({ ok: false, status: 400 });
    for (const header of [undefined, "Bearer x", "Basic abc"]) {
      const a = identify(header);
      const b = checkBearer(header, shared);
      expect(a).toEqual(b);
    }
  });

  it("with named tokens only, a request without one is refused; with neither, every request passes", () => {
    const onlyNamed = createBearerIdentity(undefined, named);
    expect(onlyNamed(undefined)).toMatchObject({ ok: false, status: 401 });
    expect(onlyNamed(`Bearer ${shared}`)).toMatchObject({ ok: false, status: 401 });
    expect(onlyNamed("Bearer ci-bot-token-0123456789")).toEqual({ ok: true, agent: "ci_bot" });
    expect(createBearerIdentity(undefined)(undefined)).toEqual({ ok: true });
    expect(createBearerIdentity("")("Bearer anything")).toEqual({ ok: true });
  });
});

describe("proxy section of config.yml", () => {
  it("reads upstreams, prefix mode, timeouts and defaults", () => {
    const parsed = parseProxyConfig(
      {
        port: 8443,
        prefix_tools: "always",
        call_timeout_seconds: 5,
        upstream_servers: [
          { name: "default", command: "npx -y '@modelcontextprotocol/server-filesystem' /tmp", env: { A: "b" } },
          { name: "github", url: "http://localhost:3001" },
          { name: "old", url: "http://localhost:3002/sse" },
        ],
      },
      30,
    );
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.value).toMatchObject({
      port: 8443,
      bind: "127.0.0.1",
      prefixTools: "always",
      callTimeoutMs: 5000,
      callMaxMs: 3_600_000,
      consentTimeoutMs: 30000,
    });
    expect(parsed.value.upstreams).toEqual([
      {
        name: "default",
        transport: "stdio",
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
        env: { A: "b" },
      },
      { name: "github", transport: "streamable-http", url: "http://localhost:3001/" },
      { name: "old", transport: "sse", url: "http://localhost:3002/sse" },
    ]);
  });

  it("reads call_max_seconds, which may not be below call_timeout_seconds (that one raises the default)", () => {
    const set = parseProxyConfig({ call_timeout_seconds: 30, call_max_seconds: 600 });
    expect(set.ok && set.value).toMatchObject({ callTimeoutMs: 30_000, callMaxMs: 600_000 });
    const raised = parseProxyConfig({ call_timeout_seconds: 7200 });
    expect(raised.ok && raised.value.callMaxMs).toBe(7_200_000);
    const below = parseProxyConfig({ call_timeout_seconds: 30, call_max_seconds: 10 });
    expect(below.ok).toBe(false);
    if (!below.ok)
      expect(below.issues).toEqual([
        {
          code: "proxy_config_invalid",
          path: ["proxy", "call_max_seconds"],
          message: "`proxy.call_max_seconds` must be at least `proxy.call_timeout_seconds`",
        },
      ]);
    const bad = parseProxyConfig({ call_max_seconds: "1h" });
    expect(!bad.ok && bad.issues[0]?.message).toBe("`proxy.call_max_seconds` must be a positive number of seconds");
  });

  it("reads start_wait_seconds (default 10 s); anything but a positive number of seconds is refused", () => {
    const unset = parseProxyConfig({});
    expect(unset.ok && unset.value.startWaitMs).toBe(10_000);
    const set = parseProxyConfig({ start_wait_seconds: 2.5 });
    expect(set.ok && set.value.startWaitMs).toBe(2500);
    for (const value of [0, -1, "10s", null, Number.POSITIVE_INFINITY]) {
      const bad = parseProxyConfig({ start_wait_seconds: value });
      expect(!bad.ok && bad.issues[0]?.message).toBe("`proxy.start_wait_seconds` must be a positive number of seconds");
    }
  });

  it("reads restart_upstreams (default true); anything but true or false is refused", () => {
    const unset = parseProxyConfig({});
    expect(unset.ok && unset.value.restartUpstreams).toBe(true);
    const off = parseProxyConfig({ restart_upstreams: false });
    expect(off.ok && off.value.restartUpstreams).toBe(false);
    for (const value of ["yes", 1, null]) {
      const bad = parseProxyConfig({ restart_upstreams: value });
      expect(!bad.ok && bad.issues[0]?.message).toBe("`proxy.restart_upstreams` must be true or false");
    }
  });

  it("refuses a bearer_token a client could not send after `Bearer `", () => {
    const parsed = parseProxyConfig({ bearer_token: "a token with spaces in it" });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.issues[0]?.message).toMatch(/cannot send in `Authorization: Bearer …`/);
    expect(parseProxyConfig({ bearer_token: "0123456789abcdef-._~+/==" }).ok).toBe(true);
  });

  it("takes a sealed bearer_token and sealed agent_tokens for the command to open, never their text", () => {
    const sealed = "encrypted:AQIDBA==";
    const parsed = parseProxyConfig({
      bearer_token: sealed,
      agent_tokens: { ci_bot: sealed, _nightly2: sealed, not_yet: "" },
    });
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.value.bearerToken).toBeUndefined();
    expect(parsed.value.bearerTokenSealed).toBe(true);
    // a name without a token yet is left out, as an empty bearer_token is
    expect(parsed.value.agentTokenNames).toEqual(["ci_bot", "_nightly2"]);
    const none = parseProxyConfig({});
    expect(none.ok).toBe(true);
    if (none.ok) expect(none.value).not.toHaveProperty("agentTokenNames");
  });

  it("refuses a plain agent token, a bad agent name and a non-mapping, naming the key and never the value", () => {
    const plainValue = "0123456789abcdef0123456789abcdef";
    const parsed = parseProxyConfig({
      agent_tokens: { ci_bot: plainValue, "Bad Name": "encrypted:AQ==", ["x".repeat(70)]: "encrypted:AQ==" },
    });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    const messages = parsed.issues.map((i) => i.message);
    expect(messages).toHaveLength(3);
    expect(messages[0]).toMatch(
      /`proxy\.agent_tokens\.ci_bot` must be the sealed text `acp config set-secret proxy\.agent_tokens\.ci_bot`/,
    );
    expect(messages[1]).toMatch(/`proxy\.agent_tokens\.Bad Name`: an agent name is lowercase letters/);
    expect(messages[2]).toContain("…");
    expect(messages.join("\n")).not.toContain(plainValue);
    const list = parseProxyConfig({ agent_tokens: ["ci_bot"] });
    expect(list.ok).toBe(false);
    if (!list.ok)
      expect(list.issues[0]).toMatchObject({ code: "proxy_config_invalid", path: ["proxy", "agent_tokens"] });
  });

  it("takes public_url as an origin and refuses anything else, at proxy.public_url", () => {
    const good = parseProxyConfig({ public_url: "https://mcp.example.com:443/" });
    expect(good.ok && good.value.publicUrl).toEqual({
      origin: "https://mcp.example.com",
      host: "mcp.example.com",
      https: true,
    });
    for (const bad of ["https://mcp.example.com/mcp", "mcp.example.com", 42]) {
      const r = parseProxyConfig({ public_url: bad });
      expect(r.ok, String(bad)).toBe(false);
      if (!r.ok) expect(r.issues[0]).toMatchObject({ code: "proxy_config_invalid", path: ["proxy", "public_url"] });
    }
  });

  it("takes max_sessions as an integer from 1 to 100000, at proxy.max_sessions", () => {
    const good = parseProxyConfig({ max_sessions: 64 });
    expect(good.ok && good.value.maxSessions).toBe(64);
    const unset = parseProxyConfig({});
    expect(unset.ok && unset.value.maxSessions).toBeUndefined();
    for (const bad of [0, -1, 2.5, 100_001, "64", null]) {
      const r = parseProxyConfig({ max_sessions: bad });
      expect(r.ok, String(bad)).toBe(false);
      if (!r.ok)
        expect(r.issues[0]).toMatchObject({
          code: "proxy_config_invalid",
          path: ["proxy", "max_sessions"],
          message: "`proxy.max_sessions` must be an integer from 1 to 100000",
        });
    }
  });

  it("reports every problem with a code and a path, and accepts nothing partially", () => {
    const parsed = parseProxyConfig({
      port: "eighty",
      colour: "blue",
      bearer_token: "short",
      upstream_servers: [
        { name: "a b", command: "x" },
        { name: "dup", command: "x" },
        { name: "dup", url: "ftp://x" },
        { name: "both", command: "x", url: "http://y" },
      ],
    });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.issues.map((i) => i.code).sort()).toEqual(
      [
        "proxy_config_invalid",
        "proxy_config_invalid",
        "proxy_config_invalid",
        "proxy_config_unknown_key",
        "proxy_upstream_name_invalid",
        "proxy_upstream_url_invalid",
      ].sort(),
    );
  });

  it("refuses an upstream url carrying a user or password at config time, never echoing it", () => {
    for (const url of [
      "https://agent:s3cret-pass@mcp.example.com/mcp",
      "https://ghp_t0kenAsUser@mcp.example.com/mcp",
    ]) {
      const parsed = parseProxyConfig({ upstream_servers: [{ name: "remote", url }] });
      expect(parsed.ok).toBe(false);
      if (parsed.ok) return;
      expect(parsed.issues).toHaveLength(1);
      expect(parsed.issues[0]).toMatchObject({
        code: "proxy_upstream_url_invalid",
        path: ["proxy", "upstream_servers", 0, "url"],
      });
      expect(parsed.issues[0]?.message).toContain("a user or password");
      expect(parsed.issues[0]?.message).toContain("vault");
      expect(parsed.issues[0]?.message).not.toMatch(/s3cret|t0kenAsUser/);
    }
  });

  it("refuses an upstream command with an unterminated quote at its command key", () => {
    const parsed = parseProxyConfig({
      upstream_servers: [{ name: "fs", command: "mcp-server-filesystem '/tmp/walkw/my dir" }],
    });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.issues).toHaveLength(1);
    expect(parsed.issues[0]).toMatchObject({
      code: "proxy_upstream_command_invalid",
      path: ["proxy", "upstream_servers", 0, "command"],
    });
    expect(parsed.issues[0]?.message).toContain("upstream `fs`");
    expect(parsed.issues[0]?.message).toContain("unterminated quote");
  });

  it("never throws on hostile input (property)", () => {
    fc.assert(
      fc.property(fc.anything(), fc.anything(), (section, timeout) => {
        const parsed = parseProxyConfig(section, timeout);
        expect(typeof parsed.ok).toBe("boolean");
      }),
    );
  });
});

describe("ad-hoc upstream arguments", () => {
  it("splits a command like a shell, refusing operators", () => {
    expect(splitCommandLine(`npx -y "@scope/server x" 'a b' c\\ d`)).toEqual({
      ok: true,
      value: ["npx", "-y", "@scope/server x", "a b", "c d"],
    });
    for (const bad of ["a | b", "a && b", "a > f", "a; b", ""]) expect(splitCommandLine(bad).ok).toBe(false);
  });

  it("refuses an unterminated quote or a trailing backslash instead of dropping it", () => {
    const unclosed = splitCommandLine("mcp-server-filesystem '/tmp/walkw/my dir");
    expect(unclosed.ok).toBe(false);
    if (!unclosed.ok) {
      expect(unclosed.issues[0]?.code).toBe("proxy_upstream_command_invalid");
      expect(unclosed.issues[0]?.message).toContain("unterminated quote `'`");
    }
    for (const bad of [`a "b c`, `a "b\\" c`, `a b\\`, `a 'it\\'s'`, `"`]) {
      expect(splitCommandLine(bad).ok, bad).toBe(false);
    }
    const trailing = splitCommandLine("a b\\");
    expect(!trailing.ok && trailing.issues[0]?.message).toContain("trailing backslash");
    // balanced quoting, escaped quotes and an escaped backslash still split as before
    expect(splitCommandLine(`a "b \\" c" 'x"y' it\\'s e\\\\`)).toEqual({
      ok: true,
      value: ["a", 'b " c', 'x"y', "it's", "e\\"],
    });
    const arg = parseUpstreamArgument("mcp-server-filesystem '/tmp/my dir", "fs");
    expect(arg.ok).toBe(false);
    expect(!arg.ok && arg.issues[0]?.message).toContain("unterminated quote");
  });

  it("tells URLs from commands and names them", () => {
    expect(parseUpstreamArgument("http://127.0.0.1:3001/mcp", "gh")).toEqual({
      ok: true,
      value: { name: "gh", transport: "streamable-http", url: "http://127.0.0.1:3001/mcp" },
    });
    expect(defaultUpstreamName("npx -y @modelcontextprotocol/server-filesystem /tmp")).toBe("server-filesystem");
    expect(defaultUpstreamName("https://mcp.example.com/mcp")).toBe("mcp-example-com");
    expect(parseUpstreamArgument("x", "bad name").ok).toBe(false);
  });
});

describe("bearer token", () => {
  const token = "a-token-of-some-length";
  it("401 for missing or wrong, 400 for malformed, ok for the right one", () => {
    expect(checkBearer(undefined, token)).toMatchObject({ ok: false, status: 401 });
    expect(checkBearer("Bearer nope", token)).toMatchObject({ ok: false, status: 401 });
    expect(checkBearer("Bearer", token)).toMatchObject({ ok: false, status: 400 });
    expect(checkBearer("Token abc", token)).toMatchObject({ ok: false, status: 400 });
    expect(checkBearer(["Bearer a", "Bearer b"], token)).toMatchObject({ ok: false, status: 400 });
    expect(checkBearer(`Bearer ${token}`, token)).toEqual({ ok: true });
    // the scheme name is case-insensitive (RFC 9110 §11.1); the token is not
    expect(checkBearer(`bearer ${token}`, token)).toEqual({ ok: true });
    expect(checkBearer(`BEARER ${token}`, token)).toEqual({ ok: true });
    expect(checkBearer(`bearer ${token.toUpperCase()}`, token)).toMatchObject({ ok: false, status: 401 });
  });
  it("no header other than the exact token passes (property)", () => {
    fc.assert(
      fc.property(fc.string(), (header) => {
        fc.pre(!/^bearer /i.test(header) || header.slice(7) !== token);
        expect(checkBearer(header, token).ok).toBe(false);
      }),
    );
  });
  it("knows loopback addresses", () => {
    for (const a of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"]) expect(isLoopbackAddress(a)).toBe(true);
    for (const a of ["0.0.0.0", "::", "192.168.1.2", "10.0.0.1"]) expect(isLoopbackAddress(a)).toBe(false);
  });
});

describe("tool name aggregation", () => {
  const listings = [
    { server: "a", items: [{ name: "echo" }, { name: "only-a" }] },
    { server: "b", items: [{ name: "echo" }] },
  ];
  it("prefixes only colliding names on-collision, all names always, none never", () => {
    expect(buildNameIndex(listings, "on-collision").exposed.map((t) => t.name)).toEqual([
      "a__echo",
      "only-a",
      "b__echo",
    ]);
    expect(buildNameIndex(listings, "always").exposed.map((t) => t.name)).toEqual(["a__echo", "a__only-a", "b__echo"]);
    const never = buildNameIndex(listings, "never");
    expect(never.exposed.map((t) => t.name)).toEqual(["echo", "only-a"]);
    expect(never.dropped).toEqual([{ server: "b", name: "echo", servedBy: "a" }]);
    expect(buildNameIndex(listings, "on-collision").resolve("b__echo")).toMatchObject({ server: "b", name: "echo" });
  });
  it("every exposed name is unique and resolves back to its server's own name (property)", () => {
    const name = fc.stringMatching(/^[a-z_]{1,6}$/);
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.record({ server: fc.stringMatching(/^[a-z]{1,4}$/), items: fc.array(fc.record({ name })) }), {
          selector: (l) => l.server,
        }),
        fc.constantFrom("on-collision" as const, "always" as const, "never" as const),
        (ls, mode) => {
          const index = buildNameIndex(ls, mode);
          const names = index.exposed.map((t) => t.name);
          expect(new Set(names).size).toBe(names.length);
          for (const exposed of names) {
            const target = index.resolve(exposed);
            expect(ls.find((l) => l.server === target?.server)?.items.some((i) => i.name === target?.name)).toBe(true);
          }
        },
      ),
    );
  });
});
