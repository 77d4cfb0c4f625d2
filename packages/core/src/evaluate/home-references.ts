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
const HOME_REFERENCE = new RegExp(
  "^(?:" +
    [
      String.raw`\$(?:home|userprofile)`,
      String.raw`\$\{(?:home|userprofile)\}`,
      String.raw`\$env:(?:home|userprofile)`,
      String.raw`\$\{env:(?:home|userprofile)\}`,
      String.raw`(?:\$env:homedrive|\$\{env:homedrive\})?(?:\$env:homepath|\$\{env:homepath\})`,
      String.raw`%(?:home|userprofile)%`,
      String.raw`(?:%homedrive%)?%homepath%`,
    ].join("|") +
    String.raw`)(?=[/\\]|$)`,
  "i",
);

/** Whether `text` starts with a reference to a home ({@link HOME_REFERENCE}: `$HOME/x`, `%USERPROFILE%\x`). */
export function startsWithHomeReference(text: string): boolean {
  return HOME_REFERENCE.test(text);
}

/**
 * `text` with the home reference it starts with written `~` (`$HOME/.ssh/id_rsa` and
 * `%USERPROFILE%/.ssh/id_rsa` are `~/.ssh/id_rsa`), which the `~` readings then take as every home it may
 * be; undefined for a value without one, or with `\` after it (its reading with `/` for `\` is read so).
 */
export function homeReferenceAsTilde(text: string): string | undefined {
  const reference = HOME_REFERENCE.exec(text);
  if (reference === null) return undefined;
  const rest = text.slice(reference[0].length);
  return rest.startsWith("\\") ? undefined : `~${rest}`;
}
