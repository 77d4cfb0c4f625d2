/**
 * A home written as an environment reference the tool's shell or runtime expands (`$HOME/.ssh/id_rsa`,
 * `%USERPROFILE%\.ssh\id_rsa`, `$env:USERPROFILE\...`) is read as `~`: an ask or deny rule for a home (with
 * `~` or an absolute home) meets it, and an allow rule meets it only when it meets every home it may be (a
 * pattern written with such a reference, or one naming every home). Before, a deny rule for
 * `/home/alice/.ssh/**` missed `$HOME/.ssh/id_rsa`, and an allow rule for a relative `<dir>/.ssh/<file>`
 * allowed it.
 */
import { describe, expect, it } from "vitest";
import { assertPolicy, compilePolicy, matchPolicy } from "../../src/index.js";
import { compileLeafTest } from "../../src/evaluate/arg-match.js";
import { homeReferenceAsTilde } from "../../src/evaluate/home-references.js";
import { buildPolicy } from "./policy-builder.js";
import { referenceMatch } from "./reference-evaluator.js";
import { unitsOf } from "./work-units.js";

const NOW = new Date("2026-03-02T10:00:00Z");

function ruleOn(pattern: string, action: "deny" | "allow" = "deny") {
  const text = `version: "1"\ndefault_action: ask\nrules:\n  - { id: r, match: { args: { v: ${JSON.stringify(pattern)} } }, action: ${action} }\n`;
  const compiled = compilePolicy(assertPolicy(text));
  return (v: string): boolean => matchPolicy(compiled, { tool: "t", arguments: { v } }, NOW).ruleId === "r";
}

/** The home of whoever runs the tool, as each shell and runtime writes it, before `/.ssh/id_rsa`. */
const KEY_AT_HOME = [
  "$HOME/.ssh/id_rsa",
  "${HOME}/.ssh/id_rsa",
  "$home/.ssh/id_rsa",
  "$USERPROFILE/.ssh/id_rsa",
  "%USERPROFILE%\\.ssh\\id_rsa",
  "%userprofile%/.ssh/id_rsa",
  "%HOME%\\.ssh\\id_rsa",
  "%HOMEDRIVE%%HOMEPATH%\\.ssh\\id_rsa",
  "%HOMEPATH%\\.ssh\\id_rsa",
  "$env:USERPROFILE\\.ssh\\id_rsa",
  "${env:USERPROFILE}\\.ssh\\id_rsa",
  "$env:HOME/.ssh/id_rsa",
  "$env:HOMEDRIVE$env:HOMEPATH\\.ssh\\id_rsa",
  " $HOME/.ssh/id_rsa",
  "$HOME/x/../.ssh/id_rsa",
  "%24HOME/.ssh/id_rsa",
];

