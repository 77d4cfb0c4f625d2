import { describe, expect, it } from "vitest";
import { parseProxyConfig, refusesPlainHttp, servesPlainHttpBeyondLoopback } from "../../src/index.js";

describe("the one plain-HTTP rule of acp serve, acp proxy --http and acp claim serve", () => {
  it("never refuses loopback, which does not leave the machine", () => {
    for (const bind of ["127.0.0.1", "127.3.4.5", "localhost", "::1", "[::1]"]) {
      expect(refusesPlainHttp({ bind, tls: false, insecurePlainHttp: false }), bind).toBe(false);
      expect(servesPlainHttpBeyondLoopback({ bind, tls: false }), bind).toBe(false);
    }
  });

  it("refuses beyond loopback over plain HTTP unless TLS protects it or the risk is accepted", () => {
    for (const bind of ["0.0.0.0", "::", "10.0.0.5", "192.168.1.2", "example.internal"]) {
      expect(refusesPlainHttp({ bind, tls: false, insecurePlainHttp: false }), bind).toBe(true);
      expect(refusesPlainHttp({ bind, tls: true, insecurePlainHttp: false }), bind).toBe(false);
      // accepted, it starts, and it says it serves plain HTTP beyond loopback
      expect(refusesPlainHttp({ bind, tls: false, insecurePlainHttp: true }), bind).toBe(false);
      expect(servesPlainHttpBeyondLoopback({ bind, tls: false }), bind).toBe(true);
      expect(servesPlainHttpBeyondLoopback({ bind, tls: true }), bind).toBe(false);
    }
  });
});

describe("proxy.insecure_plain_http", () => {
  it("takes true or false, as --insecure-plain-http; anything else is proxy_config_invalid", () => {
    const on = parseProxyConfig({ bind: "0.0.0.0", insecure_plain_http: true });
    expect(on.ok && on.value.insecurePlainHttp).toBe(true);
    const off = parseProxyConfig({ insecure_plain_http: false });
    expect(off.ok && off.value.insecurePlainHttp).toBeUndefined();
    for (const value of ["yes", "true", 1]) {
      const bad = parseProxyConfig({ insecure_plain_http: value });
      expect(bad.ok).toBe(false);
      if (bad.ok) continue;
      expect(bad.issues).toEqual([
        {
          code: "proxy_config_invalid",
          path: ["proxy", "insecure_plain_http"],
          message: "`proxy.insecure_plain_http` must be true or false",
        },
      ]);
    }
  });
});
