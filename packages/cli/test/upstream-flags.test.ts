import { describe, expect, it } from "vitest";
import type { UpstreamSpec } from "@acp/proxy";
import { CliError } from "../src/exit-codes.js";
import { upstreamsOf } from "../src/wiring/upstream-flags.js";

const configured: UpstreamSpec[] = [
  { name: "files", transport: "stdio", command: "server-filesystem", args: ["/tmp"] },
];

/** The usage error `upstreamsOf` throws for `flags`. */
function refusal(flags: Parameters<typeof upstreamsOf>[0]): CliError {
  try {
    upstreamsOf(flags, configured);
  } catch (err) {
    if (err instanceof CliError) return err;
    throw err;
  }
  throw new Error("no usage error");
}

describe("the upstream flags acp proxy and acp run share", () => {
  it("names each --upstream by its --name, else from its command, after the configured ones", () => {
    const named = upstreamsOf(
      { upstream: ["npx -y @modelcontextprotocol/server-memory", "http://127.0.0.1:9/mcp"], name: ["memory", "api"] },
      configured,
    );
    expect(named.map((u) => u.name)).toEqual(["files", "memory", "api"]);
    const unnamed = upstreamsOf({ upstream: ["npx -y @modelcontextprotocol/server-filesystem /srv"] }, [
      { ...configured[0]!, name: "server-filesystem" },
    ]);
    expect(unnamed.map((u) => u.name)).toEqual(["server-filesystem", "server-filesystem-2"]);
  });

  it("marks exactly the --trust names trusted, configured or ad hoc, and no other", () => {
    const upstreams = upstreamsOf(
      {
        upstream: ["npx -y @modelcontextprotocol/server-everything", "npx -y @modelcontextprotocol/server-memory"],
        trust: ["server-everything", "files"],
      },
      configured,
    );
    expect(upstreams.map((u) => [u.name, u.trusted === true])).toEqual([
      ["files", true],
      ["server-everything", true],
      ["server-memory", false],
    ]);
    expect(configured[0]?.trusted).toBeUndefined();
  });

  it("refuses (exit 2) a --trust naming no upstream, a --name used twice, and names for some upstreams only", () => {
    const noSuch = refusal({ upstream: ["npx server-memory"], trust: ["memroy"] });
    expect(noSuch.exitCode).toBe(2);
    expect(noSuch.message).toBe(
      "--trust `memroy` names no upstream (the upstreams: `files`, `server-memory`; an --upstream is named by --name, else from its command)",
    );
    expect(upstreamsOf.bind(null, { trust: ["x"] }, [])).toThrow("--trust `x` names no upstream (there are none;");
    expect(refusal({ upstream: ["npx a", "npx b"], name: ["files", "b"] }).message).toMatch(
      /^upstream name `files` is used twice/,
    );
    expect(refusal({ upstream: ["npx a", "npx b"], name: ["a"] }).message).toMatch(/^2 --upstream values but 1 --name/);
    expect(refusal({ upstream: ["npx a"], name: ["a", "b"] }).message).toBe("more --name than --upstream values");
    expect(refusal({ trust: ["a\u202eb"] }).message).not.toContain("\u202e");
  });
});