describe("a home written as an environment reference", () => {
  it("is read as `~` when it starts a value, followed by `/`, `\\` or nothing", () => {
    expect(homeReferenceAsTilde("$HOME/.ssh")).toBe("~/.ssh");
    expect(homeReferenceAsTilde("%USERPROFILE%/.ssh")).toBe("~/.ssh");
    expect(homeReferenceAsTilde("$HOME")).toBe("~");
    // another variable, or one not at the start, is not a home
    for (const v of ["$HOMEDIR/.ssh", "$HOME_X/x", "x/$HOME/.ssh", "%HOMEDRIVE%/x", "$PATH/x", "$env:TEMP\\x"]) {
      expect([v, homeReferenceAsTilde(v)]).toEqual([v, undefined]);
    }
  });

  it("meets a deny rule naming a user's home, written absolute or with `~`, in each spelling", () => {
    for (const pattern of ["/home/alice/.ssh/**", "~/.ssh/**", "/Users/*/.ssh/**", "C:/Users/alice/.ssh/**"]) {
      const denies = ruleOn(pattern);
      for (const v of KEY_AT_HOME) expect([pattern, v, denies(v)]).toEqual([pattern, v, true]);
      // not another directory of the home, nor a reference that is no home
      for (const v of ["$HOME/notes.txt", "$TMPDIR/.ssh/id_rsa", "%TEMP%\\.ssh\\id_rsa"]) {
        expect([pattern, v, denies(v)]).toEqual([pattern, v, false]);
      }
    }
    expect(ruleOn("/root/.ssh/**")("$HOME/.ssh/id_rsa")).toBe(true);
  });

  it("is met by a deny rule written with a reference, as by one written with `~`", () => {
    const denies = ruleOn("$HOME/.ssh/**");
    for (const v of ["/home/alice/.ssh/id_rsa", "~/.ssh/id_rsa", "%USERPROFILE%\\.ssh\\id_rsa", "/root/.ssh/k"]) {
      expect([v, denies(v)]).toEqual([v, true]);
    }
    expect(denies("/srv/.ssh/k")).toBe(false);
  });

  it("is not allowed by an allow rule that does not meet every home it may be", () => {
    // each of these met `$HOME/.ssh/id_rsa` as written, a relative path whose first segment is `$HOME`
    for (const pattern of ["?*/**", "*/.ssh/*", "$*/**", "[$%]*/**"]) {
      const allows = ruleOn(pattern, "allow");
      for (const v of ["$HOME/.ssh/id_rsa", "$USERPROFILE/.ssh/id_rsa", "%HOME%/.ssh/id_rsa"]) {
        expect([pattern, v, allows(v)]).toEqual([pattern, v, false]);
      }
      // a path it names is still allowed
      expect([pattern, allows("$x/.ssh/k")]).toEqual([pattern, true]);
    }
    // nor by an allow rule for a path under the working directory named `$HOME`, nor one written with `~`
    expect(ruleOn("$HOME*/**", "allow")("$HOME/x")).toBe(false);
    expect(ruleOn("~/**", "allow")("$HOME/x")).toBe(false);
  });

  it("is allowed by an allow rule written the same way, or naming any path", () => {
    expect(ruleOn("$HOME/projects/**", "allow")("$HOME/projects/x.txt")).toBe(true);
    expect(ruleOn("${HOME}/projects/**", "allow")("${HOME}/projects/x.txt")).toBe(true);
    expect(ruleOn("%USERPROFILE%\\\\projects\\\\**", "allow")("%USERPROFILE%\\projects\\x.txt")).toBe(true);
    expect(ruleOn("%USERPROFILE%\\projects\\x.txt", "allow")("%USERPROFILE%\\projects\\x.txt")).toBe(true);
    expect(ruleOn("**", "allow")("$HOME/.ssh/id_rsa")).toBe(true);
    // and not where it leaves the directory named
    expect(ruleOn("$HOME/projects/**", "allow")("$HOME/projects/%2e%2e/.ssh/id_rsa")).toBe(false);
    expect(ruleOn("$HOME/projects/**", "allow")("$HOME/.ssh/id_rsa")).toBe(false);
    expect(ruleOn("$HOME/projects/**", "allow")("~/projects/x.txt")).toBe(false);
  });

  it("is read so by the reference evaluator too, for every pattern and value here under each action", () => {
    const patterns = ["/home/alice/.ssh/**", "$HOME/.ssh/**", "%USERPROFILE%\\\\.ssh\\\\*", "?*/**", "*/.ssh/*", "**"];
    const values = [
      "$HOME/.ssh/id_rsa",
      "%USERPROFILE%\\.ssh\\id_rsa",
      "$env:HOMEDRIVE$env:HOMEPATH\\.ssh\\id_rsa",
      "${HOME}/.ssh/id_rsa",
      "$HOMEX/.ssh/k",
      "$home/../alice/.ssh/k",
      "$HOME/%2e%2e/x/.ssh/k",
    ];
    const now = new Date(0);
    for (const pattern of patterns) {
      for (const action of ["allow", "ask", "deny"] as const) {
        const policy = buildPolicy([{ id: "r", match: { args: { v: pattern } }, action }], "ask");
        const compiled = compilePolicy(policy);
        for (const v of values) {
          const request = { tool: "t", arguments: { v } };
          const real = matchPolicy(compiled, request, now).ruleId;
          expect([pattern, action, v, real]).toEqual([pattern, action, v, referenceMatch(policy, request, now)]);
        }
      }
    }
  });

  it("charges the homes it is read as to the decision's work budget", () => {
    const deny = compileLeafTest("/srv/**", true);
    const allow = compileLeafTest("**", false);
    if (typeof deny === "string" || typeof allow === "string") throw new Error(String(deny));
    // the same value without the reference reads no home; with it, each home made is charged
    expect(unitsOf(deny, "$HOME/a/b/c")).toBeGreaterThan(unitsOf(deny, "HOMEX/a/b/c"));
    expect(unitsOf(allow, "$HOME/a/b/c")).toBeGreaterThan(unitsOf(allow, "HOMEX/a/b/c"));
  });
});

