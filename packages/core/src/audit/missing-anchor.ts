import type { AuditVerification } from "./verify-types.js";

/**
 * A verification failed for want of the anchor a log should have beside it (`anchor_missing`): the caller
 * knows the log had one (a marker says so, or it is a home's log holding signed checkpoints) and found none,
 * so a cut of the log after a checkpoint cannot be told and the log is not called intact. A verification
 * that found a problem of its own is returned as it is (that problem comes first); otherwise the same counts
 * with `ok: false` and the problem `where: "anchor"` at line 0 (the line the anchor stood for is not known).
 */
export function failForMissingAnchor(verification: AuditVerification, message: string): AuditVerification {
  if (!verification.ok) return verification;
  return {
    ...verification,
    ok: false,
    problem: { line: 0, code: "anchor_missing", message, where: "anchor" },
    afterProblem: null,
  };
}
