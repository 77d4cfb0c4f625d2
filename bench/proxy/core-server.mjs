#!/usr/bin/env node
// The proxy's own floor for bench/suites/proxy.mjs (not a suite: run.mjs runs every file in suites/): `createProxy` + `serveStdio` in front of the upstream given on
// the command line, with an accept-all decision and nothing else (no policy, no session runtime, no audit).
// What `acp proxy` costs beyond this row is the pipeline, the session runtime and the audit.
import { createProxy, serveStdio } from "@acp/proxy";

const [command, ...args] = process.argv.slice(2);
const proxy = createProxy({
  upstreams: [{ name: "everything", transport: "stdio", command, args }],
  decide: async () => ({
    route: "accept",
    action: "allow",
    rule: null,
    category: "read",
    risk_level: "low",
    reasons: [],
    verdicts: [],
  }),
  broker: { ask: async () => ({ kind: "expired" }) },
});
await proxy.start();
const { closed } = await serveStdio(proxy);
await closed;
await proxy.close();
process.exit(0);
