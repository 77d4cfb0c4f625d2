import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** One documentation page: its name as `acp docs` takes it (`guides/proxy`), its file, its title. */
export interface DocsPage {
  readonly name: string;
  readonly file: string;
  readonly title: string;
}

/** This package's directory: `src/help/` and `dist/help/` are both two levels below it. */
const PACKAGE_DIR = fileURLToPath(new URL("../../", import.meta.url));

/**
 * Where the documentation is: `docs/` inside the installed package (the copy the released package ships), else the
 * checkout's own `docs/` two levels up (`npm install -g ./packages/cli` links the package in place). A
 * directory counts only when it holds the command reference, so a stray `docs/` elsewhere is not read.
 * `undefined` when neither is there.
 */
export function docsRoot(packageDir: string = PACKAGE_DIR): string | undefined {
  for (const dir of [join(packageDir, "docs"), join(packageDir, "..", "..", "docs")]) {
    try {
      if (lstatSync(join(dir, "reference", "cli.md")).isFile()) return dir;
    } catch {
      // not here: the next place
    }
  }
  return undefined;
}

/** The first `# ` heading of a page, without the `#` and backticks; the name when it has none. */
function titleOf(text: string, name: string): string {
  const heading = /^# +(.+)$/m.exec(text)?.[1];
  return heading === undefined ? name : heading.replaceAll("`", "").trim();
}

/**
 * Every Markdown page under `root`, sorted by name. Only regular files are listed (a symbolic link is not
 * followed), so a name given to `acp docs` can only ever be one of these files.
 */
export function listDocsPages(root: string): DocsPage[] {
  const pages: DocsPage[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (entry.isFile() && entry.name.endsWith(".md")) {
        const name = relative(root, file).slice(0, -".md".length).split(sep).join("/");
        pages.push({ name, file, title: titleOf(readFileSync(file, "utf8"), name) });
      }
    }
  };
  walk(root);
  return pages.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * The pages a name given to `acp docs` can mean: the one named exactly (`guides/proxy`, also written as the
 * repository path `docs/guides/proxy.md`, as pages link to each other), else every page whose last part it is
 * (`sandbox` is `guides/sandbox`; `proxy` is both `guides/proxy` and `reference/cli/proxy`). Empty when none.
 */
export function matchDocsPages(pages: readonly DocsPage[], asked: string): DocsPage[] {
  const name = asked
    .replace(/#.*$/, "")
    .replace(/^\.?\//, "")
    .replace(/^docs\//, "")
    .replace(/\.md$/, "");
  const exact = pages.find((p) => p.name === name);
  if (exact !== undefined) return [exact];
  return name === "" ? [] : pages.filter((p) => p.name.endsWith(`/${name}`));
}
