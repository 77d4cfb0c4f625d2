import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { registerPolicyValidate } from "./policy-validate.js";
import { registerPolicySimulate } from "./policy-simulate.js";
import { registerPolicyTest } from "./policy-test.js";
import { registerCheck } from "./check.js";
import { registerGraphCheck } from "./graph-check.js";
import { registerGraphLint } from "./graph-lint.js";
import { registerGraphReview } from "./graph-review.js";
import { registerInit } from "./init.js";
import { registerDoctor } from "./doctor.js";
import { registerProofVerify } from "./proof-verify.js";
import { registerAuditVerify } from "./audit-verify.js";
import { registerAuditTail } from "./audit-tail.js";
import { registerVaultSet } from "./vault-set.js";
import { registerVaultList } from "./vault-list.js";
import { registerVaultRm } from "./vault-rm.js";
import { registerConfigSetSecret } from "./config-set-secret.js";
import { registerProxy } from "./proxy.js";
import { registerDemo } from "./demo.js";
import { registerIntentNew } from "./intent-new.js";
import { registerIntentSet } from "./intent-set.js";
import { registerPolicyVerify } from "./policy-verify.js";
import { createProxyWiring } from "../wiring/proxy-wiring.js";
import { registerPending } from "./pending.js";
import { registerApprove } from "./approve.js";
import { registerDeny } from "./deny.js";
import { registerReplay } from "./replay.js";
import { registerClaim } from "./claim.js";
import { registerServe } from "./serve.js";
import { registerConsoleLink } from "./console-link.js";
import { registerRun } from "./run.js";
import { registerDocs } from "./docs.js";

/** Registers every command; one file per command. */
export function registerCommands(program: Command, ctx: CliContext): void {
  registerDemo(program, ctx);
  registerInit(program, ctx);
  registerDoctor(program, ctx);
  registerProxy(program, ctx, createProxyWiring(ctx));
  registerRun(program, ctx);
  registerPending(program, ctx);
  registerApprove(program, ctx);
  registerDeny(program, ctx);

  const policy = program.command("policy").description("validate, simulate and test policy files");
  registerPolicyValidate(policy, ctx);
  registerPolicySimulate(policy, ctx);
  registerPolicyTest(policy, ctx);
  registerPolicyVerify(policy, ctx);

  const intent = program.command("intent").description("intents: what a session may do, in the user's own words");
  registerIntentNew(intent, ctx);
  registerIntentSet(intent, ctx);

  registerCheck(program, ctx);
  registerReplay(program, ctx);
  registerServe(program, ctx);
  registerConsoleLink(program, ctx);

  const graph = program.command("graph").description("the consent graph: check, lint, review");
  registerGraphCheck(graph, ctx);
  registerGraphLint(graph, ctx);
  registerGraphReview(graph, ctx);

  const proof = program.command("proof").description("consent proofs");
  registerProofVerify(proof, ctx);

  const audit = program.command("audit").description("the hash-chained audit trail");
  registerAuditVerify(audit, ctx);
  registerAuditTail(audit, ctx);

  const vault = program.command("vault").description("the encrypted credential vault");
  registerVaultSet(vault, ctx);
  registerVaultList(vault, ctx);
  registerVaultRm(vault, ctx);

  const config = program.command("config").description("config.yml helpers");
  registerConfigSetSecret(config, ctx);

  registerClaim(program, ctx);
  registerDocs(program, ctx);
}
