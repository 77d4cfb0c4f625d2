import { afterEach, describe, expect, it } from "vitest";
import { ClaimClient, ClaimClientError, type ClaimClientOptions } from "../src/index.js";
import { sendJson, startStandIn, STAND_IN_SANDBOX_ID, type StandInProvider } from "./stand-in-provider.js";

// The provider is whatever URL the user typed: every answer here comes from a hostile or broken stand-in on
// 127.0.0.1, and the client must refuse it with a ClaimClientError that names the limit, before doing any work.

let p: StandInProvider | undefined;
afterEach(async () => {
  await p?.close();
  p = undefined;
});

const MiB = 1024 * 1024;
const SANDBOX = {
  id: STAND_IN_SANDBOX_ID,
  token: "rr_sbx_token",
  public_handle: "handle1",
  expires_at: "2026-03-03T12:00:00.000Z",
  api: "",
};

async function standIn(): Promise<StandInProvider> {
  p = await startStandIn();
  return p;
}

/** A client of the stand-in; the solver runs on this thread and gives up early, so a test never spins. */
const clientOf = (q: StandInProvider, options: ClaimClientOptions = {}): ClaimClient =>
  new ClaimClient(q.url, { solve: { workers: 0, maxCandidates: 2 ** 16 }, dpop: false, ...options });

/** The error a promise rejects with. */
async function failure(promise: Promise<unknown>): Promise<ClaimClientError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ClaimClientError);
  return err as ClaimClientError;
}

