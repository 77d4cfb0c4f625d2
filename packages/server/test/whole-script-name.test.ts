/**
 * `POST /v1/decide` takes the tool and server names its caller gives. A name written wholly in another
 * script whose every letter passes for a Latin one (`ехес_сору`, all Cyrillic) was decided by the rules
 * as written, so `default_action: allow` let it through unasked; the pipeline now asks about it
 * (`look_alike_name`) as it does about a Latin name with a look-alike inside.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { at, readJson, startTestServer, tokenFor, type TestServer } from "./harness.js";

const TOKEN = "test-token-0123456789";
const POLICY = `
version: "1"
default_action: allow
rules: []
`;
let s: TestServer;

beforeAll(async () => {
  s = await startTestServer({ token: TOKEN, policy: POLICY });
});
afterAll(async () => {
  await s.close();
});

async function decide(body: unknown): Promise<unknown> {
  const res = await fetch(`${s.url}/v1/decide`, {
    method: "POST",
    headers: { authorization: `Bearer ${tokenFor("/v1/decide", TOKEN)}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return readJson(res);
}

describe("POST /v1/decide with a name wholly of another script's look-alikes", () => {
  it("asks about the tool name and says the Latin name it reads as; a Russian name stays the rules'", async () => {
    const body = await decide({ tool: "ехес_сору", arguments: {} });
    expect(at(body, "route")).toBe("ask");
    const reasons = at(body, "decision", "reasons") as { code: string; message: string }[];
    expect(reasons[0]).toMatchObject({
      code: "look_alike_name",
      message:
        "the tool name `ехес_сору` is written wholly in Cyrillic letters that each pass for a Latin one: " +
        "it looks like `exec_copy` but is another name, so a person is asked",
    });
    expect(at(await decide({ tool: "получить_погоду", arguments: {} }), "route")).toBe("accept");
    expect(at(await decide({ tool: "exec_copy", arguments: {} }), "route")).toBe("accept");
  });
});
