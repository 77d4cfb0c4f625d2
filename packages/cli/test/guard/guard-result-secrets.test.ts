import { Buffer } from "node:buffer";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { types } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { GuardRefusal, isGuardRefusal, openGuard, type Guard } from "../../src/guard/index.js";
import { envFor, fixtureHome, PASSPHRASE, tempRoot } from "../home-fixture.js";
import { runCli } from "../run.js";

const SECRET = "tok_live_guard_results_4410";
const root = tempRoot("guard-result-secrets");
afterAll(() => root.cleanup());

/** A home whose `bank.pay` gets `BANK_TOKEN` from the vault as its `token` argument, and a guard over it. */
async function guarded(): Promise<{ home: string; acp: Guard }> {
  const { home } = fixtureHome(root.dir);
  writeFileSync(join(home, "policy.yml"), 'version: "1"\ndefault_action: allow\nrules: []\n');
  expect((await runCli(["vault", "set", "BANK_TOKEN"], { env: envFor(home), stdin: `${SECRET}\n` })).code).toBe(0);
  writeFileSync(
    join(home, "config.yml"),
    'version: "1"\ncredentials:\n  - { secret: BANK_TOKEN, server: bank, tool: pay, inject: { argument: token } }\n',
  );
  return { home, acp: await openGuard({ home, passphrase: PASSPHRASE, log: () => undefined }) };
}

interface PayArgs {
  readonly amount: number;
  readonly token?: string;
}

class Receipt {
  readonly #token: string;
  constructor(token: string) {
    this.#token = token;
  }
  header(): string {
    return `Bearer ${this.#token}`;
  }
}

describe("openGuard: a vault value in a result is hidden in every structure, or the result is withheld", () => {
  it("replaces it in a Map and a Buffer the tool returns, which stay a Map and a Buffer", async () => {
    const { acp } = await guarded();
    const pay = acp.guard(
      "pay",
      (args: PayArgs) => ({
        headers: new Map([["authorization", `Bearer ${args.token ?? ""}`]]),
        body: Buffer.from(`{"paid":${args.amount},"token":"${args.token ?? ""}"}`),
        seen: new Set([args.token]),
      }),
      { server: "bank" },
    );
    const result = await pay({ amount: 3 });
    await acp.close();
    expect(result.headers).toBeInstanceOf(Map);
    expect(result.headers.get("authorization")).toBe("Bearer [REDACTED]");
    expect(Buffer.isBuffer(result.body)).toBe(true);
    expect(result.body.toString()).toBe('{"paid":3,"token":"[REDACTED]"}');
    expect([...result.seen]).toEqual(["[REDACTED]"]);
  });

  it("hands over a checked snapshot: what the tool writes into its result after the check does not reach the caller", async () => {
    const { acp } = await guarded();
    let later = (): void => undefined;
    const session: { status: string; lines: string[]; header?: string } = { status: "open", lines: ["ok"] };
    const pay = acp.guard(
      "pay",
      (args: PayArgs) => {
        // a client's session object, returned as it is, that the client writes the token into afterwards
        later = () => {
          session.header = `Bearer ${args.token ?? ""}`;
          session.lines.push(args.token ?? "");
        };
        return session;
      },
      { server: "bank" },
    );
    const result = await pay({ amount: 3 });
    later();
    await acp.close();
    expect(session.header).toBe(`Bearer ${SECRET}`);
    expect(result).toEqual({ status: "open", lines: ["ok"] });
    expect(JSON.stringify(result)).not.toContain(SECRET);
  });

  it("hides a vault value split between the text parts of an MCP-shaped result, each part kept", async () => {
    const { acp } = await guarded();
    const pay = acp.guard(
      "pay",
      (args: PayArgs) => {
        const token = args.token ?? "";
        return {
          content: [
            { type: "text", text: `paid with ${token.slice(0, 8)}` },
            { type: "text", text: `${token.slice(8)}.` },
          ],
          lines: [token.slice(0, 3), token.slice(3)],
        };
      },
      { server: "bank" },
    );
    const result = await pay({ amount: 3 });
    await acp.close();
    expect(result).toEqual({
      content: [
        { type: "text", text: "paid with [REDACTED]" },
        { type: "text", text: "." },
      ],
      lines: ["[REDACTED]", ""],
    });
  });

  it("withholds a class instance it cannot look inside: the call rejects with result_withheld, audited", async () => {
    const { home, acp } = await guarded();
    const pay = acp.guard("pay", (args: PayArgs) => new Receipt(args.token ?? ""), { server: "bank" });
    const error = await pay({ amount: 3 }).catch((e: unknown) => e);
    await acp.close();
    expect(isGuardRefusal(error) && error.stop).toBe("result_withheld");
    expect((error as Error).message).toMatch(/^the call ran, but its result is withheld: it holds a `Receipt`/);
    const audit = readFileSync(join(home, "audit.jsonl"), "utf8");
    expect(audit).toContain('"is_error":true');
    expect(audit).not.toContain(SECRET);
  });

  it("withholds a getter named by the secret without naming it, to the caller or in the audit", async () => {
    const { home, acp } = await guarded();
    const pay = acp.guard(
      "pay",
      (args: PayArgs) => Object.defineProperty({}, args.token ?? "", { get: () => "paid", enumerable: true }),
      { server: "bank" },
    );
    const error = await pay({ amount: 3 }).catch((e: unknown) => e);
    await acp.close();
    expect(isGuardRefusal(error) && error.stop).toBe("result_withheld");
    expect((error as Error).message).toContain("it holds a getter (`[REDACTED]`)");
    expect(readFileSync(join(home, "audit.jsonl"), "utf8")).not.toContain(SECRET);
  });

  it("passes on a plain error as a copy of it, and an error whose cause holds the secret without the cause", async () => {
    const { acp } = await guarded();
    const plain = Object.assign(new Error("bank is closed"), { code: "EBANK", detail: { retry: false } });
    const closed = acp.guard(
      "pay",
      () => {
        throw plain;
      },
      { server: "bank" },
    );
    const copy = await closed({ amount: 1 }).catch((e: unknown) => e);
    expect(copy).not.toBe(plain);
    expect(types.isNativeError(copy)).toBe(true);
    expect(copy).toMatchObject({ name: "Error", message: "bank is closed", code: "EBANK", detail: { retry: false } });
    expect((copy as { detail: unknown }).detail).not.toBe(plain.detail);
    expect((copy as Error).stack).toBe(plain.stack);
    const failing = acp.guard(
      "pay",
      (args: PayArgs) => {
        const error = new TypeError("request failed", { cause: { headers: { authorization: args.token } } });
        throw error;
      },
      { server: "bank" },
    );
    const error = await failing({ amount: 1 }).catch((e: unknown) => e);
    await acp.close();
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).name).toBe("TypeError");
    expect((error as Error).message).toBe("request failed");
    expect((error as Error).cause).toBeUndefined();
    expect(JSON.stringify(error, Object.getOwnPropertyNames(error))).not.toContain(SECRET);
  });
});

