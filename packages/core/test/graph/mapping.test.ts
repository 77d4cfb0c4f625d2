import { describe, expect, it } from "vitest";
import {
  MAX_RECIPIENTS,
  mapToGraphTarget,
  normalizeRecipient,
  validateGraphMapping,
  type ActionRequest,
  type GraphMapping,
} from "../../src/index.js";
import { graphOf } from "./example-graph.js";

const graph = graphOf({
  imessage: { autonomous: ["read"], requires_approval: ["send_vip"], blocked: ["send_unknown"] },
  files: { autonomous: ["write_workspace"], requires_approval: ["write_outside_workspace"], blocked: [] },
  vip_contacts: { darcy: "+1 (555) 010-0001", boss: "Boss <boss@example.com>" },
});

function mappingOf(raw: unknown): GraphMapping {
  const result = validateGraphMapping(raw);
  if (!result.ok) throw new Error(JSON.stringify(result.issues));
  return result.value;
}

const mapping = mappingOf([
  {
    server: "imessage*",
    tool: "send_message",
    domain: "imessage",
    action: "send_unknown",
    refine: [{ recipient_vip: ["to", "recipients"], action: "send_vip" }],
  },
  { tool: "read_*", server: "imessage*", domain: "imessage", action: "read" },
  {
    tool: "write_file",
    domain: "files",
    action: "write_workspace",
    refine: [{ argument: "path", not_matches: "/home/me/work/**", action: "write_outside_workspace" }],
  },
]);

function request(tool: string, args: Record<string, unknown>, server = "imessage-mcp"): ActionRequest {
  return { tool, server, arguments: args };
}

describe("mapToGraphTarget", () => {
  it("maps a send to a VIP number (formatted differently) to send_vip", () => {
    expect(mapToGraphTarget(mapping, request("send_message", { to: "+15550100001" }), graph)).toEqual({
      domain: "imessage",
      action: "send_vip",
    });
    expect(
      mapToGraphTarget(mapping, request("send_message", { recipients: ["boss@EXAMPLE.com"] }), graph)?.action,
    ).toBe("send_vip");
  });

  it("maps a recipient not in vip_contacts to send_unknown", () => {
    expect(mapToGraphTarget(mapping, request("send_message", { to: "+15550999999" }), graph)?.action).toBe(
      "send_unknown",
    );
    expect(
      mapToGraphTarget(mapping, request("send_message", { to: "+15550100001, +15550999999" }), graph)?.action,
    ).toBe("send_unknown");
  });

  it("a missing, unreadable or name-only recipient is not a VIP", () => {
    for (const args of [{}, { to: { number: "+15550100001" } }, { to: 15550100001 }, { to: "darcy" }, { to: [] }]) {
      expect(mapToGraphTarget(mapping, request("send_message", args), graph)?.action).toBe("send_unknown");
    }
  });

  it("an address that matches a VIP's only once a non-ASCII letter is lowercased is not a VIP", () => {
    // the Kelvin sign K (U+212A) lowercases to an ASCII `k`: a mail server may keep `\u212Aate@…` a mailbox of its own
    const kelvin = graphOf({
      imessage: { autonomous: [], requires_approval: ["send_vip"], blocked: ["send_unknown"] },
      vip_contacts: { kate: "kate@kodak.example" },
    });
    const send = (to: string) => mapToGraphTarget(mapping, request("send_message", { to }), kelvin)?.action;
    expect(send("\u212Aate@kodak.example")).toBe("send_unknown");
    expect(send("kate@\u212Aodak.example")).toBe("send_unknown");
    expect(send("KATE@Kodak.EXAMPLE")).toBe("send_vip");
    expect(send("Kate <kate@kodak.example>")).toBe("send_vip");
  });

  it("more than MAX_RECIPIENTS recipients are never all VIPs, however many of them are", () => {
    const vips = (n: number) => Array<string>(n).fill("+15550100001");
    const send = (to: unknown) => mapToGraphTarget(mapping, request("send_message", { to }), graph)?.action;
    expect(send(vips(MAX_RECIPIENTS))).toBe("send_vip");
    expect(send(vips(MAX_RECIPIENTS + 1))).toBe("send_unknown");
    expect(send(vips(MAX_RECIPIENTS + 1).join(","))).toBe("send_unknown");
    // counted across the arguments the refinement names
    const split = request("send_message", { to: vips(MAX_RECIPIENTS), recipients: ["boss@example.com"] });
    expect(mapToGraphTarget(mapping, split, graph)?.action).toBe("send_unknown");
  });

  it("first matching entry wins, server and tool globs both count", () => {
    expect(mapToGraphTarget(mapping, request("read_history", {}), graph)).toEqual({
      domain: "imessage",
      action: "read",
    });
    expect(mapToGraphTarget(mapping, request("read_history", {}, "mail"), graph)).toBeNull();
    expect(mapToGraphTarget(mapping, { tool: "read_history", arguments: {} }, graph)).toBeNull();
  });

  it("refines by an argument glob; a missing argument counts as not matching", () => {
    expect(mapToGraphTarget(mapping, request("write_file", { path: "/home/me/work/a.txt" }), graph)?.action).toBe(
      "write_workspace",
    );
    expect(mapToGraphTarget(mapping, request("write_file", { path: "/etc/passwd" }), graph)?.action).toBe(
      "write_outside_workspace",
    );
    expect(mapToGraphTarget(mapping, request("write_file", {}), graph)?.action).toBe("write_outside_workspace");
  });

  it("a path that climbs out with `..`, or is relative, or is not a string, is outside the workspace glob", () => {
    const action = (path: unknown) => mapToGraphTarget(mapping, request("write_file", { path }), graph)?.action;
    for (const path of [
      "/home/me/work/../.ssh/authorized_keys",
      "/home/me/work/a/../../../etc/passwd",
      "/home/me/work/./../x",
      "work/a.txt",
      "../work/a.txt",
      "/home/me/workshop/a.txt",
      ["/home/me/work/a.txt"],
      { path: "/home/me/work/a.txt" },
    ]) {
      expect(action(path), JSON.stringify(path)).toBe("write_outside_workspace");
    }
    expect(action("/home/me/work/sub/.hidden")).toBe("write_workspace");
  });

  it("fan_out: a notification to more than one destination, or one it cannot read, is not the one-destination action", () => {
    // the spec's notifications domain: route each notification to exactly one destination
    const notifications = graphOf({
      notifications: {
        autonomous: ["send_telegram_owner"],
        requires_approval: ["send_telegram_other"],
        blocked: ["send_to_unknown_channel"],
      },
    });
    const fanOut = mappingOf([
      {
        tool: "notify",
        domain: "notifications",
        action: "send_telegram_owner",
        refine: [{ fan_out: ["channel", "channels"], action: "send_to_unknown_channel" }],
      },
    ]);
    const notify = (args: Record<string, unknown>) =>
      mapToGraphTarget(fanOut, request("notify", args), notifications)?.action;
    expect(notify({ channel: "telegram" })).toBe("send_telegram_owner");
    expect(notify({ channels: ["telegram"] })).toBe("send_telegram_owner");
    expect(notify({})).toBe("send_telegram_owner");
    expect(notify({ channels: ["telegram", "email"] })).toBe("send_to_unknown_channel");
    expect(notify({ channels: "telegram, email" })).toBe("send_to_unknown_channel");
    expect(notify({ channel: "telegram", channels: ["email"] })).toBe("send_to_unknown_channel");
    expect(notify({ channels: { telegram: true, email: true } })).toBe("send_to_unknown_channel");
    expect(notify({ channel: 7 })).toBe("send_to_unknown_channel");
    const bad = validateGraphMapping([{ tool: "n", domain: "d", action: "a", refine: [{ fan_out: [], action: "b" }] }]);
    expect(bad.ok ? [] : bad.issues.map((i) => i.code)).toEqual(["invalid_mapping"]);
  });

  it("a call the mapping does not cover is not judged (null)", () => {
    expect(mapToGraphTarget(mapping, request("delete_everything", {}), graph)).toBeNull();
    expect(mapToGraphTarget(undefined, request("send_message", {}), graph)).toBeNull();
  });

  it("a request that names its graph target is used as is", () => {
    const explicit = { domain: "email", action: "read", confidence: 0.5 };
    expect(mapToGraphTarget(mapping, { ...request("send_message", { to: "x" }), graph: explicit }, graph)).toBe(
      explicit,
    );
  });
});

