/**
 * The storage URL as it is printed (`acp serve: state in PostgreSQL …`, every error): no part of a
 * password ever shows. Before, a password holding an unencoded `/` split the URL there and the rest of
 * the password was printed as the path, and a `?password=` parameter was printed as given.
 */
import { describe, expect, it } from "vitest";
import { redactPostgresUrl } from "../src/index.js";

function refusal(url: string): { code: string; message: string } | null {
  try {
    redactPostgresUrl(url);
    return null;
  } catch (err) {
    return err as { code: string; message: string };
  }
}

describe("redactPostgresUrl", () => {
  it("masks the password and secret parameters, keeps the rest", () => {
    expect(redactPostgresUrl("postgres://acp:s3cret@db.internal:5432/acp")).toBe(
      "postgres://acp:***@db.internal:5432/acp",
    );
    expect(redactPostgresUrl("postgres://acp:pa%2Fss%40w@db/acp")).toBe("postgres://acp:***@db/acp");
    expect(redactPostgresUrl("postgresql://db/acp?password=hunter2&sslmode=require&sslpassword=k3y")).toBe(
      "postgresql://db/acp?password=***&sslmode=require&sslpassword=***",
    );
    expect(redactPostgresUrl("postgres://acp@db/acp?application_name=x")).toBe(
      "postgres://acp@db/acp?application_name=x",
    );
  });

  it("refuses a URL a password split, naming none of it and saying what to encode", () => {
    for (const url of [
      "postgres://acp:p@ss/w0rdSECRET@127.0.0.1:5432/acp",
      "postgres://acp:12?x=SECRET@db/acp",
      "postgres://acp@db/acp#SECRET",
      "postgres://acp:pa#ssSECRET@db/acp",
      "postgres://acp:pa ss?SECRET@[::1/acp",
    ]) {
      const err = refusal(url);
      expect(err?.code, url).toBe("postgres_url_invalid");
      expect(err?.message, url).not.toContain("SECRET");
      expect(err?.message, url).toMatch(/percent-encode @ \/ \? # :/);
    }
  });
});
