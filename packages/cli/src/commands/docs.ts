import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { suggest } from "@acp/core";
import { printJson, printLine, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { docsRoot, listDocsPages, matchDocsPages, type DocsPage } from "../help/docs-pages.js";

const HELP_AFTER = `
The guides and references ship with acp: this reads them where acp is installed, so every "Guide:" and
"Docs:" pointer of a --help (\`acp docs guides/proxy\`) works without the repository or a network.

PAGE is a name as the list shows it (guides/proxy, reference/cli/check), also written as a path
(docs/guides/proxy.md, as the pages link to each other), or its last part when only one page has it
(sandbox, errors). The page is printed as Markdown; pipe it to a pager or viewer, or open the file --path
prints.

Examples:
  acp docs                                 # every page, with its title
  acp docs guides/proxy                    # put ACP in front of an MCP server
  acp docs guides/serve | less
  acp docs errors --path                   # where the page is, to open it in an editor

Exit codes: 0 printed, 1 the docs are not where acp is installed (a copy made without them), 2 usage: no
page has that name (the nearest is suggested), or a last part several pages share (they are listed).`;

function requireRoot(): string {
  const root = docsRoot();
  if (root === undefined)
    throw new CliError(
      "the documentation is not installed with this copy of acp (no docs/ beside its bin/): reinstall it from " +
        "a package made with `npm run pack:release`, which ships them",
      EXIT.error,
    );
  return root;
}

function pageNamed(pages: readonly DocsPage[], asked: string): DocsPage {
  const matches = matchDocsPages(pages, asked);
  if (matches.length === 1 && matches[0] !== undefined) return matches[0];
  if (matches.length > 1)
    throw new CliError(
      `\`${asked}\` names several pages: ${matches.map((p) => p.name).join(", ")} (give the whole name)`,
      EXIT.usage,
    );
  const names = pages.map((p) => p.name);
  const near = suggest(asked, [...names, ...names.map((n) => n.slice(n.lastIndexOf("/") + 1))]);
  const hint = near !== undefined ? ` (did you mean \`${near}\`?)` : "";
  throw new CliError(`no page \`${asked}\`${hint}: \`acp docs\` lists them`, EXIT.usage);
}

/** Registers `acp docs`: the documentation that ships with acp, listed or printed. */
export function registerDocs(parent: Command, ctx: CliContext): void {
  parent
    .command("docs")
    .description("list the guides and references installed with acp, or print one")
    .argument("[page]", "the page to print (guides/proxy, reference/cli/check, …); none: list them")
    .option("--path", "print the page's file (or, with no PAGE, the docs directory) instead of its text")
    .option("--json", "print as JSON: the list, [{ name, title, file }], or the page, { name, title, file, text }")
    .addHelpText("after", HELP_AFTER)
    .action((page: string | undefined, options: { path?: boolean; json?: boolean }) => {
      const root = requireRoot();
      const pages = listDocsPages(root);
      if (page === undefined) {
        if (options.path === true) printLine(ctx, root);
        else if (options.json === true) printJson(ctx, pages);
        else {
          const width = Math.max(...pages.map((p) => p.name.length));
          for (const p of pages) printLine(ctx, `${p.name.padEnd(width)}  ${p.title}`);
        }
        return;
      }
      const found = pageNamed(pages, page);
      if (options.path === true) printLine(ctx, found.file);
      else if (options.json === true) printJson(ctx, { ...found, text: readFileSync(found.file, "utf8") });
      else ctx.io.stdout.write(readFileSync(found.file, "utf8"));
    });
}
