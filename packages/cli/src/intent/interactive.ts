/**
 * The dialogue of `acp intent new` without `--template` on a terminal (or with `--interactive`): which template,
 * the values only the person can name, the goal in their words; then the YAML is shown and confirmed. Every
 * answer is checked where it is given; an input that ends mid-way is a usage error and nothing is written.
 */
import { CliError, EXIT } from "../exit-codes.js";
import type { LinePrompter } from "./line-prompter.js";
import { INTENT_TEMPLATES, findIntentTemplate, type IntentTemplate } from "./templates.js";

/** What the dialogue produced. */
export interface IntentAnswers {
  readonly template: IntentTemplate;
  readonly trusted: Record<string, string[]>;
  readonly goal: string | undefined;
}

/** Largest trusted value accepted (an address, an IBAN, an account). */
export const MAX_TRUSTED_VALUE_CHARS = 320;
const TRIES = 3;

const ended = (): never => {
  throw new CliError("the input ended before the intent was complete: nothing written", EXIT.usage);
};

async function askTemplate(p: LinePrompter): Promise<IntentTemplate> {
  INTENT_TEMPLATES.forEach((t, i) => p.say(`  ${i + 1}) ${t.name}: ${t.summary}`));
  for (let i = 0; i < TRIES; i++) {
    const line = (await p.ask(`template [1-${INTENT_TEMPLATES.length} or a name]: `)) ?? ended();
    const answer = line.trim();
    const byNumber = /^\d+$/.test(answer) ? INTENT_TEMPLATES[Number(answer) - 1] : undefined;
    const chosen = byNumber ?? findIntentTemplate(answer);
    if (chosen !== undefined) return chosen;
    p.say(`no template \`${answer.slice(0, 80)}\``);
  }
  throw new CliError("no template chosen: nothing written", EXIT.usage);
}

/** Splits a comma-separated answer into values; returns a problem for a bad value. */
export function parseTrustedAnswer(line: string): { values: string[] } | { problem: string } {
  const values = line
    .split(",")
    .map((v) => v.trim())
    .filter((v) => v.length > 0);
  for (const v of values) {
    if (v.length > MAX_TRUSTED_VALUE_CHARS)
      return { problem: `a value is longer than ${MAX_TRUSTED_VALUE_CHARS} characters` };
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(v)) return { problem: "a value contains control characters" };
  }
  return { values: [...new Set(values)] };
}

async function askTrusted(p: LinePrompter, name: string, what: string, preset: readonly string[]): Promise<string[]> {
  const optional = /optional/i.test(what);
  const hint = preset.length > 0 ? ` [${preset.join(", ")}]` : "";
  for (let i = 0; i < TRIES; i++) {
    const line = (await p.ask(`${name}: ${what}; comma-separated${hint}: `)) ?? ended();
    if (line.trim() === "" && preset.length > 0) return [...preset];
    const parsed = parseTrustedAnswer(line);
    if ("problem" in parsed) {
      p.say(parsed.problem);
      continue;
    }
    if (parsed.values.length > 0 || optional) return parsed.values;
    p.say(`\`${name}\` needs at least one value`);
  }
  throw new CliError(`no value for \`${name}\`: nothing written`, EXIT.usage);
}

/**
 * Asks for the template (unless `preset.template` names one), each trusted list it asks for, and the goal.
 * Flags given beside `--interactive` are the defaults (Enter keeps them).
 */
export async function askIntent(
  p: LinePrompter,
  preset: {
    readonly template?: IntentTemplate;
    readonly trusted: Readonly<Record<string, string[]>>;
    readonly goal?: string;
  },
): Promise<IntentAnswers> {
  const template = preset.template ?? (await askTemplate(p));
  const trusted: Record<string, string[]> = { ...preset.trusted };
  for (const [name, what] of Object.entries(template.asks)) {
    trusted[name] = await askTrusted(p, name, what, preset.trusted[name] ?? []);
  }
  const fallback = preset.goal ?? (template.intent["goal"] as string);
  const goal = ((await p.ask(`goal, in your words [${fallback}]: `)) ?? ended()).trim();
  return { template, trusted, goal: goal === "" ? preset.goal : goal };
}

/** Asks where to write (when `--out` was not given; empty: stdout) and for a yes. */
export async function confirmWrite(p: LinePrompter, out: string | undefined): Promise<{ out: string | undefined }> {
  let target = out;
  if (target === undefined) {
    const where = ((await p.ask("write it to which file? (empty: print it): ")) ?? ended()).trim();
    target = where === "" ? undefined : where;
  }
  const yes = ((await p.ask(`write this intent${target !== undefined ? ` to ${target}` : ""}? [y/N]: `)) ?? ended())
    .trim()
    .toLowerCase();
  if (yes !== "y" && yes !== "yes") throw new CliError("not confirmed: nothing written", EXIT.error);
  return { out: target };
}
