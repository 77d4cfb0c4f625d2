import { existsSync, writeFileSync } from "node:fs";
import type { Command } from "commander";
import { stringify } from "yaml";
import { compileIntent, formatIssue, suggest } from "@acp/core";
import { printLine, resolvePath, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { INTENT_TEMPLATES, findIntentTemplate } from "../intent/templates.js";

interface IntentNewOptions {
  template?: string;
  trusted?: string[];
  goal?: string;
  out?: string;
  force?: boolean;
  list?: boolean;
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

function trustedValues(entries: readonly string[], base: Record<string, unknown>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [key, value] of Object.entries(base)) out[key] = Array.isArray(value) ? value.map(String) : [];
  for (const entry of entries) {
    const at = entry.indexOf("=");
    if (at <= 0 || at === entry.length - 1)
      throw new CliError(`--trusted: expected NAME=VALUE, got \`${entry}\``, EXIT.usage);
    const name = entry.slice(0, at);
    (out[name] ??= []).push(entry.slice(at + 1));
  }
  return out;
}

/** Registers `acp intent new`. */
export function registerIntentNew(parent: Command, ctx: CliContext): void {
  parent
    .command("new")
    .description("write an intent from a template for a common job, with the values only you can name")
    .option("-t, --template <name>", `one of: ${INTENT_TEMPLATES.map((t) => t.name).join(", ")}`)
    .option(
      "--trusted <name=value>",
      "a value you name (trusted for provenance), e.g. recipients=me@example.com; repeatable",
      collect,
    )
    .option("--goal <text>", "your goal in your own words (shown to people in questions)")
    .option("-o, --out <file>", "where to write the intent (default: stdout)")
    .option("--force", "overwrite --out if it exists")
    .option("--list", "list the templates and what each asks for")
    .addHelpText(
      "after",
      `
Examples:
  acp intent new --list
  acp intent new -t summarise-my-day --trusted recipients=me@example.com -o ~/.acp/intents/day.yml
  acp proxy --intent ~/.acp/intents/day.yml --upstream '…'

The intent is checked before it is written (exit 4 with every problem). Values you name are trusted:
a consequential call may use them; values that only came from what the agent read make it ask.`,
    )
    .action((options: IntentNewOptions) => {
      if (options.list === true) {
        for (const t of INTENT_TEMPLATES) {
          printLine(ctx, `${t.name}: ${t.summary}`);
          for (const [name, what] of Object.entries(t.asks)) printLine(ctx, `  --trusted ${name}=…  ${what}`);
        }
        return;
      }
      if (options.template === undefined)
        throw new CliError("name a template with --template (see --list)", EXIT.usage);
      const template = findIntentTemplate(options.template);
      if (template === undefined) {
        const guess = suggest(
          options.template,
          INTENT_TEMPLATES.map((t) => t.name),
        );
        throw new CliError(
          `unknown template \`${options.template}\`${guess !== undefined ? ` (did you mean \`${guess}\`)` : ""}`,
          EXIT.usage,
        );
      }
      const base = template.intent["trusted_values"] as Record<string, unknown>;
      const intent = {
        ...template.intent,
        ...(options.goal !== undefined ? { goal: options.goal } : {}),
        trusted_values: trustedValues(options.trusted ?? [], base),
      };
      const checked = compileIntent(intent);
      if (!checked.ok)
        throw new CliError(
          `the intent does not validate:\n${checked.issues.map((i) => formatIssue(i)).join("\n")}`,
          EXIT.invalid,
        );
      const text = `# acp intent (template ${template.name}): ${template.summary}\n${stringify(intent)}`;
      if (options.out === undefined) {
        ctx.io.stdout.write(text);
        return;
      }
      const path = resolvePath(ctx.io, options.out);
      if (existsSync(path) && options.force !== true)
        throw new CliError(`\`${path}\` exists (use --force to overwrite)`, EXIT.error);
      writeFileSync(path, text, { mode: 0o600 });
      printLine(ctx, `wrote ${path}: use it with \`acp proxy --intent ${path}\``);
    });
}
