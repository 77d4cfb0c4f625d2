/**
 * A home directory written as an environment reference the tool's shell or runtime expands (`$HOME/.ssh`,
 * `%USERPROFILE%\.ssh`, `$env:USERPROFILE\.ssh`): read as `~`, whose homes the `~` readings already name.
 */

/**
 * A reference to the home of whoever runs the tool at the start of a value, followed by `/`, `\` or the
 * end, in any case (Windows and PowerShell read names so; for a POSIX shell `$home` is another name, and
 * reading more there only asks or refuses more): the POSIX shell's `$HOME`, `${HOME}` (and
 * `$USERPROFILE`, which Git Bash and MSYS export), cmd's `%USERPROFILE%`, `%HOME%`,
 * `%HOMEDRIVE%%HOMEPATH%` and `%HOMEPATH%` (the home on the current drive), PowerShell's `$HOME`,
 * `$env:USERPROFILE`, `${env:USERPROFILE}`, `$env:HOME`, `$env:HOMEDRIVE$env:HOMEPATH`.
 */
const REFERENCES = [
  String.raw`\$(?:home|userprofile)`,
  String.raw`\$\{(?:home|userprofile)\}`,
  String.raw`\$env:(?:home|userprofile)`,
  String.raw`\$\{env:(?:home|userprofile)\}`,
  String.raw`(?:\$env:homedrive|\$\{env:homedrive\})?(?:\$env:homepath|\$\{env:homepath\})`,
  String.raw`%(?:home|userprofile)%`,
  String.raw`(?:%homedrive%)?%homepath%`,
].join("|");
const HOME_REFERENCE = new RegExp(String.raw`^(?:${REFERENCES})(?=[/\\]|$)`, "i");

/**
 * `text` without the double quotes around the home reference it starts with (`"$HOME"/.ssh/id_rsa`,
 * `"${HOME}"/.ssh`, `"$HOME/.ssh/id_rsa"`, `"%USERPROFILE%"\.ssh`, `"$env:USERPROFILE\.ssh"` are
 * `$HOME/.ssh/…`): the opening quote and the next one, the reference wholly between them (`"$env:home"path`
 * is not `$env:homepath`); one without its closing quote only without the opening one. `text` itself for
 * any other. A POSIX shell and PowerShell expand a variable inside double quotes, cmd expands `%…%`
 * anywhere, and the quotes are then dropped (by the shell, or by the program's own argument parser on
 * Windows), so the tool reads the home.
 * Not single quotes: neither a POSIX shell nor PowerShell expands anything inside them (`'$HOME'/x` is a
 * directory named `$HOME`), and to cmd `'` is no quote at all (`'%USERPROFILE%'\x` is `'C:\Users\me'\x`,
 * a relative path with quotes in its name). Nor `"~"`: a shell expands `~` only unquoted, so `"~"/x`
 * (and `'~'/x`) is a directory named `~`, not a home.
 */
function withoutQuotes(text: string): string {
  if (!text.startsWith('"')) return text;
  const close = text.indexOf('"', 1);
  const unquoted = close < 0 ? text.slice(1) : text.slice(1, close) + text.slice(close + 1);
  const reference = HOME_REFERENCE.exec(unquoted);
  return reference !== null && (close < 0 || reference[0].length < close) ? unquoted : text;
}

/**
 * Whether `text` starts with a reference to a home ({@link HOME_REFERENCE}: `$HOME/x`, `%USERPROFILE%\x`),
 * or with one in double quotes ({@link withoutQuotes}: `"$HOME"/x`).
 */
export function startsWithHomeReference(text: string): boolean {
  return HOME_REFERENCE.test(withoutQuotes(text));
}

/**
 * `text` with the home reference it starts with written `~` (`$HOME/.ssh/id_rsa`, `"$HOME"/.ssh/id_rsa` and
 * `%USERPROFILE%/.ssh/id_rsa` are `~/.ssh/id_rsa`), which the `~` readings then take as every home it may
 * be; undefined for a value without one, or with `\` after it (its reading with `/` for `\` is read so).
 */