describe("a home written with `~` in a value an allow rule reads", () => {
  it("is not allowed by a pattern for relative paths, as the same home written `$HOME` is not", () => {
    // each of these met `~/.ssh/id_rsa` as written (its first segment `~`), while the tool reads a home
    for (const pattern of ["*/.ssh/*", "?*/**", "[~]*/**", "?*/.ssh/*"]) {
      const allows = ruleOn(pattern, "allow");
      for (const v of [
        "~/.ssh/id_rsa",
        "~alice/.ssh/id_rsa",
        "~root/.ssh/id_rsa",
        "%7E/.ssh/id_rsa",
        " ~/.ssh/id_rsa",
      ]) {
        expect([pattern, v, allows(v)]).toEqual([pattern, v, false]);
      }
      // nor as `$HOME`, as before
      expect([pattern, allows("$HOME/.ssh/id_rsa")]).toEqual([pattern, false]);
    }
  });

  it("is allowed by a pattern written with `~` for what it names, or one naming every path", () => {
    expect(ruleOn("~/projects/**", "allow")("~/projects/x.txt")).toBe(true);
    expect(ruleOn("~/projects/x.txt", "allow")("~/projects/x.txt")).toBe(true);
    expect(ruleOn("~alice/projects/**", "allow")("~alice/projects/x.txt")).toBe(true);
    expect(ruleOn("~root/**", "allow")("~root/x")).toBe(true);
    expect(ruleOn("~/projects/**", "allow")("~\\projects\\x.txt")).toBe(false); // `~\projects` is no home as written
    expect(ruleOn("~/projects/**", "allow")(" ~/projects/x.txt")).toBe(false); // nor with a space before it
    expect(ruleOn("**", "allow")("~/.ssh/id_rsa")).toBe(true);
    expect(ruleOn("/home/alice/**", "allow")("/home/alice/x")).toBe(true);
    // and not where it leaves what it names, nor another user's home
    expect(ruleOn("~/projects/**", "allow")("~/projects/../.ssh/id_rsa")).toBe(false);
    expect(ruleOn("~/projects/**", "allow")("~/projects/%2e%2e/.ssh/id_rsa")).toBe(false);
    expect(ruleOn("~alice/**", "allow")("~alice/../bob/x")).toBe(false);
    expect(ruleOn("~alice/**", "allow")("~/x")).toBe(false);
  });

  it("reads a pattern whose user is a glob meeting `root` (`~*`) as root's homes too", () => {
    // `~/x` is also `/root/x`: `~*/**` names it, as `~/**` does
    for (const v of ["~/x", "~root/x", "~ann/x"]) expect([v, ruleOn("~*/**", "allow")(v)]).toEqual([v, true]);
    expect(ruleOn("~a*/**", "allow")("~ann/x")).toBe(true);
    expect(ruleOn("~*/.ssh/**")("/root/.ssh/id_rsa")).toBe(true);
    expect(ruleOn("~a*/.ssh/**")("/root/.ssh/id_rsa")).toBe(false);
  });

  it("is read so by the reference evaluator too", () => {
    const patterns = [
      "*/.ssh/*",
      "?*/**",
      "~/.ssh/*",
      "~alice/**",
      "~root/**",
      "~*/**",
      "**",
      "$HOME/**",
      "/home/*/.ssh/*",
    ];
    const values = ["~/.ssh/id_rsa", "~alice/.ssh/k", "~root/x", "%7E/.ssh/k", "~/x/../.ssh/k", "~", "~\\.ssh\\k"];
    const now = new Date(0);
    for (const pattern of patterns) {
      for (const action of ["allow", "ask", "deny"] as const) {
        const policy = buildPolicy([{ id: "r", match: { args: { v: pattern } }, action }], "ask");
        const compiled = compilePolicy(policy);
        for (const v of values) {
          const request = { tool: "t", arguments: { v } };
          const real = matchPolicy(compiled, request, now).ruleId;
          expect([pattern, action, v, real]).toEqual([pattern, action, v, referenceMatch(policy, request, now)]);
        }
      }
    }
  });
});

