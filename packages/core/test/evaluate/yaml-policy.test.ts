import { describe, expect, it } from "vitest";
import { compilePolicy, createMemoryRateLimiter, evaluatePolicy } from "../../src/evaluate/index.js";
import { assertPolicy } from "../../src/policy/index.js";
import type { ActionRequest } from "../../src/request/index.js";

const POLICY = `
version: "1"
default_action: ask
classify:
  - tool: "crm_*"
    category: communication
rules:
  - id: no-prod-deploys-at-night
    match: { tool: "deploy_*", server: "prod-*" }
    action: deny
    conditions:
      time_of_day: { after: "20:00", before: "07:00", timezone: Europe/Paris }
  - id: colleagues
    match:
      tool: "send_*"
      args:
        to: "*@example.com"
    action: allow
    rate_limit: "2/minute"
  - id: crm
    match: { category: communication }
    action: ask
    level: high
    timeout: 300
  - id: reads
    match: { category: read }
    action: allow
`;

const compiled = compilePolicy(assertPolicy(POLICY));
const req = (tool: string, args: Record<string, unknown> = {}, server?: string): ActionRequest => ({
  tool,
  arguments: args,
  ...(server !== undefined ? { server } : {}),
});

describe("a policy parsed from YAML", () => {
  it("decides the consent-protocol examples end to end", async () => {
    const limiter = createMemoryRateLimiter();
    const day = { now: new Date("2025-03-10T12:00:00Z"), rateLimiter: limiter };
    const night = { now: new Date("2025-03-10T22:00:00Z"), rateLimiter: limiter };
    expect(await evaluatePolicy(compiled, req("deploy_app", {}, "prod-eu"), night)).toMatchObject({
      route: "refuse",
      rule: "no-prod-deploys-at-night",
    });
    expect(await evaluatePolicy(compiled, req("deploy_app", {}, "prod-eu"), day)).toMatchObject({
      route: "ask",
      rule: "default",
    });
    expect(
      await evaluatePolicy(compiled, req("send_email", { to: ["a@example.com", "b@example.com"] }), day),
    ).toMatchObject({
      route: "accept",
      rule: "colleagues",
    });
    expect(
      await evaluatePolicy(compiled, req("send_email", { to: ["a@example.com", "x@evil.com"] }), day),
    ).toMatchObject({
      route: "ask",
      rule: "crm",
      level: "high",
      timeout: 300,
    });
    expect(await evaluatePolicy(compiled, req("crm_note"), day)).toMatchObject({
      rule: "crm",
      category: "communication",
    });
    expect(await evaluatePolicy(compiled, req("read_file"), day)).toMatchObject({ route: "accept", rule: "reads" });
  });

  it("refuses once the parsed rate limit is spent", async () => {
    const limiter = createMemoryRateLimiter();
    const opts = { now: new Date("2025-03-10T12:00:00Z"), rateLimiter: limiter };
    const mail = req("send_email", { to: "a@example.com" });
    expect((await evaluatePolicy(compiled, mail, opts)).route).toBe("accept");
    expect((await evaluatePolicy(compiled, mail, opts)).route).toBe("accept");
    const third = await evaluatePolicy(compiled, mail, opts);
    expect(third.route).toBe("refuse");
    expect(third.reasons.at(-1)?.message).toBe(
      "rule `colleagues` is rate limited: limit `2/minute` spent; try again in 60 s",
    );
  });
});