describe("openGuard: a vault value does not reach the caller through an error the tool throws", () => {
  it("through a stack written before the message was cleaned", async () => {
    const { acp } = await guarded();
    const log: string[] = [];
    const pay = acp.guard(
      "pay",
      (args: PayArgs) => {
        const error = new Error(`declined for ${args.token ?? ""}`);
        log.push(error.stack ?? ""); // the stack is written (with the message as it is then) once read
        error.message = "declined";
        throw error;
      },
      { server: "bank" },
    );
    const error = await pay({ amount: 1 }).catch((e: unknown) => e);
    await acp.close();
    expect((error as Error).message).toBe("declined");
    expect((error as Error).stack).not.toContain(SECRET);
  });

  it("through a class's getter, method or private field: a plain error of the same name and plain fields", async () => {
    const { acp } = await guarded();
    class HttpError extends Error {
      override readonly name = "HttpError";
      readonly status = 401;
      readonly #authorization: string;
      constructor(authorization: string) {
        super("unauthorised");
        this.#authorization = authorization;
      }
      get request(): { authorization: string } {
        return { authorization: this.#authorization };
      }
      toJSON(): unknown {
        return { message: this.message, authorization: this.#authorization };
      }
    }
    const pay = acp.guard(
      "pay",
      (args: PayArgs) => {
        throw new HttpError(`Bearer ${args.token ?? ""}`);
      },
      { server: "bank" },
    );
    const error = await pay({ amount: 1 }).catch((e: unknown) => e);
    await acp.close();
    expect(error).not.toBeInstanceOf(HttpError);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ name: "HttpError", message: "unauthorised", status: 401 });
    expect((error as { request?: unknown }).request).toBeUndefined();
    expect(JSON.stringify(error)).not.toContain(SECRET);
  });

  it("through the error's name", async () => {
    const { acp } = await guarded();
    const pay = acp.guard(
      "pay",
      (args: PayArgs) => {
        const error = new TypeError("bad header");
        error.name = `TypeError ${args.token ?? ""}`;
        throw error;
      },
      { server: "bank" },
    );
    const error = await pay({ amount: 1 }).catch((e: unknown) => e);
    await acp.close();
    expect((error as Error).name).toBe("TypeError [REDACTED]");
    expect(String(error)).not.toContain(SECRET);
  });

  it("a thrown value with no text is recorded and passed on, and a thrown Proxy is not passed on", async () => {
    const { home, acp } = await guarded();
    const nothing: unknown = Object.create(null); // String() of it throws
    const odd = acp.guard(
      "pay",
      () => {
        throw nothing;
      },
      { server: "bank" },
    );
    const copied = await odd({ amount: 1 }).catch((e: unknown) => e); // it holds no secret: a copy of it
    expect(copied).not.toBe(nothing);
    expect(Object.getPrototypeOf(copied)).toBeNull();
    const proxied = acp.guard(
      "pay",
      () => {
        throw new Proxy(new Error("declined"), {});
      },
      { server: "bank" },
    );
    const second = await proxied({ amount: 1 }).catch((e: unknown) => e);
    await acp.close();
    expect(types.isProxy(second)).toBe(false);
    expect((second as Error).message).toBe("declined");
    const completed = readFileSync(join(home, "audit.jsonl"), "utf8")
      .split("\n")
      .filter((l) => l.includes('"event_type":"tool_call_completed"'));
    expect(completed).toHaveLength(2);
    expect(completed[0]).toContain('"is_error":true');
  });
});

