import type { Command } from "commander";

/**
 * The examples of each command group's --help (`acp vault --help`), by the group's path. Each is one of its
 * commands' own examples, word for word (help-groups.test.ts checks it; help-examples.test.ts runs those).
 */
const GROUP_EXAMPLES: Readonly<Record<string, readonly string[]>> = {
  policy: [
    "acp policy validate                          # $ACP_HOME/policy.yml",
    `acp policy simulate --tool send_email --args '{"to":"mark@attacker.example"}'`,
  ],
  intent: ["acp intent new --list", "acp intent set --list"],
  graph: [
    `echo '{"imessage": {"autonomous": ["read"], "requires_approval": ["send_vip"], "blocked": ["delete_all"]}}' > graph.json`,
    "acp graph check imessage send_vip 0.9 --graph graph.json",
    "acp graph lint graph.json                     # graph.json: ok",
  ],
  proof: ["acp proof verify approval.json"],
  audit: ["acp audit verify", "acp audit tail                 # the last 10 events"],
  vault: ['printf %s "$GITHUB_TOKEN" | acp vault set GITHUB_TOKEN', "acp vault list", "acp vault rm GITHUB_TOKEN"],
  config: ['printf %s "$BOT_TOKEN" | acp config set-secret telegram.bot_token'],
  claim: [
    "acp claim serve --port 8080        # then open http://admin.localhost:8080/claim",
    "acp claim publish --provider http://api.localhost:8080 --file faq.json",
    "acp claim issuer keygen            # then add the printed lines to the provider's $ACP_HOME/claim/config.yml",
  ],
  "claim issuer": [
    "acp claim issuer keygen            # then add the printed lines to the provider's $ACP_HOME/claim/config.yml",
    "acp claim issuer issue --subject agent-42 --audience http://api.localhost:8080 --out agent-42.token",
  ],
};

/** The paths of the command groups of `program` (`["vault"]`, `["claim", "issuer"]`). */
export function groupPaths(program: Command): string[][] {
  const visit = (cmd: Command, path: string[]): string[][] =>
    cmd.commands
      .filter((sub) => sub.commands.length > 0)
      .flatMap((sub) => [[...path, sub.name()], ...visit(sub, [...path, sub.name()])]);
  return visit(program, []);
}

/** The examples a group's --help shows (empty for a group that has none: help-groups.test.ts fails on it). */
export function groupExamples(path: readonly string[]): readonly string[] {
  return GROUP_EXAMPLES[path.join(" ")] ?? [];
}

function findGroup(program: Command, path: readonly string[]): Command | undefined {
  let cmd: Command | undefined = program;
  for (const name of path) cmd = cmd?.commands.find((sub) => sub.name() === name);
  return cmd;
}

/**
 * Gives every command group's --help what each command's has beside its usage line, description and
 * commands: examples, where the details are, and the exit codes (`acp vault` alone is a usage error, 2).
 */
export function addGroupHelp(program: Command): void {
  for (const path of groupPaths(program)) {
    const name = ["acp", ...path].join(" ");
    const examples = groupExamples(path)
      .map((e) => `  ${e}`)
      .join("\n");
    findGroup(program, path)?.addHelpText(
      "after",
      `
Examples:
${examples}

Each command's options, its other examples and its exit codes: ${name} COMMAND --help.

Exit codes: those of the command run; 2 usage: no command or an unknown one (${name} alone prints this
help on stderr), an unknown option.`,
    );
  }
}
