/**
 * Tool names in other Unicode forms and look-alike letters: `delete_database` in NFD, full width, or with
 * a Cyrillic `е` named a tool that slipped past `deny delete_database`. Ask and deny rules meet the folded
 * name (NFKD, lower case, no accents, UTS #39 skeletons with an ASCII prototype); allow rules stay exact.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  assertPolicy,
  classifyAction,
  compilePolicy,
  createPipeline,
  findShadowedRules,
  foldGlobPattern,
  foldName,
  policySource,
} from "../../src/index.js";
import { CONFUSABLE_ASCII } from "../../src/request/confusables-table.js";

const NOW = new Date("2026-03-02T10:00:00Z");

/** Each ASCII text of the table and the code points read as it (`e` ← `е`, `ҽ`, …). */
const LOOK_ALIKES = new Map<string, string[]>();
for (let i = 0; i < CONFUSABLE_ASCII.length; i += 2) {
  const text = CONFUSABLE_ASCII[i + 1] as string;
  const char = String.fromCodePoint(CONFUSABLE_ASCII[i] as number);
  LOOK_ALIKES.set(text, [...(LOOK_ALIKES.get(text) ?? []), char]);
}

const POLICY = `
version: "1"
default_action: allow
rules:
  - id: no-drop
    match: { tool: delete_database }
    action: deny
  - id: ask-mail
    match: { tool: "send_*" }
    action: ask
  - id: reads
    match: { tool: read_file }
    action: allow
`;

function pipeline(text = POLICY) {
  return createPipeline([policySource(compilePolicy(assertPolicy(text)))]);
}

describe("foldName", () => {
  it("reads NFC, NFD, full-width, accented and other-script look-alike spellings as one name", () => {
    const plain = "delete_database";
    for (const name of [
      "delete_database",
      "DELETE_DATABASE",
      "dеlete_database", // U+0435 CYRILLIC SMALL LETTER IE
      "ԁelete_database", // U+0501 CYRILLIC SMALL LETTER KOMI DE
      "ｄｅｌｅｔｅ＿ｄａｔａｂａｓｅ",
      "dẹlete_database",
      "de\u0301lete_database",
      "dé\u0323lete_database".normalize("NFC"),
      "delete_databaѕe", // U+0455 CYRILLIC SMALL LETTER DZE
      "DΕLETE_DATABASE", // U+0395 GREEK CAPITAL LETTER EPSILON
      "ᴅᴇʟᴇᴛᴇ_ᴅᴀᴛᴀʙᴀꜱᴇ", // Latin small capitals, which read as DELETE_DATABASE
      "ᴅelete_database", // U+1D05 LATIN LETTER SMALL CAPITAL D
    ]) {
      expect([name, foldName(name)]).toEqual([name, foldName(plain)]);
    }
    expect(foldName("delete_database")).toBe("delete_database");
    expect(foldName("commit_1")).toBe("cornrnit_l");
  });

  it("gives one fold for NFC and NFD spellings", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 12 }), (name) => {
        expect(foldName(name.normalize("NFD"))).toBe(foldName(name.normalize("NFC")));
        expect(foldName(name.normalize("NFKC"))).toBe(foldName(name));
      }),
    );
  });

  it("is idempotent, and a look-alike of the table folds as what it looks like", () => {
    const keys = [...LOOK_ALIKES.values()].flat();
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constantFrom(...keys), fc.string({ unit: "grapheme", maxLength: 2 })), { maxLength: 8 }),
        (parts) => {
          const name = parts.join("");
          expect(foldName(foldName(name))).toBe(foldName(name));
        },
      ),
    );
    for (const [text, chars] of LOOK_ALIKES) {
      for (const char of chars) expect([char, foldName(`x${char}y`)]).toEqual([char, `x${foldName(text)}y`]);
    }
  });

  it("reads every low-line look-alike as `_` and every one-stroke dash as `-`, in any normal form", () => {
    const lowLines = [
      ..."\u203f\u2040\u2054\ufe33\ufe34\ufe4d\ufe4e\ufe4f\uff3f", // connector punctuation (Pc)
      ..."\u2017\u02cd\u2581\u23bd\u07fa", // spacing characters drawn along the baseline
      " \u0332",
      " \u0333", // a space carrying a combining (double) low line: what NFKD makes of U+2017
    ];
    for (const line of lowLines) {
      for (const form of ["NFC", "NFD", "NFKC", "NFKD"] as const) {
        const name = `delete${line}file`.normalize(form);
        expect([name, foldName(name)]).toEqual([name, "delete_file"]);
      }
    }
    for (const dash of ["\u2014", "\u2015", "\u2e3a", "\u2e3b", "\ufe58", "\u2010", "\u2013", "\u2212", "\uff0d"]) {
      expect([dash, foldName(`delete${dash}file`)]).toEqual([dash, "delete-file"]);
    }
    // a combining low line on a letter underlines it: dropped as any mark, so underlined text reads as itself
    expect(foldName("d\u0332e\u0332l\u0332e\u0332t\u0332e\u0332")).toBe("delete");
    // wavy dashes are no hyphen
    expect(foldName("a\u301cb\u3030c")).toBe("a\u301cb\u3030c");
  });

  it("folds a glob's literal text and keeps its syntax", () => {
    expect(foldGlobPattern("Delete_*")).toBe("delete_*");
    expect(foldGlobPattern("{send,dеlete}_?")).toBe("{send,delete}_?");
    expect(foldGlobPattern("[m]x\\*m")).toBe("[m]x\\*rn");
    expect(foldGlobPattern("a\u01c3*")).toBe("a\\!*"); // U+01C3 reads as `!`, a literal here
    expect(foldGlobPattern("a\u01c3b")).toBe("a!b"); // an exact name: its fold, compared exactly
  });
});