export function homeReferenceAsTilde(text: string): string | undefined {
  const unquoted = withoutQuotes(text);
  const reference = HOME_REFERENCE.exec(unquoted);
  if (reference === null) return undefined;
  const rest = unquoted.slice(reference[0].length);
  return rest.startsWith("\\") ? undefined : `~${rest}`;
}

/**
 * What starts a word inside a value, after which a shell or a program's argument parser reads a home
 * reference or `~` (`cat $HOME/.ssh/id_rsa`, `--key=${HOME}/.ssh`, `scp "%USERPROFILE%\.ssh\id_rsa" x:`,
 * `PATH=~/bin:~/.local/bin`): white space, `=`, `:`, a quote, `(`, `,`, `;`, `|`, `&`, `<`, `>` and `` ` ``.
 */
const WORD_START = String.raw`[\s=:"'(,;|&<>\x60]`;
/** What may follow a home inside a value: `/`, `\`, white space or the end. */
const WORD_REST = String.raw`(?=[/\\\s]|$)`;
/**
 * A home reference starting a word after the value's first character ({@link WORD_START}), bare or wholly in
 * double quotes (`"$HOME"/.ssh`), followed by {@link WORD_REST}.
 */
const HOME_REFERENCE_WITHIN = new RegExp(
  String.raw`(?<=${WORD_START})(?:"(?:${REFERENCES})"|(?:${REFERENCES}))${WORD_REST}`,
  "gi",
);
/** What every home reference and `~` holds. */
const HOME_SIGN = /[$%~]/;
/** `~` or `~name` starting a word after the value's first character, followed by {@link WORD_REST}. */
const TILDE_WITHIN = new RegExp(String.raw`(?<=${WORD_START})~([\w.-]*)${WORD_REST}`, "g");

/**
 * For an `ask` or `deny` rule: the readings of a value with a home inside it, after a word's start
 * ({@link WORD_START}: `cat $HOME/.ssh/id_rsa`, `--key=${HOME}/.ssh/id_rsa`, `cat "$HOME"/.ssh/id_rsa`,
 * `cat ~/.ssh/id_rsa`): the value with each home reference written `~` (`cat ~/.ssh/id_rsa`), and that with
 * each `~` and `~name` so placed as each home it may be, all in one root at a time (`cat /home/~/.ssh/id_rsa`,
 * `cat /root/.ssh/id_rsa`, `cat /home/name/x` for `~name/x`; root's homes for `~` and `~root` only), as
 * {@link homePaths} reads a value that starts with one. Empty for a value without one; a home at the
 * value's start is read by {@link homeReferenceAsTilde} and {@link homePaths}. Not for an `allow` rule.
 */
export function homesWithin(
  text: string,
  userHomeRoots: readonly string[],
  rootHomes: readonly string[],
  someUser: string,
): string[] {
  if (!HOME_SIGN.test(text)) return []; // no `$`, `%` or `~`: one scan
  const tilde = text.replace(HOME_REFERENCE_WITHIN, "~");
  TILDE_WITHIN.lastIndex = 0;
  if (!TILDE_WITHIN.test(tilde)) return [];
  const out = tilde === text ? [] : [tilde];
  for (const root of userHomeRoots) {
    out.push(tilde.replace(TILDE_WITHIN, (_, name: string) => `${root}/${name === "" ? someUser : name}`));
  }
  for (const home of rootHomes) {
    out.push(
      tilde.replace(TILDE_WITHIN, (whole: string, name: string) => (name === "" || name === "root" ? home : whole)),
    );
  }
  return out;
}

