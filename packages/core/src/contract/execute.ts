/**
 * The execution rule of the Agent Action Contract v1. A tool executes only when every condition
 * holds; anything missing, odd or tampered with means do not execute.
 */

function isEmptyArray(value: unknown): boolean {
  return Array.isArray(value) && value.length === 0;
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Whether the tool may execute: `gate_decision == "pass"`, `recommended_action == "accept"`,
 * `architecture_decision.route == "accept"`, `hard_blockers` and `aix.hard_blockers` empty arrays,
 * and `validation_errors` an empty array. Accepts any value (a hand-made, parsed or tampered
 * envelope); every field is read once, and a missing or malformed field, or a throwing getter, is false.
 */
export function shouldExecuteTool(envelope: unknown): boolean {
  try {
    if (!isPlainRecord(envelope)) return false;
    if (envelope["gate_decision"] !== "pass") return false;
    if (envelope["recommended_action"] !== "accept") return false;
    const architecture = envelope["architecture_decision"];
    if (!isPlainRecord(architecture) || architecture["route"] !== "accept") return false;
    if (!isEmptyArray(envelope["hard_blockers"])) return false;
    const aix = envelope["aix"];
    if (!isPlainRecord(aix) || !isEmptyArray(aix["hard_blockers"])) return false;
    return isEmptyArray(envelope["validation_errors"]);
  } catch {
    return false;
  }
}