/** A name that looks like `name`: some letters swapped for look-alikes, some upper case, in NFC or NFD. */
function lookAlike(name: string): fc.Arbitrary<string> {
  return fc
    .tuple(
      fc.array(fc.nat(), { minLength: name.length, maxLength: name.length }),
      fc.constantFrom("NFC", "NFD", "none"),
    )
    .map(([picks, form]) => {
      let out = "";
      [...name].forEach((char, i) => {
        const pick = picks[i] as number;
        const others = LOOK_ALIKES.get(char) ?? [];
        const choices = [char, char.toUpperCase(), ...others];
        out += choices[pick % choices.length] as string;
      });
      return form === "none" ? out : out.normalize(form);
    });
}

describe("ask and deny rules meet the names a person reads as theirs", () => {
  it("refuses every look-alike of a denied tool through the pipeline", async () => {
    const decide = pipeline();
    await fc.assert(
      fc.asyncProperty(lookAlike("delete_database"), async (tool) => {
        const decision = await decide.decide({ tool, arguments: {} }, NOW);
        expect([tool, decision.route, decision.rule]).toEqual([tool, "refuse", "policy:no-drop"]);
      }),
    );
  });

  it("refuses a denied tool written with a low-line look-alike or a long dash (`delete‗file`, `delete—file`)", async () => {
    const decide = pipeline(`
version: "1"
default_action: allow
rules:
  - id: no-delete
    match: { tool: delete_file }
    action: deny
  - id: no-wipe
    match: { tool: "wipe-*" }
    action: deny
`);
    for (const tool of [
      "delete\u2017file",
      "delete\u02cdfile",
      "delete\u203ffile",
      "delete\u2581file",
      "DELETE\u2040FILE",
    ]) {
      const decision = await decide.decide({ tool, arguments: {} }, NOW);
      expect([tool, decision.route, decision.rule]).toEqual([tool, "refuse", "policy:no-delete"]);
    }
    for (const tool of ["wipe\u2014disk", "wipe\u2015disk", "wipe\u2e3adisk"]) {
      const decision = await decide.decide({ tool, arguments: {} }, NOW);
      expect([tool, decision.route, decision.rule]).toEqual([tool, "refuse", "policy:no-wipe"]);
    }
  });

  it("refuses the denied tool written in small capitals (`ᴅᴇʟᴇᴛᴇ_ᴅᴀᴛᴀʙᴀꜱᴇ`), and asks about one inside a Latin name", async () => {
    const decide = pipeline();
    const capitals = await decide.decide({ tool: "ᴅᴇʟᴇᴛᴇ_ᴅᴀᴛᴀʙᴀꜱᴇ", arguments: {} }, NOW);
    expect([capitals.route, capitals.rule]).toEqual(["refuse", "policy:no-drop"]);
    const inside = await decide.decide({ tool: "reᴀd_notes", arguments: {} }, NOW);
    expect([inside.route, inside.reasons.map((r) => r.code)]).toEqual(["ask", ["look_alike_name", "default_action"]]);
  });

  it("asks about look-alikes of a glob's names, and an allow rule stays exact", async () => {
    const decide = pipeline();
    await fc.assert(
      fc.asyncProperty(lookAlike("send_mail"), async (tool) => {
        expect((await decide.decide({ tool, arguments: {} }, NOW)).route).toBe("ask");
      }),
    );
    expect((await decide.decide({ tool: "read_file", arguments: {} }, NOW)).rule).toBe("policy:reads");
    // a look-alike of an allowed name is another name: never the allow rule; and a person is asked
    const disguised = await decide.decide({ tool: "rеad_file", arguments: {} }, NOW);
    expect(disguised.verdicts.find((v) => v.source === "policy")?.rule).toBe("default");
    expect([disguised.route, disguised.reasons[0]?.code]).toEqual(["ask", "look_alike_name"]);
    expect(disguised.reasons[0]?.message).toBe(
      "the tool name `rеad_file` holds U+0435, which reads as `e`: it looks like `read_file` but is another name, so a person is asked",
    );
  });

  it("asks a person about a Latin name with a look-alike letter, not about a name of another script", async () => {
    const decide = pipeline();
    for (const [tool, server] of [
      ["ｒead_notes", undefined],
      ["get_notes", "filеs"],
      ["gеt_погода", undefined],
      ["read\u2017notes", undefined], // a low-line look-alike reads as `_`
      ["read\u203fnotes", undefined],
      ["get\u2014notes", undefined], // a long dash reads as `-`
      ["get_notes", "files\uff0eprod"], // a full-width full stop reads as `.`
    ] as const) {
      const decision = await decide.decide({ tool, ...(server ? { server } : {}), arguments: {} }, NOW);
      expect([tool, decision.route, decision.reasons.map((r) => r.code)]).toEqual([
        tool,
        "ask",
        ["look_alike_name", "default_action"],
      ]);
    }
    for (const tool of [
      "получить_погоду",
      "получить\u2017погоду", // a look-alike of `_` between words of another script is no disguise
      "get_notes",
      "天気_取得",
      "envoyer_à",
      "cafe\u0301_menu",
      // letters of Latin alphabets no decomposition takes apart: real names in Danish, Polish, French, Turkish
      "søk_filer",
      "æble_liste",
      "łódź_pogoda",
      "œuvre_lire",
      "ılık_hava",
      "đọc_tệp",
    ]) {
      expect([tool, (await decide.decide({ tool, arguments: {} }, NOW)).route]).toEqual([tool, "accept"]);
    }
    // a deny rule for the name it passes for still refuses it
    expect((await decide.decide({ tool: "dеlete_database", arguments: {} }, NOW)).route).toBe("refuse");
  });

  it("folds the pattern too: a rule written with letters the fold changes meets their look-alikes", async () => {
    const decide = pipeline(`
version: "1"
default_action: allow
rules:
  - id: no-commit
    match: { tool: "git_commit*" }
    action: deny
  - id: no-rm
    match: { tool: rm }
    action: deny
`);
    for (const tool of ["git_cоmmit", "GIT_COMMIT_ALL", "git_cornrnit", "ｒｍ", "rrn", "RM"]) {
      expect([tool, (await decide.decide({ tool, arguments: {} }, NOW)).route]).toEqual([tool, "refuse"]);
    }
    expect((await decide.decide({ tool: "git_status", arguments: {} }, NOW)).route).toBe("accept");
  });

  it("widens an ask or deny rule's server the same way, and an allow rule's stays exact", async () => {
    const decide = pipeline(`
version: "1"
default_action: allow
rules:
  - id: prod-asks
    match: { server: prod-db }
    action: ask
  - id: trusted
    match: { server: "sandbox-*", tool: drop_table }
    action: allow
  - id: no-drop
    match: { tool: drop_table }
    action: deny
`);
    for (const server of ["prod-db", "PROD-DB", "prоd-db", "ｐｒｏｄ-db"]) {
      expect([server, (await decide.decide({ tool: "t", server, arguments: {} }, NOW)).rule]).toEqual([
        server,
        "policy:prod-asks",
      ]);
    }
    const lookAlike = await decide.decide({ tool: "drop_table", server: "sandbоx-1", arguments: {} }, NOW);
    expect(lookAlike.rule).toBe("policy:no-drop");
  });

  it("applies the policy's classify entry a look-alike meets when stricter, never a looser one", async () => {
    const decide = pipeline(`
version: "1"
default_action: ask
rules:
  - id: no-money
    match: { category: financial }
    action: deny
  - id: reads
    match: { category: read }
    action: allow
classify:
  - { tool: wire_money, category: financial }
  - { tool: "fetch_*", category: read, risk_level: low }
  - { tool: "*", server: payments, category: financial }
`);
    for (const server of ["Payments", "pаyments"]) {
      const paid = await decide.decide({ tool: "get_balance", server, arguments: {} }, NOW);
      expect([server, paid.route, paid.category]).toEqual([server, "refuse", "financial"]);
    }
    const wire = await decide.decide({ tool: "wіre_money", arguments: {} }, NOW); // U+0456
    expect([wire.route, wire.rule, wire.category]).toEqual(["refuse", "policy:no-money", "financial"]);
    const upper = await decide.decide({ tool: "WIRE_MONEY", arguments: {} }, NOW);
    expect([upper.route, upper.category]).toEqual(["refuse", "financial"]);
    const fetch = await decide.decide({ tool: "fеtch_page", arguments: {} }, NOW); // U+0435
    expect([fetch.route, fetch.category]).toEqual(["ask", "write"]);
    expect((await decide.decide({ tool: "fetch_page", arguments: {} }, NOW)).route).toBe("accept");
  });

  it("classifies a look-alike of a built-in name as the name it looks like", () => {
    const request = { tool: "trаnsfer_funds", arguments: {} }; // U+0430 CYRILLIC SMALL LETTER A
    expect(classifyAction(request, [])).toMatchObject({ category: "financial", risk_level: "critical" });
    expect(classifyAction({ tool: "mеssage_all", arguments: {} }, [])).toMatchObject({ category: "communication" });
  });

  it("does not call a later deny shadowed when an earlier glob misses its folded names", () => {
    // `x[I]` misses `xl`, which folds as `xI` does (`dat?` covers `datm`: shadowed-rules.test.ts)
    const rules = assertPolicy(`
version: "1"
rules:
  - { id: a, match: { tool: "x[I]" }, action: deny }
  - { id: b, match: { tool: xI }, action: deny }
  - { id: c, match: { tool: "send_*" }, action: deny }
  - { id: d, match: { tool: send_x }, action: deny }
`).rules;
    expect(findShadowedRules(rules).map((i) => i.path[1])).toEqual([3]);
  });
});