describe("a home reference in double quotes", () => {
  // a shell expands `$HOME` inside double quotes and drops the quotes: the tool reads the home
  const QUOTED = [
    '"$HOME"/.ssh/id_rsa',
    '"${HOME}"/.ssh/id_rsa',
    '"$HOME/.ssh/id_rsa"',
    '"$HOME/.ssh"/id_rsa',
    '"%USERPROFILE%"\\.ssh\\id_rsa',
    '"$env:USERPROFILE\\.ssh\\id_rsa"',
    '"$home"/.ssh/id_rsa',
  ];
  // nothing is expanded inside single quotes, nor `~` inside any quotes; nor a reference cut by a quote
  const NOT_A_HOME = [
    "'$HOME'/.ssh/id_rsa",
    "'~'/.ssh/id_rsa",
    '"~"/.ssh/id_rsa',
    '"$HOMEX"/.ssh/id_rsa',
    '"$HO"ME/.ssh/id_rsa',
    '"$env:home"path/.ssh/id_rsa',
    'x"$HOME"/.ssh/id_rsa',
  ];

  it("is read as `~` at the start of a value", () => {
    expect(homeReferenceAsTilde('"$HOME"/.ssh/id_rsa')).toBe("~/.ssh/id_rsa");
    expect(homeReferenceAsTilde('"${HOME}"/.ssh')).toBe("~/.ssh");
    expect(homeReferenceAsTilde('"$HOME/.ssh/id_rsa"')).toBe("~/.ssh/id_rsa");
    expect(homeReferenceAsTilde('"$HOME"')).toBe("~");
    expect(homeReferenceAsTilde('"$HOME/.ssh')).toBe("~/.ssh");
    for (const v of NOT_A_HOME) expect([v, homeReferenceAsTilde(v)]).toEqual([v, undefined]);
  });

  it("meets a deny rule for the home, and is not allowed by a pattern for relative paths", () => {
    for (const pattern of ["/home/alice/.ssh/**", "~/.ssh/**", "$HOME/.ssh/**"]) {
      const denies = ruleOn(pattern);
      for (const v of QUOTED) expect([pattern, v, denies(v)]).toEqual([pattern, v, true]);
      for (const v of NOT_A_HOME) expect([pattern, v, denies(v)]).toEqual([pattern, v, false]);
    }
    for (const pattern of ["*/.ssh/*", "?*/**"]) {
      const allows = ruleOn(pattern, "allow");
      for (const v of QUOTED.filter((q) => !q.includes("\\"))) {
        expect([pattern, v, allows(v)]).toEqual([pattern, v, false]);
      }
      // a directory named `$HOME` or `~` is still a relative path
      expect([pattern, allows("'$HOME'/.ssh/id_rsa")]).toEqual([pattern, true]);
    }
    // a pattern naming every path allows it
    expect(ruleOn("**", "allow")('"$HOME"/.ssh/id_rsa')).toBe(true);
  });

  it("keeps its quotes in a glob, so the glob meets the value written so, as an exact pattern does", () => {
    // before, a glob read `"…"` as quoting: `"$HOME"/projects/**` allowed `$HOME/projects/x` and not the value
    // written as the pattern is, and `"$HOME/projects/**"` only the text `$HOME/projects/**`
    const allows = ruleOn('"$HOME"/projects/**', "allow");
    expect(allows('"$HOME"/projects/x.txt')).toBe(true);
    expect(allows('"$HOME"/projects/a/b.txt')).toBe(true);
    expect(ruleOn('"$HOME"/projects/x.txt', "allow")('"$HOME"/projects/x.txt')).toBe(true);
    expect(ruleOn('"$HOME/projects/**"', "allow")('"$HOME/projects/x.txt"')).toBe(true);
    // not written otherwise, nor where it leaves what it names
    for (const v of [
      "$HOME/projects/x.txt",
      "~/projects/x.txt",
      '"$HOME"/.ssh/id_rsa',
      '"$HOME"/projects/../.ssh/id_rsa',
      '"$HOME"/projects/%2e%2e/.ssh/id_rsa',
      "'$HOME'/projects/x.txt",
    ]) {
      expect([v, allows(v)]).toEqual([v, false]);
    }
    expect(ruleOn('"$HOME/projects/**"', "allow")("$HOME/projects/**")).toBe(false);
    // an ask or deny rule meets it written either way, and every home it may be
    const denies = ruleOn('"$HOME"/.ssh/**');
    for (const v of ['"$HOME"/.ssh/id_rsa', "$HOME/.ssh/id_rsa", "~/.ssh/id_rsa", "/home/a/.ssh/id_rsa"]) {
      expect([v, denies(v)]).toEqual([v, true]);
    }
    expect(denies('"$HOME"/notes')).toBe(false);
  });

  it("is read so by the reference evaluator too", () => {
    const patterns = [
      "/home/alice/.ssh/**",
      "~/.ssh/**",
      "*/.ssh/*",
      "?*/**",
      '"$HOME"/**',
      '"$HOME"/.ssh/*',
      '"$HOME/.ssh/*"',
      "**",
    ];
    const now = new Date(0);
    for (const pattern of patterns) {
      for (const action of ["allow", "ask", "deny"] as const) {
        const policy = buildPolicy([{ id: "r", match: { args: { v: pattern } }, action }], "ask");
        const compiled = compilePolicy(policy);
        for (const v of [...QUOTED, ...NOT_A_HOME]) {
          const request = { tool: "t", arguments: { v } };
          const real = matchPolicy(compiled, request, now).ruleId;
          expect([pattern, action, v, real]).toEqual([pattern, action, v, referenceMatch(policy, request, now)]);
        }
      }
    }
  });
});