describe("openGuard: what a tool writes into its error after the check does not reach the caller", () => {
  it("gets a copy of the error's kind, message, code and stack, which a later write into the thrown one leaves alone", async () => {
    const { acp } = await guarded();
    type ClientError = TypeError & { code?: string; response: { status: number; token?: string } };
    let thrown: ClientError | undefined;
    let later = (): void => undefined;
    const pay = acp.guard(
      "pay",
      (args: PayArgs) => {
        // a client keeps the error it threw and fills it in later (a retry hook, a log enricher)
        const fields: Omit<ClientError, keyof TypeError> = { code: "E_DECLINED", response: { status: 402 } };
        const error: ClientError = Object.assign(new TypeError("declined"), fields);
        later = () => {
          error.message = `declined for ${args.token ?? ""}`;
          error.code = args.token ?? "";
          error.response.token = args.token ?? "";
          error.stack = `TypeError: ${args.token ?? ""}`;
        };
        thrown = error;
        throw error;
      },
      { server: "bank" },
    );
    const error = await pay({ amount: 1 }).catch((e: unknown) => e);
    await acp.close();
    later(); // after the guard checked what it passed on
    expect(thrown?.message).toContain(SECRET); // the tool did write it, into its own object
    expect(error).not.toBe(thrown);
    expect(error).toBeInstanceOf(TypeError);
    expect(error).toMatchObject({
      name: "TypeError",
      message: "declined",
      code: "E_DECLINED",
      response: { status: 402 },
    });
    const stack = (error as Error).stack ?? "";
    expect(stack.split("\n")[0]).toBe("TypeError: declined");
    expect(stack).toContain("guard-result-secrets.test.ts"); // the frames are where the tool threw
    expect(JSON.stringify(error, Object.getOwnPropertyNames(error))).not.toContain(SECRET);
  });

  it("keeps a nested call's GuardRefusal and an AbortError what they are, as copies", async () => {
    const { acp } = await guarded();
    const refusal = new GuardRefusal({ stop: "denied", message: "denied by a person", server: "ledger", tool: "undo" });
    const abort = new DOMException("stopped", "AbortError");
    const thrown: unknown[] = [refusal, abort];
    const pay = acp.guard(
      "pay",
      () => {
        throw thrown.shift();
      },
      { server: "bank" },
    );
    const denied = await pay({ amount: 1 }).catch((e: unknown) => e);
    const stopped = await pay({ amount: 1 }).catch((e: unknown) => e);
    await acp.close();
    expect(denied).not.toBe(refusal);
    expect(denied).toBeInstanceOf(GuardRefusal);
    expect(isGuardRefusal(denied)).toBe(true);
    expect(denied).toMatchObject({ name: "GuardRefusal", message: "denied by a person", stop: "denied", ran: false });
    expect((denied as GuardRefusal).reasons).toEqual([]);
    expect(stopped).not.toBe(abort);
    expect(stopped).toBeInstanceOf(DOMException);
    expect(stopped).toMatchObject({ name: "AbortError", message: "stopped", code: 20 });
  });
});
