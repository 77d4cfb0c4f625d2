import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildCli,
  checksWith,
  passedScenarios,
  runConformance,
  startAcpProxyHttp,
  CONFORMANCE_SERVER,
  startConformanceServer,
  type ConformanceResults,
  type Started,
} from "./fixtures/conformance-harness.js";

/** Allows everything the conformance fixture serves (tools and resource reads); denies the rest. */
const POLICY = `version: "1"
default_action: deny
rules:
  - id: conformance-fixture
    match: { server: conformance }
    action: allow
`;

/** The scenarios whose checks exercise what a forwarding proxy most easily loses. */
const SERVER_TO_CLIENT = [
  "tools-call-with-logging",
  "tools-call-with-progress",
  "tools-call-sampling",
  "tools-call-elicitation",
  "elicitation-sep1034-defaults",
  "elicitation-sep1330-enums",
  "resources-subscribe",
  "resources-unsubscribe",
];

/** Scenarios whose details name the URL, session or SSE event ids of the listener itself. */
const TRANSPORT_SPECIFIC = new Set([
  "server-initialize",
  "dns-rebinding-protection",
  "server-sse-polling",
  "server-sse-multiple-streams",
]);

/** Each scenario's checks as `[id, status, details]`, without the transport-specific scenarios. */
function contentOf(results: ConformanceResults): Record<string, unknown[]> {
  return Object.fromEntries(
    [...results]
      .filter(([scenario]) => !TRANSPORT_SPECIFIC.has(scenario))
      .map(([scenario, checks]) => [scenario, checks.map((c) => [c.id, c.status, c.details])]),
  );
}

describe("the official MCP conformance suite (server scenarios), directly and through `acp proxy`", () => {
  let upstream: Started;
  let proxy: Started;
  let stdioProxy: Started;
  let direct: ConformanceResults;
  let proxied: ConformanceResults;
  let proxiedStdio: ConformanceResults;

  beforeAll(async () => {
    await buildCli();
    upstream = await startConformanceServer();
    const dir = mkdtempSync(join(tmpdir(), "acp-conformance-policy-"));
    writeFileSync(join(dir, "policy.yml"), POLICY);
    proxy = await startAcpProxyHttp(upstream.url, "conformance", join(dir, "policy.yml"));
    const stdioUpstream = `${process.execPath} ${CONFORMANCE_SERVER} --stdio`;
    stdioProxy = await startAcpProxyHttp(stdioUpstream, "conformance", join(dir, "policy.yml"));
    // the suite is quick (a few seconds): once each way
    direct = await runConformance(upstream.url);
    proxied = await runConformance(proxy.url);
    proxiedStdio = await runConformance(stdioProxy.url);
  }, 300_000);

  afterAll(async () => {
    await proxy?.stop();
    await stdioProxy?.stop();
    await upstream?.stop();
  });

  it("the fixture passes every scenario of the suite directly", () => {
    expect(direct.size).toBeGreaterThanOrEqual(32);
    expect(checksWith(direct, "FAILURE")).toEqual([]);
    expect(passedScenarios(direct)).toEqual([...direct.keys()].sort());
  });

  it("through the proxy, every scenario the direct connection passes passes too", () => {
    expect([...proxied.keys()].sort()).toEqual([...direct.keys()].sort());
    expect(checksWith(proxied, "FAILURE")).toEqual([]);
    expect(passedScenarios(proxied)).toEqual(passedScenarios(direct));
  });

  it("through the proxy, the very same checks succeed (none downgraded to a warning)", () => {
    expect(checksWith(proxied, "SUCCESS")).toEqual(checksWith(direct, "SUCCESS"));
    expect(checksWith(proxied, "SUCCESS").length).toBeGreaterThanOrEqual(44);
  });

  it("logging, progress, sampling, elicitation, subscriptions and every result cross the proxy unchanged", () => {
    for (const scenario of SERVER_TO_CLIENT) expect(direct.get(scenario)?.length, scenario).toBeGreaterThan(0);
    expect(Object.keys(contentOf(direct)).length).toBe(direct.size - TRANSPORT_SPECIFIC.size);
    expect(contentOf(proxied)).toEqual(contentOf(direct));
  });

  it("with the fixture behind the proxy over stdio instead, the same checks succeed with the same details", () => {
    expect(checksWith(proxiedStdio, "FAILURE")).toEqual([]);
    expect(checksWith(proxiedStdio, "SUCCESS")).toEqual(checksWith(direct, "SUCCESS"));
    expect(contentOf(proxiedStdio)).toEqual(contentOf(direct));
  });

  it("the proxy itself refuses a foreign Host (DNS rebinding), as the suite checks", () => {
    const checks = proxied.get("dns-rebinding-protection") ?? [];
    expect(checks.map((c) => [c.id, c.status])).toEqual([
      ["localhost-host-rebinding-rejected", "SUCCESS"],
      ["localhost-host-valid-accepted", "SUCCESS"],
    ]);
  });
});