describe("a home inside a value, after a word's start", () => {
  // a command or an option: the shell expands the reference (or `~`) where a word starts
  const KEY_INSIDE = [
    "cat $HOME/.ssh/id_rsa",
    "--key=${HOME}/.ssh/id_rsa",
    'scp "%USERPROFILE%\\.ssh\\id_rsa" x:',
    'cat "$HOME"/.ssh/id_rsa',
    'cat "$HOME/.ssh/id_rsa"',
    "ssh -i $env:USERPROFILE\\.ssh\\id_rsa x",
    "cat ~/.ssh/id_rsa",
    "x=~alice/.ssh/id_rsa",
    "a;cat $home/.ssh/id_rsa",
  ];
  // not a home: another variable, a reference inside a word, another user's home
  const NOT_INSIDE = ["cat $HOMEX/.ssh/id_rsa", "cat x$HOME/.ssh/id_rsa", "cat ~bob/.ssh/id_rsa", "cat $HOME/notes"];

  it("meets an ask or deny pattern written with `~` or naming the absolute home", () => {
    for (const pattern of ["*~/.ssh/*", "*/home/alice/.ssh/*", "*C:/Users/alice/.ssh/*", "*/Users/*/.ssh/*"]) {
      const denies = ruleOn(pattern);
      for (const v of KEY_INSIDE) {
        expect([pattern, v, denies(v)]).toEqual([pattern, v, true]);
      }
      // (a pattern for any user's home, `*~/.ssh/*` as `*/home/*/.ssh/*` too, meets `~bob`'s)
      const anyUser = pattern.includes("/*/") || pattern === "*~/.ssh/*";
      for (const v of NOT_INSIDE.filter((n) => !anyUser || !n.includes("~bob"))) {
        expect([pattern, v, denies(v)]).toEqual([pattern, v, false]);
      }
    }
    // root's home for `~` and a reference, not for another user's
    expect(ruleOn("*/root/.ssh/*")("cat $HOME/.ssh/id_rsa")).toBe(true);
    expect(ruleOn("*/root/.ssh/*")("cat ~alice/.ssh/id_rsa")).toBe(false);
  });

  it("is read by no allow rule, which stays as narrow as before", () => {
    for (const pattern of ["*~/.ssh/*", "*/home/alice/.ssh/*", "*/home/*/.ssh/*", "cat /home/~/.ssh/*"]) {
      const allows = ruleOn(pattern, "allow");
      // (a `~` is met as written by a pattern written with it, as before)
      for (const v of KEY_INSIDE.filter((k) => !k.includes("~"))) {
        expect([pattern, v, allows(v)]).toEqual([pattern, v, false]);
      }
    }
    // a value written as the pattern is, as before
    expect(ruleOn("cat ~/.ssh/*", "allow")("cat ~/.ssh/id_rsa")).toBe(true);
  });

  it("is read so by the reference evaluator too", () => {
    const patterns = ["*~/.ssh/*", "*/home/alice/.ssh/*", "*/root/**", "*C:/Users/*/.ssh/*", "*/.ssh/*", "**"];
    const now = new Date(0);
    for (const pattern of patterns) {
      for (const action of ["allow", "ask", "deny"] as const) {
        const policy = buildPolicy([{ id: "r", match: { args: { v: pattern } }, action }], "ask");
        const compiled = compilePolicy(policy);
        for (const v of [...KEY_INSIDE, ...NOT_INSIDE]) {
          const request = { tool: "t", arguments: { v } };
          const real = matchPolicy(compiled, request, now).ruleId;
          expect([pattern, action, v, real]).toEqual([pattern, action, v, referenceMatch(policy, request, now)]);
        }
      }
    }
  });
});
