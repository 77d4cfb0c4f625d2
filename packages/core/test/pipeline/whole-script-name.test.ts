/**
 * A tool or server name written wholly in another script whose every letter passes for a Latin one
 * (`ехес_сору`, all Cyrillic, reads as `exec_copy`; `ΑΡΡΙΕ` in Greek capitals reads as `apple`) was decided
 * by the rules as any other name: the mixed look-alike (`rеad_file`) was asked about, this one was not, and
 * a person shown it in a prompt read the Latin name. The pipeline now asks about it too
 * (`look_alike_name`), and leaves names of another script with a letter no Latin one looks like alone.
 */
import { describe, expect, it } from "vitest";
import { assertPolicy, compilePolicy, createPipeline, policySource } from "../../src/index.js";

const NOW = new Date("2026-03-02T10:00:00Z");

const POLICY = `
version: "1"
default_action: allow
rules:
  - id: no-pop
    match: { tool: pop_queue }
    action: deny
`;

function pipeline() {
  return createPipeline([policySource(compilePolicy(assertPolicy(POLICY)))]);
}

describe("a name wholly of another script's look-alikes", () => {
  it("asks a person about such a tool or server name, naming the Latin name it reads as", async () => {
    const decide = pipeline();
    for (const [tool, server, what, name, script, reads] of [
      ["ехес_сору", undefined, "tool", "ехес_сору", "Cyrillic", "exec_copy"],
      ["ΑΡΡΙΕ", undefined, "tool", "ΑΡΡΙΕ", "Greek", "apple"],
      ["ѕсоре2", undefined, "tool", "ѕсоре2", "Cyrillic", "scope2"],
      // Cyrillic and Armenian (`ո` reads as `n`) together
      ["ѕеոԁ", undefined, "tool", "ѕеոԁ", "several scripts", "send"],
      ["list_files", "аррӏе.рау", "server", "аррӏе.рау", "Cyrillic", "appie.pay"],
    ] as const) {
      const decision = await decide.decide({ tool, ...(server ? { server } : {}), arguments: {} }, NOW);
      expect([tool, decision.route, decision.reasons.map((r) => r.code)]).toEqual([
        tool,
        "ask",
        ["look_alike_name", "default_action"],
      ]);
      expect(decision.reasons[0]?.message).toBe(
        `the ${what} name \`${name}\` is written wholly in ${script} letters that each pass for a Latin one: ` +
          `it looks like \`${reads}\` but is another name, so a person is asked`,
      );
    }
  });

  it("asks about a name drawn wholly in Latin look-alikes (full-width, mathematical, small capitals)", async () => {
    const decide = pipeline();
    for (const [tool, char, reads] of [
      ["ｒｅａｄ_ｆｉｌｅ", "U+FF52", "r"],
      ["𝐫𝐞𝐚𝐝_𝐟𝐢𝐥𝐞", "U+1D42B", "r"],
      ["ᴅᴇʟᴇᴛᴇ_ᴅᴀᴛᴀʙᴀꜱᴇ", "U+1D05", "d"],
    ] as const) {
      const decision = await decide.decide({ tool, arguments: {} }, NOW);
      expect([tool, decision.route, decision.reasons[0]?.message]).toEqual([
        tool,
        "ask",
        `the tool name \`${tool}\` is written wholly in characters drawn as Latin ones (${char} reads as ` +
          `\`${reads}\`): it looks like \`${tool === "ᴅᴇʟᴇᴛᴇ_ᴅᴀᴛᴀʙᴀꜱᴇ" ? "delete_database" : "read_file"}\` but is ` +
          `another name, so a person is asked`,
      ]);
    }
  });

  it("keeps a deny rule for the name it reads as a refusal", async () => {
    const decision = await pipeline().decide({ tool: "рор_ԛսеսе", arguments: {} }, NOW);
    expect([decision.route, decision.rule]).toEqual(["refuse", "policy:no-pop"]);
  });

  it("leaves names of another script with a letter no Latin one looks like, and one-letter words, alone", async () => {
    const decide = pipeline();
    for (const tool of [
      "получить_погоду",
      "получить_сор", // `сор` alone reads as `cop`, but the name is Russian (`л`, `ч`, `и` read as no Latin letter)
      "ѕсоре_погода",
      "Ελληνικά",
      "天気_取得",
      "а_1", // one letter
      "été",
      "søk_filer",
      "１２３", // full-width digits: no name of two letters (`l23`)
    ]) {
      const decision = await decide.decide({ tool, arguments: {} }, NOW);
      expect([tool, decision.route, decision.reasons.map((r) => r.code)]).toEqual([tool, "accept", ["default_action"]]);
    }
  });
});
