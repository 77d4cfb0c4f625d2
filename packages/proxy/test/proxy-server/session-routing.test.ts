import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  routeUpstreamMessage,
  type InflightCall,
  type RoutableSession,
} from "../../src/proxy-server/session-routing.js";
import { ResourceSubscriptions } from "../../src/proxy-server/subscriptions.js";

function call(server: string): InflightCall {
  return {
    server,
    notify: () => undefined,
    request: () => Promise.resolve({}),
    settled: () => Promise.resolve(),
  };
}

function session(id: string, ...servers: string[]): RoutableSession {
  return { id, calls: new Set(servers.map(call)) };
}

describe("routeUpstreamMessage", () => {
  it("picks the newest call of the one session with a call in flight to that server", () => {
    const a = session("a", "x", "y", "x");
    const b = session("b", "y");
    const route = routeUpstreamMessage([a, b], "x");
    expect(route.kind).toBe("call");
    if (route.kind === "call") {
      expect(route.session.id).toBe("a");
      expect(route.call).toBe([...a.calls].at(-1));
    }
  });

  it("is ambiguous when calls of two sessions are in flight to that server", () => {
    const route = routeUpstreamMessage([session("a", "x"), session("b", "x")], "x");
    expect(route).toMatchObject({ kind: "ambiguous" });
  });

  it("with no call in flight: the only session, else idle", () => {
    expect(routeUpstreamMessage([session("a", "y")], "x")).toMatchObject({ kind: "only", session: { id: "a" } });
    expect(routeUpstreamMessage([session("a"), session("b")], "x")).toMatchObject({ kind: "idle" });
    expect(routeUpstreamMessage([], "x")).toEqual({ kind: "idle", sessions: [] });
  });

  it("never names a session without a call to that server while another session has one", () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.constantFrom("x", "y"), { maxLength: 3 }), { maxLength: 5 }), (plan) => {
        const sessions = plan.map((servers, i) => session(`s${i}`, ...servers));
        const route = routeUpstreamMessage(sessions, "x");
        const busy = sessions.filter((s) => [...s.calls].some((c) => c.server === "x"));
        if (busy.length === 1) expect(route).toMatchObject({ kind: "call", session: busy[0] });
        else if (busy.length > 1) expect(route.kind).toBe("ambiguous");
        else expect(["only", "idle"]).toContain(route.kind);
      }),
    );
  });
});

describe("ResourceSubscriptions", () => {
  it("subscribes upstream on the first session and unsubscribes on the last", () => {
    const subs = new ResourceSubscriptions();
    expect(subs.add("x", "u", "a")).toBe(true);
    expect(subs.add("x", "u", "b")).toBe(false);
    expect(subs.add("y", "u", "a")).toBe(true);
    expect(subs.subscribers("x", "u")).toEqual(["a", "b"]);
    expect(subs.remove("x", "u", "a")).toBe(false);
    expect(subs.remove("x", "u", "a")).toBe(false);
    expect(subs.remove("x", "u", "b")).toBe(true);
    expect(subs.subscribers("x", "u")).toEqual([]);
  });

  it("a closed session gives back the resources nobody else subscribes to", () => {
    const subs = new ResourceSubscriptions();
    subs.add("x", "u", "a");
    subs.add("x", "v", "a");
    subs.add("x", "v", "b");
    expect(subs.forget("a")).toEqual([{ server: "x", uri: "u" }]);
    expect(subs.subscribers("x", "v")).toEqual(["b"]);
  });
});
