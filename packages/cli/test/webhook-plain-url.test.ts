import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { webhookUrlWarning } from "@acp/proxy/consent";
import { readConfigFile } from "../src/wiring/config-file.js";
import { configuredChannels } from "../src/wiring/config-channels.js";
import { tempRoot } from "./home-fixture.js";

const root = tempRoot("webhook-plain-url");
afterAll(root.cleanup);

describe("webhook.url over plain HTTP to another machine", () => {
  it("is warned about, naming the host only; https:// and this machine are not", () => {
    expect(webhookUrlWarning("http://approvals.internal:8080/hooks/T0/path-token?token=query-token")).toBe(
      "`webhook.url` is plain http:// to approvals.internal:8080: every consent request (arguments redacted) " +
        "crosses the network in clear text; give the receiver an https:// URL",
    );
    const basic = webhookUrlWarning("http://ops:pw-in-url@10.0.0.7/acp") ?? "";
    expect(basic).toContain("to 10.0.0.7: every consent request (arguments redacted) and the URL's user:password");
    expect(basic).not.toContain("pw-in-url");
    for (const url of [
      "https://approvals.example.com/acp",
      "http://127.0.0.1:9000/acp",
      "http://localhost:9000/acp",
      "http://[::1]:9000/acp",
    ]) {
      expect(webhookUrlWarning(url), url).toBeNull();
    }
  });

  it("acp proxy and acp serve say so when they read the config, before any request is sent", () => {
    const path = join(root.dir, "config.yml");
    const url = "http://hook:pw-in-url@approvals.internal/hooks/T0/path-token?token=query-token";
    writeFileSync(path, `channel: webhook\nwebhook:\n  url: "${url}"\n  secret: "encrypted:not-opened-here"\n`);
    const lines: string[] = [];
    const seed = (): Promise<Uint8Array> => Promise.reject(new Error("not asked: nothing was sent"));
    const channels = configuredChannels(readConfigFile(path, true), seed, (l) => void lines.push(l));
    expect(channels.map((c) => c.name)).toEqual(["webhook"]);
    expect(lines).toEqual([
      "warning: `webhook.url` is plain http:// to approvals.internal: every consent request (arguments redacted) " +
        `and the URL's user:password (HTTP Basic) crosses the network in clear text; give the receiver an https:// URL (${path})`,
    ]);
    for (const secret of ["pw-in-url", "path-token", "query-token"]) expect(lines.join("\n")).not.toContain(secret);
  });
});
