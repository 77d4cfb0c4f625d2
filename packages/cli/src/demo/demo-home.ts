import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { SCRYPT_FLOOR, wrapPrivateKey } from "@acp/core";
import { parseDocument } from "yaml";
import { configTemplate, createHome } from "@acp/store";

/** The demo policy: reads pass, mail to the user passes, mail to anyone else needs the person. */
export const DEMO_POLICY = `# acp demo: the policy a careful user starts from.
version: "1"
default_action: ask
rules:
  - id: reads
    description: reading the calendar and the inbox is free
    match: { category: read }
    action: allow
  - id: mail-to-me
    description: the agent may mail its own user
    match: { tool: send_email, args: { to: "me@example.com" } }
    action: allow
  - id: mail-to-anyone-else
    description: mail to anyone else needs the person's consent
    match: { tool: send_email }
    action: ask
    level: high
    timeout: 60
`;

/** Where a demo's files are. */
export interface DemoHome {
  readonly root: string;
  readonly home: string;
  readonly passphrase: string;
  readonly outbox: string;
  readonly calendar: string;
  readonly mail: string;
}

/**
 * Creates a throwaway ACP home like `acp init` makes (fresh keys, the starter config.yml with its `session:`
 * block), with the demo policy and both stand-in servers in config.yml.
 */
export function createDemoHome(root: string): DemoHome {
  const home = join(root, "acp-home");
  const passphrase = randomBytes(24).toString("base64url");
  // from dist/demo/ or from the bundle beside it (dist/bundle/, scripts/bundle-cli.mjs): the same directory
  const servers = fileURLToPath(new URL("../demo/servers/", import.meta.url));
  const calendar = join(servers, "calendar-server.js");
  const mail = join(servers, "mail-server.js");
  const created = createHome(home, {
    privateKeyFile: wrapPrivateKey(randomBytes(32), passphrase, randomBytes, SCRYPT_FLOOR),
    configText: configTemplate(join(home, "policy.yml")),
    policyText: DEMO_POLICY,
    force: false,
    stamp: "demo",
  });
  if (!created.ok) throw new Error(created.issues[0]?.message ?? "cannot create the demo home");
  const outbox = join(root, "out", "outbox.jsonl");
  // the config `acp init` writes (its starter `session:` block included), with the two stand-in servers
  const config = parseDocument(configTemplate(join(home, "policy.yml")));
  config.setIn(
    ["proxy", "upstream_servers"],
    [
      { name: "calendar", command: `${JSON.stringify(process.execPath)} ${JSON.stringify(calendar)}` },
      {
        name: "mail",
        command: `${JSON.stringify(process.execPath)} ${JSON.stringify(mail)}`,
        env: { DEMO_OUTBOX: outbox },
      },
    ],
  );
  writeFileSync(join(home, "config.yml"), config.toString({ lineWidth: 0 }), { mode: 0o600 });
  mkdirSync(join(root, "out"), { recursive: true });
  return { root, home, passphrase, outbox, calendar, mail };
}
