import type { Command } from "commander";
import type { CliContext } from "../context.js";

/** Adds one command (or one command of a group) to `parent`. */
type Register = (parent: Command, ctx: CliContext) => void;

/**
 * A top-level command of `acp`, with the code that adds it loaded only when it is asked for: `acp pending`
 * loads what `pending` needs, not the proxy, the service and the MCP SDK (each `acp` process paid ~900 modules,
 * a second, before this). A group (`policy`, `vault`) is made here, its commands loaded together.
 */
interface TopLevel {
  readonly name: string;
  /** A group's description; a plain command has its own. */
  readonly group?: string;
  readonly load: readonly (() => Promise<Register>)[];
}

/** Every top-level command, in the order `acp --help` lists them; one file per command. */
export const COMMANDS: readonly TopLevel[] = [
  { name: "demo", load: [async () => (await import("./demo.js")).registerDemo] },
  { name: "init", load: [async () => (await import("./init.js")).registerInit] },
  { name: "doctor", load: [async () => (await import("./doctor.js")).registerDoctor] },
  {
    name: "proxy",
    load: [
      async () => {
        const [{ registerProxy }, { createProxyWiring }] = await Promise.all([
          import("./proxy.js"),
          import("../wiring/proxy-wiring.js"),
        ]);
        return (parent, ctx) => registerProxy(parent, ctx, createProxyWiring(ctx));
      },
    ],
  },
  { name: "run", load: [async () => (await import("./run.js")).registerRun] },
  { name: "pending", load: [async () => (await import("./pending.js")).registerPending] },
  { name: "approve", load: [async () => (await import("./approve.js")).registerApprove] },
  { name: "deny", load: [async () => (await import("./deny.js")).registerDeny] },
  {
    name: "policy",
    group: "validate, simulate and test policy files",
    load: [
      async () => (await import("./policy-validate.js")).registerPolicyValidate,
      async () => (await import("./policy-simulate.js")).registerPolicySimulate,
      async () => (await import("./policy-test.js")).registerPolicyTest,
      async () => (await import("./policy-verify.js")).registerPolicyVerify,
    ],
  },
  {
    name: "intent",
    group: "intents: what a session may do, in the user's own words",
    load: [
      async () => (await import("./intent-new.js")).registerIntentNew,
      async () => (await import("./intent-set.js")).registerIntentSet,
    ],
  },
  { name: "check", load: [async () => (await import("./check.js")).registerCheck] },
  { name: "replay", load: [async () => (await import("./replay.js")).registerReplay] },
  { name: "serve", load: [async () => (await import("./serve.js")).registerServe] },
  { name: "console-link", load: [async () => (await import("./console-link.js")).registerConsoleLink] },
  {
    name: "graph",
    group: "the consent graph: check, lint, review",
    load: [
      async () => (await import("./graph-check.js")).registerGraphCheck,
      async () => (await import("./graph-lint.js")).registerGraphLint,
      async () => (await import("./graph-review.js")).registerGraphReview,
    ],
  },
  {
    name: "proof",
    group: "consent proofs",
    load: [async () => (await import("./proof-verify.js")).registerProofVerify],
  },
  {
    name: "audit",
    group: "the hash-chained audit trail",
    load: [
      async () => (await import("./audit-verify.js")).registerAuditVerify,
      async () => (await import("./audit-tail.js")).registerAuditTail,
    ],
  },
  {
    name: "vault",
    group: "the encrypted credential vault",
    load: [
      async () => (await import("./vault-set.js")).registerVaultSet,
      async () => (await import("./vault-list.js")).registerVaultList,
      async () => (await import("./vault-rm.js")).registerVaultRm,
    ],
  },
  {
    name: "config",
    group: "config.yml helpers",
    load: [async () => (await import("./config-set-secret.js")).registerConfigSetSecret],
  },
  { name: "claim", load: [async () => (await import("./claim.js")).registerClaim] },
  { name: "docs", load: [async () => (await import("./docs.js")).registerDocs] },
];

/** Adds the top-level commands `entries` (all of them by default) to `program`, loading each one's code. */
export async function registerCommands(
  program: Command,
  ctx: CliContext,
  entries: readonly TopLevel[] = COMMANDS,
): Promise<void> {
  // loaded together (one wait), added in order
  const loaded = await Promise.all(
    entries.map(async (entry) => ({ entry, adds: await Promise.all(entry.load.map((l) => l())) })),
  );
  for (const { entry, adds } of loaded) {
    const parent = entry.group === undefined ? program : program.command(entry.name).description(entry.group);
    for (const add of adds) add(parent, ctx);
  }
}

/** The top-level command `argv` starts with, when it starts with one by its name (`acp pending …`). */
export function topLevelOf(argv: readonly string[]): TopLevel | undefined {
  const first = argv[0];
  return COMMANDS.find((entry) => entry.name === first);
}