describe("validateGraphMapping", () => {
  it("reports unknown keys with a suggestion, bad globs and ambiguous refinements", () => {
    const result = validateGraphMapping([
      { tool: "send_*", domian: "email", action: "send" },
      { tool: "[", domain: "email", action: "send" },
      { tool: "x", domain: "email", action: "send", refine: [{ action: "a", recipient_vip: ["to"], matches: "*" }] },
      { tool: "x", domain: "email", action: "send", refine: [{ action: "a", matches: "*" }] },
      "nope",
    ]);
    expect(result.ok).toBe(false);
    const issues = result.ok ? [] : result.issues;
    expect(issues[0]).toMatchObject({
      code: "unknown_key",
      path: ["graph", "mapping", 0, "domian"],
      help: "did you mean `domain`",
    });
    expect(issues.map((i) => i.code)).toEqual([
      "unknown_key",
      "invalid_mapping",
      "invalid_glob",
      "invalid_mapping",
      "invalid_mapping",
      "invalid_mapping",
    ]);
  });

  it("never throws: a raw mapping whose reading throws is invalid_mapping", () => {
    const hostile = [
      {
        get tool(): string {
          throw new Error("boom");
        },
        domain: "d",
        action: "a",
      },
    ];
    const result = validateGraphMapping(hostile);
    expect(result.ok ? [] : result.issues.map((i) => [i.code, i.path])).toEqual([
      ["invalid_mapping", ["graph", "mapping"]],
    ]);
  });

  it("refuses a mapping that is not a list", () => {
    expect(validateGraphMapping({ tool: "x" }).ok).toBe(false);
  });

  it("returns a frozen copy", () => {
    const raw = [{ tool: "x", domain: "d", action: "a" }];
    const result = validateGraphMapping(raw);
    expect(result.ok && Object.isFrozen(result.value[0])).toBe(true);
    expect(result.ok && result.value[0]).not.toBe(raw[0]);
  });

  it("normalises phone numbers and addresses", () => {
    expect(normalizeRecipient("+1 (555) 010-0001")).toBe("+15550100001");
    expect(normalizeRecipient("Boss <Boss@Example.com>")).toBe("boss@example.com");
  });
});