/**
 * A glob pattern starting with a home reference in double quotes (`"$HOME"/projects/**`,
 * `"$HOME/projects/**"`) with those two quotes escaped (`\"$HOME\"/projects/**`), so the glob meets the
 * value written so (`"$HOME"/projects/x`), as an exact pattern written so does: a glob reads `"…"` as
 * quoting, and would drop the quotes and take what is between them literally (`$HOME/projects/x`, and
 * `"$HOME/projects/**"` only the text `$HOME/projects/**`). The homes it means are read from the pattern as
 * written ({@link homeReferenceAsTilde}). `pattern` itself for any other, and for one not a glob.
 */
export function quotedHomeAsWritten(pattern: string, isGlob: boolean): string {
  if (!isGlob || !pattern.startsWith('"') || !startsWithHomeReference(pattern)) return pattern;
  const close = pattern.indexOf('"', 1);
  return close < 0 ? `\\${pattern}` : `\\${pattern.slice(0, close)}\\${pattern.slice(close)}`;
}

/**
 * What starts a home inside an `ask` or `deny` rule's pattern: what starts a word in a value ({@link WORD_START}),
 * a `/` (`x/$HOME/.aws`) and a glob's own characters (`*~/.ssh/*`).
 */
const PATTERN_WORD_START = String.raw`[\s=:"'(,;|&<>\x60/*?\]})]`;
/** A home reference inside a pattern after {@link PATTERN_WORD_START}, bare or wholly in double quotes. */
const HOME_REFERENCE_IN_PATTERN = new RegExp(
  String.raw`(?<=${PATTERN_WORD_START})(?:"(?:${REFERENCES})"|(?:${REFERENCES}))${WORD_REST}`,
  "gi",
);
/** `~` or `~name` (a user's glob too, `~*`) inside a pattern after {@link PATTERN_WORD_START}. */
const TILDE_IN_PATTERN = new RegExp(String.raw`(?<=${PATTERN_WORD_START})~([\w.*?-]*)${WORD_REST}`, "g");

/**
 * For an `ask` or `deny` rule: the forms of a pattern with a home inside it, after its first character
 * (`*~/.ssh/*`, `cat ~/.ssh/*`, `x/$HOME/.aws` with `**` around it), as every home it may mean, one home
 * root at a time (`*~/.ssh/*` as `/home/` any user `/.ssh/` with `*` around, and `/root/.ssh/` so), as a
 * pattern starting with one is read (`tildeHomes`): written so, the pattern met only a value with the home written the same way,
 * never `cat /root/.ssh/id_rsa` nor `/home/alice/.aws/credentials`, and a deny rule the author meant for
 * every home missed them. A `/` before the home is the root's own (`x/~/y` is `x/home/` any user `/y`,
 * not `x//home/…`). `namesRoot` says whether a `~name`'s glob meets `root`. Empty for a pattern without one.
 */
export function homesWithinPattern(
  pattern: string,
  userHomeRoots: readonly string[],
  rootHomes: readonly string[],
  namesRoot: (name: string) => boolean,
): string[] {
  if (!HOME_SIGN.test(pattern.slice(1))) return [];
  const tilde = pattern.replace(HOME_REFERENCE_IN_PATTERN, "~");
  TILDE_IN_PATTERN.lastIndex = 0;
  if (!TILDE_IN_PATTERN.test(tilde)) return [];
  const at = (home: string, offset: number): string =>
    offset > 0 && tilde[offset - 1] === "/" && home.startsWith("/") ? home.slice(1) : home;
  const out: string[] = [];
  for (const root of userHomeRoots) {
    out.push(
      tilde.replace(TILDE_IN_PATTERN, (_, name: string, offset: number) =>
        at(`${root}/${name === "" ? "*" : name}`, offset),
      ),
    );
  }
  for (const home of rootHomes) {
    out.push(
      tilde.replace(TILDE_IN_PATTERN, (whole: string, name: string, offset: number) =>
        name === "" || name === "root" || namesRoot(name) ? at(home, offset) : whole,
      ),
    );
  }
  return out;
}