/** Every control, C1 and bidirectional character a terminal could act on. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const RAW_CONTROL = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

describe("ClaimClient against a hostile provider: response size", () => {
  it("refuses an answer over the default 1 MiB cap, naming the cap", async () => {
    const q = await standIn();
    q.route("GET /.well-known/agent-access", (_req, res) =>
      sendJson(res, 200, { content_types: ["faq"], padding: "x".repeat(MiB) }),
    );
    const err = await failure(clientOf(q).discover());
    expect(err.code).toBe("claim_response_too_large");
    expect(err.message).toContain("1048576 bytes");
  });

  it("cuts off an endless answer at the configured cap instead of buffering it", async () => {
    const q = await standIn();
    let chunks = 0;
    let closed!: () => void;
    const hungUp = new Promise<void>((resolve) => (closed = resolve));
    q.route("GET /.well-known/agent-access", (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      const chunk = `"${"x".repeat(64 * 1024)}"`;
      const pump = (): void => {
        // A stand-in safety stop far beyond the cap (1024 chunks, 64 MiB): the client must hang up long before.
        while (chunks < 1024 && !res.destroyed) {
          chunks++;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        res.end();
      };
      res.on("close", closed);
      pump();
    });
    const err = await failure(clientOf(q, { maxResponseBytes: 4096 }).discover());
    expect(err.code).toBe("claim_response_too_large");
    expect(err.message).toContain("4096 bytes");
    await hungUp;
    expect(chunks).toBeLessThan(1024);
  });

  it("refuses an announced Content-Length over the cap before reading the body", async () => {
    const q = await standIn();
    q.route("GET /.well-known/agent-access", (_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": String(10 * MiB) });
      res.write("{");
    });
    const err = await failure(clientOf(q).discover());
    expect(err.code).toBe("claim_response_too_large");
  });
});

describe("ClaimClient against a hostile provider: proof-of-work difficulty", () => {
  const challenge = (difficulty: unknown, extra: Record<string, unknown> = {}) => ({
    challenge: "stand-in-1",
    difficulty,
    algorithm: "sha256_leading_zeros",
    ...extra,
  });

  it("refuses 60 bits before any work, naming the asked difficulty and the client maximum (28)", async () => {
    const q = await standIn();
    q.route("GET /v1/sandboxes/challenge", (_req, res) => sendJson(res, 200, challenge(60)));
    const err = await failure(clientOf(q).createSandbox());
    expect(err.code).toBe("claim_difficulty_refused");
    expect(err.message).toContain("60");
    expect(err.message).toContain("28");
    expect(q.seen).not.toContain("POST /v1/sandboxes");
  });

  it("refuses a difficulty the spec does not allow (not a whole number of SHA-256 leading zero bits)", async () => {
    const q = await standIn();
    for (const d of [257, 1e9, 20.5, -1, "20", null]) {
      q.route("GET /v1/sandboxes/challenge", (_req, res) => sendJson(res, 200, challenge(d)));
      const err = await failure(clientOf(q, { maxDifficulty: 256 }).createSandbox());
      expect(err.code).toBe("claim_difficulty_refused");
      expect(err.message).toMatch(/0[–-]256/);
    }
    expect(q.seen).not.toContain("POST /v1/sandboxes");
  });

  it("holds to a lower configured maximum", async () => {
    const q = await standIn();
    q.route("GET /v1/sandboxes/challenge", (_req, res) => sendJson(res, 200, challenge(10)));
    const err = await failure(clientOf(q, { maxDifficulty: 8 }).createSandbox());
    expect(err.code).toBe("claim_difficulty_refused");
    expect(err.message).toContain("at most 8");
  });

  it("refuses a challenge for another algorithm, or with no usable challenge, instead of solving the wrong thing", async () => {
    const q = await standIn();
    for (const answer of [
      challenge(4, { algorithm: "scrypt" }),
      challenge(4, { challenge: "" }),
      challenge(4, { challenge: 42 }),
      challenge(4, { challenge: "c\u001b[2J" }),
      challenge(4, { challenge: "x".repeat(2000) }),
    ]) {
      q.route("GET /v1/sandboxes/challenge", (_req, res) => sendJson(res, 200, answer));
      const err = await failure(clientOf(q).createSandbox());
      expect(err.code).toBe("claim_response_invalid");
      expect(err.message).not.toMatch(RAW_CONTROL);
    }
    expect(q.seen).not.toContain("POST /v1/sandboxes");
  });

  it("gives up a solve that outlasts the configured solve timeout", async () => {
    const q = await standIn();
    q.route("GET /v1/sandboxes/challenge", (_req, res) => sendJson(res, 200, challenge(26)));
    const client = new ClaimClient(q.url, {
      solve: { workers: 1, maxCandidates: 1 },
      solveTimeoutMs: 1,
      dpop: false,
    });
    const err = await failure(client.createSandbox());
    expect(err.code).toBe("claim_timeout");
    expect(err.message).toContain("1 ms");
    expect(q.seen).not.toContain("POST /v1/sandboxes");
  });

  it("stops after three solves when every answer is claim_challenge_stale", async () => {
    const q = await standIn();
    let n = 0;
    q.route("GET /v1/sandboxes/challenge", (_req, res) => sendJson(res, 200, challenge(4, { challenge: `c${++n}` })));
    q.route("POST /v1/sandboxes", (_req, res) =>
      sendJson(res, 409, { error: { code: "claim_challenge_stale", message: "stale" } }),
    );
    const err = await failure(clientOf(q).createSandbox());
    expect(err.code).toBe("claim_challenge_stale");
    expect(q.seen.filter((s) => s === "POST /v1/sandboxes")).toHaveLength(3);
  });

  it("does not solve again a challenge the provider just called stale", async () => {
    const q = await standIn();
    q.route("POST /v1/sandboxes", (_req, res) =>
      sendJson(res, 409, { error: { code: "claim_challenge_stale", message: "stale" } }),
    );
    const err = await failure(clientOf(q).createSandbox());
    expect(err.code).toBe("claim_response_invalid");
    expect(err.message).toContain("same challenge");
    expect(q.seen.filter((s) => s === "POST /v1/sandboxes")).toHaveLength(1);
  });
});

describe("ClaimClient against a hostile provider: slow answers", () => {
  it("gives up a request that trickles past the configured deadline (an idle timeout never fires)", async () => {
    const q = await standIn();
    const timers: NodeJS.Timeout[] = [];
    q.route("GET /.well-known/agent-access", (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write("[");
      const t = setInterval(() => res.write(" "), 5);
      timers.push(t);
      res.on("close", () => clearInterval(t));
    });
    const err = await failure(clientOf(q, { requestTimeoutMs: 50 }).discover());
    timers.forEach(clearInterval);
    expect(err.code).toBe("claim_timeout");
    expect(err.message).toContain("50 ms");
  }, 10_000);
});

describe("ClaimClient against a hostile provider: redirects and malformed answers", () => {
  it("follows no redirect, to another host or to plain http, and names where it pointed (escaped)", async () => {
    const q = await standIn();
    for (const [key, status] of [
      ["GET /.well-known/agent-access", 302],
      ["POST /v1/faqs", 307],
    ] as const) {
      q.route(key, (_req, res) => {
        // A C1 CSI (U+009B): Node lets a Latin-1 byte into a header, and a terminal may act on it.
        res.writeHead(status, { location: "http://evil.example/\u009b2J" });
        res.end();
      });
    }
    const discover = await failure(clientOf(q).discover());
    expect(discover.code).toBe("claim_redirect_refused");
    expect(discover.message).toContain("evil.example");
    expect(discover.message).not.toMatch(RAW_CONTROL);
    const faq = await failure(clientOf(q).createFaq({ ...SANDBOX, api: q.url }, { title: "t" }));
    expect(faq.code).toBe("claim_redirect_refused");
  });

  it("refuses an answer that is not a JSON object, without echoing it", async () => {
    const q = await standIn();
    for (const body of ["\u001b[2J\u001b[Hnot json", "null", "[1]", '"text"']) {
      q.route("GET /.well-known/agent-access", (_req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(body);
      });
      const err = await failure(clientOf(q).discover());
      expect(err.code).toBe("claim_response_invalid");
      expect(err.message).not.toMatch(RAW_CONTROL);
    }
  });

  it("refuses an error answer that is not JSON, naming the status", async () => {
    const q = await standIn();
    q.route("POST /v1/faqs", (_req, res) => {
      res.writeHead(502, { "content-type": "text/html" });
      res.end("<html>\u001b]0;owned\u0007bad gateway</html>");
    });
    const err = await failure(clientOf(q).createFaq({ ...SANDBOX, api: q.url }, { title: "t" }));
    expect(err.status).toBe(502);
    expect(err.message).toContain("http 502");
    expect(err.message).not.toMatch(RAW_CONTROL);
  });

  it("refuses a sandbox answer without its fields rather than returning undefined ones", async () => {
    const q = await standIn();
    q.route("POST /v1/sandboxes", (_req, res) => sendJson(res, 201, { id: STAND_IN_SANDBOX_ID }));
    const err = await failure(clientOf(q).createSandbox());
    expect(err.code).toBe("claim_response_invalid");
    expect(err.message).toContain("agent_token");
  });

  it("refuses links that are not http(s) URLs, and a downgrade from an https provider", async () => {
    const q = await standIn();
    q.route(`POST /v1/sandboxes/${STAND_IN_SANDBOX_ID}/claim`, (_req, res) =>
      sendJson(res, 200, { claim_code: "ACP-1", claim_url: "javascript:alert(1)", expires_at: "2026-03-01" }),
    );
    const err = await failure(clientOf(q).claimLink({ ...SANDBOX, api: q.url }));
    expect(err.code).toBe("claim_response_invalid");
    expect(err.message).toContain("claim_url");
    q.route(`POST /v1/sandboxes/${STAND_IN_SANDBOX_ID}/claim`, (_req, res) =>
      sendJson(res, 200, { claim_code: "ACP-1", claim_url: "http://admin.example/claim", expires_at: "2026-03-01" }),
    );
    // The "https" provider is the stand-in reached through a transport that keeps it on 127.0.0.1.
    const https = new ClaimClient("https://api.example", {
      dpop: false,
      transport: async (method, url, headers, body) => {
        const res = await fetch(`${q.url}${new URL(url).pathname}`, {
          method,
          headers,
          ...(body === undefined ? {} : { body }),
        });
        return { status: res.status, headers: {}, body: await res.text() };
      },
    });
    const downgrade = await failure(https.claimLink({ ...SANDBOX, api: "https://api.example" }));
    expect(downgrade.code).toBe("claim_response_invalid");
    expect(downgrade.message).toContain("https");
  });

  it("refuses a claim code or id with control characters instead of handing them on", async () => {
    const q = await standIn();
    q.route(`POST /v1/sandboxes/${STAND_IN_SANDBOX_ID}/claim`, (_req, res) =>
      sendJson(res, 200, {
        claim_code: "ACP-\u001b[2J\u009b31m",
        claim_url: "http://admin.localhost/claim",
        expires_at: "2026-03-01T13:00:00.000Z",
      }),
    );
    const err = await failure(clientOf(q).claimLink({ ...SANDBOX, api: q.url }));
    expect(err.code).toBe("claim_response_invalid");
    expect(err.message).toContain("claim_code");
    expect(err.message).not.toMatch(RAW_CONTROL);
  });
});

describe("ClaimClient against a hostile provider: error bodies", () => {
  it("escapes control characters in the provider's message and keeps only a snake_case code", async () => {
    const q = await standIn();
    q.route("POST /v1/faqs", (_req, res) =>
      sendJson(res, 403, {
        error: { code: "x\u001b[31m", message: `\u001b[2J\u001b[Hyou are pwned\u0007\u202e${"y".repeat(5000)}` },
      }),
    );
    const err = await failure(clientOf(q).createFaq({ ...SANDBOX, api: q.url }, { title: "t" }));
    expect(err.status).toBe(403);
    expect(err.code).toBe("unknown");
    expect(err.message).not.toMatch(RAW_CONTROL);
    expect(err.message).toContain("\\u001b[2J");
    expect(err.message.length).toBeLessThan(400);
  });

  it("a well-behaved provider still works end to end", async () => {
    const q = await standIn();
    const r = await clientOf(q).publishFaq({ title: "Widget" });
    expect(r.published_url).toBe("http://handle2.pub.localhost/widget");
    expect(r.sandbox.id).toBe(STAND_IN_SANDBOX_ID);
    const link = await clientOf(q).claimLink(r.sandbox);
    expect(link.claim_code).toBe("ACP-ABCD-EFGH-JKLM-NPQR");
  });
});

describe("ClaimClient: plain http only to this machine", () => {
  it("refuses a plain-http provider elsewhere (claim_insecure_provider) before any request, unless allowed", () => {
    let sent = 0;
    const transport = (): never => {
      sent++;
      throw new Error("no request may be made");
    };
    for (const url of [
      "http://provider.invalid",
      "http://PROVIDER.invalid:8080/",
      "http://10.0.0.5",
      "http://[fd00::1]",
    ]) {
      const err = ((): unknown => {
        try {
          new ClaimClient(url, { transport });
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(err).toBeInstanceOf(ClaimClientError);
      expect((err as ClaimClientError).code).toBe("claim_insecure_provider");
      expect((err as ClaimClientError).message).toMatch(/^refusing plain http to `[^`]+`, which is not this machine/);
    }
    const loopback = [
      "http://localhost:8080",
      "http://api.localhost:8080",
      "http://127.0.0.1",
      "http://127.9.8.7:1",
      "http://[::1]:8080",
    ];
    for (const url of [...loopback, "https://provider.invalid"])
      expect(() => new ClaimClient(url, { transport })).not.toThrow();
    expect(() => new ClaimClient("http://provider.invalid", { transport, allowInsecureHttp: true })).not.toThrow();
    expect(sent).toBe(0);
  });
});
