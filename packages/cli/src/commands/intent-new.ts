import { existsSync } from "node:fs";
import type { Command } from "commander";
import { stringify } from "yaml";
import { compileIntent, formatIssue, suggest } from "@acp/core";
import { printError, printJson, printLine, resolvePath, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { writeOutputFileSync } from "../decision/write-output.js";
import { askIntent, confirmWrite } from "../intent/interactive.js";
import { createLinePrompter } from "../intent/line-prompter.js";
import { INTENT_TEMPLATES, findIntentTemplate, type IntentTemplate } from "../intent/templates.js";

interface IntentNewOptions {
  template?: string;
  trusted?: string[];
  goal?: string;
  out?: string;
  force?: boolean;
  list?: boolean;
  interactive?: boolean;
  json?: boolean;
}

/** An intent made from a template: its YAML (with the header comment) and the object itself. */
interface MadeIntent {
  readonly template: string;
  readonly text: string;
  readonly intent: Record<string, unknown>;
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** Parses `--trusted NAME=VALUE` flags onto the template's (empty) lists. */
function trustedValues(
  entries: readonly string[],
  base: Record<string, unknown>,
  asks: Readonly<Record<string, string>> | undefined,
): Record<string, string[]> {
  // without a template yet (chosen later, interactively) any name is taken as given
  const known = asks === undefined ? undefined : [...new Set([...Object.keys(asks), ...Object.keys(base)])];
  const out: Record<string, string[]> = {};
  for (const [key, value] of Object.entries(base)) out[key] = Array.isArray(value) ? value.map(String) : [];
  for (const entry of entries) {
    const at = entry.indexOf("=");
    if (at <= 0 || at === entry.length - 1)
      throw new CliError(`--trusted: expected NAME=VALUE, got \`${entry}\``, EXIT.usage);
    const name = entry.slice(0, at);
    if (known !== undefined && !known.includes(name)) {
      // a typo would leave the value the template asks for empty, and write an intent nothing can pass
      const guess = suggest(name, known);
      const expected = known.map((k) => `\`${k}\``).join(", ");
      throw new CliError(
        `--trusted: the template asks for no \`${name}\`${guess !== undefined ? ` (did you mean \`${guess}\`)` : ""}; it asks for ${expected}`,
        EXIT.usage,
      );
    }
    (out[name] ??= []).push(entry.slice(at + 1));
  }
  return out;
}

/**
 * A notice on stderr for each value the template asks for (and does not call optional) that no `--trusted`
 * named: the intent is still written (it fails closed: with nothing trusted, every call that uses such a
 * value asks a person), but it does not hold what the template is for (`pay-a-bill`: only to the account you
 * give). Interactively such a list is asked again instead.
 */
function noticeEmptyAsks(ctx: CliContext, template: IntentTemplate, trusted: Readonly<Record<string, string[]>>): void {
  for (const [name, what] of Object.entries(template.asks)) {
    if (/optional/i.test(what) || (trusted[name]?.length ?? 0) > 0) continue;
    printError(
      ctx,
      `acp: notice: no \`${name}\` given (${what}): the intent trusts none, so every call that uses one asks you; name it with --trusted ${name}=VALUE`,
    );
  }
}

function templateNamed(name: string): IntentTemplate {
  const template = findIntentTemplate(name);
  if (template !== undefined) return template;
  const guess = suggest(
    name,
    INTENT_TEMPLATES.map((t) => t.name),
  );
  const names = INTENT_TEMPLATES.map((t) => t.name).join(", ");
  const help = guess !== undefined ? `did you mean \`${guess}\`` : `expected one of ${names}; see --list`;
  throw new CliError(`unknown template \`${name}\` (${help})`, EXIT.usage);
}

/** The intent YAML of a template with the person's values; validated first (exit 4 with every problem). */
function intentText(template: IntentTemplate, trusted: Record<string, string[]>, goal: string | undefined): MadeIntent {
  const intent = { ...template.intent, ...(goal !== undefined ? { goal } : {}), trusted_values: trusted };
  const checked = compileIntent(intent);
  if (!checked.ok)
    throw new CliError(
      `the intent does not validate:\n${checked.issues.map((i) => formatIssue(i)).join("\n")}`,
      EXIT.invalid,
    );
  const text = `# acp intent (template ${template.name}): ${template.summary}\n${stringify(intent)}`;
  return { template: template.name, text, intent };
}

/** Writes the intent to `out` (or stdout); with --json prints `{template, out, intent}` instead of the YAML or line. */
function write(ctx: CliContext, made: MadeIntent, out: string | undefined, force: boolean, json: boolean): void {
  const path = out === undefined ? undefined : resolvePath(ctx.io, out);
  if (path !== undefined) {
    if (existsSync(path) && !force) throw new CliError(`\`${path}\` exists (use --force to overwrite)`, EXIT.error);
    writeOutputFileSync(path, made.text);
  }
  if (json) printJson(ctx, { template: made.template, out: path ?? null, intent: made.intent });
  else if (path === undefined) ctx.io.stdout.write(made.text);
  else printLine(ctx, `wrote ${path}: use it with \`acp proxy --intent ${path}\``);
}

async function interactive(ctx: CliContext, options: IntentNewOptions): Promise<void> {
  const template = options.template !== undefined ? templateNamed(options.template) : undefined;
  const base = (template?.intent["trusted_values"] as Record<string, unknown> | undefined) ?? {};
  const preset = trustedValues(options.trusted ?? [], base, template?.asks);
  if (options.out !== undefined && existsSync(resolvePath(ctx.io, options.out)) && options.force !== true)
    throw new CliError(`\`${resolvePath(ctx.io, options.out)}\` exists (use --force to overwrite)`, EXIT.error);
  const p = await createLinePrompter(ctx.io);
  try {
    const answers = await askIntent(p, {
      ...(template !== undefined ? { template } : {}),
      trusted: preset,
      ...(options.goal !== undefined ? { goal: options.goal } : {}),
    });
    const made = intentText(answers.template, answers.trusted, answers.goal);
    p.say("");
    for (const line of made.text.trimEnd().split("\n")) p.say(`  ${line}`);
    p.say("");
    const { out } = await confirmWrite(p, options.out);
    if (out !== undefined && existsSync(resolvePath(ctx.io, out)) && options.force !== true)
      throw new CliError(`\`${resolvePath(ctx.io, out)}\` exists (use --force to overwrite)`, EXIT.error);
    write(ctx, made, out, options.force === true, options.json === true);
  } finally {
    p.close();
  }
}

/** Registers `acp intent new`. */
export function registerIntentNew(parent: Command, ctx: CliContext): void {
  parent
    .command("new")
    .description("write an intent from a template for a common job, with the values only you can name")
    .option("-t, --template <name>", `one of: ${INTENT_TEMPLATES.map((t) => t.name).join(", ")}`)
    .option(
      "--trusted <name=value>",
      "a value you name (trusted for provenance), e.g. recipients=me@example.com; a name the template asks for (--list); repeatable",
      collect,
    )
    .option("--goal <text>", "your goal in your own words (shown to people in questions)")
    .option("-o, --out <file>", "where to write the intent (default: stdout)")
    .option("--force", "overwrite --out if it exists")
    .option("--list", "list the templates and what each asks for")
    .option("-i, --interactive", "ask for the template, your values and the goal, line by line (also from a pipe)")
    .option("--json", "print {template, out, intent} as JSON (with --list: the templates and what each asks for)")
    .addHelpText(
      "after",
      `
Examples:
  acp intent new                      # on a terminal: asks which template, your values and the goal
  acp intent new --list
  mkdir -p ~/.acp/intents             # -o writes only into a directory that exists
  acp intent new -t summarise-my-day --trusted recipients=me@example.com -o ~/.acp/intents/day.yml
  printf '1\\nme@example.com\\n\\ny\\n' | acp intent new --interactive -o day.yml   # template, value, goal (Enter), yes
  acp intent new -t pay-a-bill --trusted accounts=DE44500105175407324931 --json | jq .intent
  acp proxy --intent ~/.acp/intents/day.yml --upstream '…'

Without --template, it asks on a terminal; without a terminal it needs --template or --interactive
(it never waits on a stdin nobody types into). The intent is checked before it is written and, when
asked for interactively, shown for a yes first. Values you name are trusted: a consequential call may
use them; values that only came from what the agent read make it ask. A value the template asks for
(not marked optional) left without --trusted is written as an empty list, with a notice on stderr
naming the flag: nothing is trusted, so every call using such a value asks you. Guide: acp docs guides/intents

Exit codes: 0 written (or printed, or --list), 1 the --out file exists (use --force), not confirmed
(anything but y or yes at the end: nothing written) or the file cannot be written, 2 usage (an unknown
template, a malformed --trusted or one naming a value the template does not ask for, neither --template
nor --interactive without a terminal, input that ended early, three unusable answers to one question),
4 the intent does not validate (every problem listed).`,
    )
    .action(async (options: IntentNewOptions) => {
      if (options.list === true) {
        if (options.json === true) {
          printJson(
            ctx,
            INTENT_TEMPLATES.map((t) => ({ name: t.name, summary: t.summary, asks: t.asks })),
          );
          return;
        }
        for (const t of INTENT_TEMPLATES) {
          printLine(ctx, `${t.name}: ${t.summary}`);
          for (const [name, what] of Object.entries(t.asks)) printLine(ctx, `  --trusted ${name}=…  ${what}`);
        }
        return;
      }
      if (options.interactive === true || (options.template === undefined && ctx.io.stdinIsTTY)) {
        await interactive(ctx, options);
        return;
      }
      if (options.template === undefined)
        throw new CliError(
          "name a template with --template (see --list), or answer questions with --interactive",
          EXIT.usage,
        );
      const template = templateNamed(options.template);
      const base = template.intent["trusted_values"] as Record<string, unknown>;
      const trusted = trustedValues(options.trusted ?? [], base, template.asks);
      const made = intentText(template, trusted, options.goal);
      noticeEmptyAsks(ctx, template, trusted);
      write(ctx, made, options.out, options.force === true, options.json === true);
    });
}
