import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { FastifyRequest } from "fastify";
import { checkBearer } from "@acp/proxy";
import { callerAgent, callerApprover, createBearerCheck } from "../src/http/api-auth.js";
import { HttpError } from "../src/http/error-body.js";

function request(authorization: string | undefined): FastifyRequest {
  return {
    headers: { host: "127.0.0.1:8787", ...(authorization !== undefined ? { authorization } : {}) },
  } as FastifyRequest;
}

/** What the check answers: ok, or the status of the error it throws. */
function verdict(check: (r: FastifyRequest) => void, authorization: string | undefined): "ok" | number {
  try {
    check(request(authorization));
    return "ok";
  } catch (err) {
    if (err instanceof HttpError) return err.status;
    throw err;
  }
}

const tokenChar = fc.constantFrom(..."abcXYZ019-._~+/=".split(""));
const token = fc.string({ unit: tokenChar, minLength: 1, maxLength: 40 });

describe("the API's bearer check", () => {
  it("gives checkBearer's verdict for any header and token (property)", () => {
    const header = (t: string) =>
      fc.oneof(
        fc.constant(`Bearer ${t}`),
        // the token with one character changed, cut or lengthened
        fc.nat(t.length - 1).map((i) => `Bearer ${t.slice(0, i)}${t[i] === "a" ? "b" : "a"}${t.slice(i + 1)}`),
        fc.constant(`Bearer ${t.slice(0, -1)}`),
        fc.constant(`Bearer ${t}a`),
        token.map((other) => `Bearer ${other}`),
        fc.string({ unit: "binary", maxLength: 30 }),
        fc.constantFrom(undefined, "", "Bearer ", "bearer x", "Basic dXNlcjpwYXNz", `Bearer  ${t}`, `bearer ${t}`),
      );
    fc.assert(
      fc.property(
        token.chain((t) => fc.tuple(fc.constant(t), header(t))),
        ([t, h]) => {
          const check = createBearerCheck({ token: t, loopbackOnly: true });
          const expected = checkBearer(h, t);
          expect(verdict(check, h)).toBe(expected.ok ? "ok" : expected.status);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("accepts the right token and refuses digests that differ only in their last digits", () => {
    const check = createBearerCheck({ token: "bench-token", loopbackOnly: true });
    expect(verdict(check, "Bearer bench-token")).toBe("ok");
    expect(verdict(check, "Bearer bench-tokeN")).toBe(401);
    expect(verdict(check, "Bearer bench-toke")).toBe(401);
    // a configured token that is not token68 takes checkBearer's path alone
    const odd = createBearerCheck({ token: "with space", loopbackOnly: true });
    expect(verdict(odd, "Bearer with space")).toBe(checkBearer("Bearer with space", "with space").ok ? "ok" : 400);
  });

  it("answers consent with the approvers' token alone: checkBearer's verdict on it, 403 for the agents' (property)", () => {
    fc.assert(
      fc.property(token, token, fc.option(fc.string({ unit: "binary", maxLength: 30 })), (agent, approver, noise) => {
        fc.pre(agent !== approver);
        const check = createBearerCheck({ token: agent, approverToken: approver, loopbackOnly: true }, "answer");
        for (const header of [`Bearer ${approver}`, `Bearer ${agent}`, noise ?? undefined]) {
          const asApprover = checkBearer(header, approver);
          const expected = asApprover.ok ? "ok" : checkBearer(header, agent).ok ? 403 : asApprover.status;
          expect(verdict(check, header)).toBe(expected);
        }
        // without an approvers' token nothing answers over the API, the agents' token included
        const none = createBearerCheck({ token: agent, loopbackOnly: true }, "answer");
        expect(verdict(none, `Bearer ${agent}`)).toBe(401);
      }),
      { numRuns: 1000 },
    );
  });

  it("reads with either token and asks for decisions with the agents' alone", () => {
    const options = { token: "agents-token-x", approverToken: "approvers-token-y", loopbackOnly: true };
    const read = createBearerCheck(options, "read");
    const ask = createBearerCheck(options, "agent");
    const complete = createBearerCheck(options, "complete");
    expect(verdict(read, "Bearer agents-token-x")).toBe("ok");
    expect(verdict(read, "Bearer approvers-token-y")).toBe("ok");
    expect(verdict(read, "Bearer someone-else")).toBe(401);
    expect(verdict(read, undefined)).toBe(401);
    expect(verdict(ask, "Bearer agents-token-x")).toBe("ok");
    expect(verdict(ask, "Bearer approvers-token-y")).toBe(401);
    expect(verdict(complete, "Bearer agents-token-x")).toBe("ok");
    expect(verdict(complete, "Bearer approvers-token-y")).toBe(401);
    // no agents' token: reads and decisions are open to loopback callers, completing needs a token
    const open = { approverToken: "approvers-token-y", loopbackOnly: true };
    expect(verdict(createBearerCheck(open, "read"), undefined)).toBe("ok");
    expect(verdict(createBearerCheck(open, "agent"), undefined)).toBe("ok");
    expect(verdict(createBearerCheck(open, "complete"), "Bearer approvers-token-y")).toBe(401);
    expect(verdict(createBearerCheck(open, "answer"), "Bearer approvers-token-y")).toBe("ok");
  });

  it("takes a named token with the scheme name in any case, as the unnamed ones (before: 401 for `bearer`)", () => {
    const options = {
      agentTokens: new Map([["ci_bot", "ci-bot-token-0123456789"]]),
      approverTokens: new Map([["pager", "pager-token-0123456789"]]),
      loopbackOnly: true,
    };
    for (const scheme of ["Bearer", "bearer", "BEARER"]) {
      const asked = request(`${scheme} ci-bot-token-0123456789`);
      createBearerCheck(options, "agent")(asked);
      expect({ scheme, agent: callerAgent(asked) }).toEqual({ scheme, agent: "ci_bot" });
      const answered = request(`${scheme} pager-token-0123456789`);
      createBearerCheck(options, "answer")(answered);
      expect({ scheme, approver: callerApprover(answered) }).toEqual({ scheme, approver: "pager" });
      expect(verdict(createBearerCheck(options, "read"), `${scheme} pager-token-0123456789`)).toBe("ok");
    }
    expect(verdict(createBearerCheck(options, "agent"), "bearer not-a-token-0123456789")).toBe(401);
  });
});
