import { Buffer } from "node:buffer";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { types } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { isGuardRefusal, openGuard, type Guard } from "../../src/guard/index.js";
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

  it("passes on a plain error as it is, and an error whose cause holds the secret as a plain error without it", async () => {
    const { acp } = await guarded();
    const plain = new Error("bank is closed");
    const closed = acp.guard(
      "pay",
      () => {
        throw plain;
      },
      { server: "bank" },
    );
    expect(await closed({ amount: 1 }).catch((e: unknown) => e)).toBe(plain);
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
    expect(await odd({ amount: 1 }).catch((e: unknown) => e)).toBe(nothing); // it holds no secret
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
