import { Lexer } from "yaml";

/**
 * Where the YAML text holds more than `limit` values (scalars, keys included, and collections), counted
 * from the lexer's stream before any syntax tree is built, or `undefined` within it. The yaml library's
 * tree and document take some 400 bytes a value: `x: [1,1,…]` with five million items (10 MB, under
 * the size limit) ran the process out of memory (over 4 GB) before any other check could refuse it.
 * The lexer keeps nothing, so counting costs time linear in the text and no memory to speak of.
 */
export function findTooManyNodes(text: string, limit: number): number | undefined {
  let count = 0;
  let offset = 0;
  for (const lexeme of new Lexer().lex(text)) {
    const c = lexeme[0];
    // `\x1f` comes before a plain or block scalar; a quoted scalar is its own lexeme; `{`, `[` and `-` open
    // a mapping, a list, a list item
    if (c === "\x1f" || c === '"' || c === "'" || lexeme === "{" || lexeme === "[" || lexeme === "-") {
      count++;
      if (count > limit) return offset;
    }
    // control lexemes (`\x02`, `\x1f`, …) are not in the source; the others are, as written
    if (c !== undefined && c >= " ") offset += lexeme.length;
    else if (c === "\n" || c === "\t" || c === "\r") offset += lexeme.length;
  }
  return undefined;
}
