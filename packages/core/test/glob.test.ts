import { describe, expect, it } from "vitest";
import { compileGlob } from "../src/glob/index.js";

function matcher(pattern: string): (s: string) => boolean {
  const r = compileGlob(pattern);
  if (!r.ok) throw new Error(r.issues[0]?.message);
  return r.value;
}

describe("compileGlob", () => {
  it("matches prefixes, suffixes and everything as the policy examples expect", () => {
    expect(matcher("send_*")("send_email")).toBe(true);
    expect(matcher("send_*")("resend_email")).toBe(false);
    expect(matcher("*_email")("send_email")).toBe(true);
    expect(matcher("*")("anything")).toBe(true);
  });
  it("matches a plain pattern exactly", () => {
    expect(matcher("read_file")("read_file")).toBe(true);
    expect(matcher("read_file")("read_files")).toBe(false);
  });
  it("does not let a single star cross a slash", () => {
    expect(matcher("/tmp/*")("/tmp/a")).toBe(true);
    expect(matcher("/tmp/*")("/tmp/a/b")).toBe(false);
    expect(matcher("/tmp/**")("/tmp/a/b")).toBe(true);
  });
  it("lets `**` cross `/` only as a whole path segment, as evaluation.md says", () => {
    // the docs once advised `**evil.com**` for URLs: it is `*evil.com*`, so a deny rule written so missed
    expect(matcher("**evil.com**")("https://evil.com/x")).toBe(false);
    expect(matcher("**evil.com**")("evil.com")).toBe(true);
    expect(matcher("https://evil.com/**")("https://evil.com/x")).toBe(true);
    expect(matcher("https://evil.com/**")("https://evil.com")).toBe(true);
    // a glob compares text: other spellings of the same place do not match
    expect(matcher("/srv/**")("/srv/../etc/passwd")).toBe(false);
    expect(matcher("https://evil.com/**")("https://EVIL.com/x")).toBe(false);
  });
  it("reads `[!…]` as the complement of the class, as a shell does", () => {
    // picomatch without `posix` read `[!0-9]` as a class of `!` and the digits: a deny rule for names not
    // starting with a digit matched exactly the names that do
    expect(matcher("[!0-9]*")("release")).toBe(true);
    expect(matcher("[!0-9]*")("1.0")).toBe(false);
    expect(matcher("[!0-9]*")("!x")).toBe(true);
    expect(matcher("*.[!o]")("main.c")).toBe(true);
    expect(matcher("*.[!o]")("main.o")).toBe(false);
    expect(matcher("[^0-9]*")("1.0")).toBe(false);
  });
  it("refuses unbalanced brackets, empty and over-long patterns", () => {
    expect(compileGlob("[abc").ok).toBe(false);
    expect(compileGlob("").ok).toBe(false);
    expect(compileGlob("a".repeat(5000)).ok).toBe(false);
  });
});
