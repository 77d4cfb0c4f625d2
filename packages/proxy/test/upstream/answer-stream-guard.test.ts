import { describe, expect, it } from "vitest";
import { AnswerStreamGuard, UNANSWERED } from "../../src/upstream/answer-stream-guard.js";

const ID = "acp-relay-7";
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const answer = JSON.stringify({ jsonrpc: "2.0", id: ID, result: { content: [] } });
const note = JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "é" } });

/** Feeds `text` to a fresh guard in chunks of `size` bytes; what it passed on, its failure, what it said. */
function feed(text: string, size: number): { out: string; failure?: string; said: string[]; guard: AnswerStreamGuard } {
  const said: string[] = [];
  const guard = new AnswerStreamGuard(ID, (s) => said.push(s));
  const bytes = encoder.encode(text);
  let out = "";
  for (let at = 0; at < bytes.length; at += size) {
    const step = guard.push(bytes.slice(at, at + size));
    out += decoder.decode(step.out, { stream: true });
    if (step.failure !== undefined) return { out, failure: step.failure, said, guard };
  }
  return { out, said, guard };
}

describe("the answer stream of one relayed call, read as the SDK reads it", () => {
  it("passes whole events as they came, however the bytes are cut (CRLF, CR, LF, split characters)", () => {
    const text = `: keep-alive\r\nretry: 10\r\n\r\nevent: message\rdata: ${note}\r\rid: 1\ndata: ${answer}\n\n`;
    for (let size = 1; size <= 9; size++) {
      const { out, failure, guard } = feed(text, size);
      expect(failure).toBeUndefined();
      expect(out).toBe(text);
      expect(guard.answered).toBe(true);
      expect(guard.resumable).toBe(true);
    }
  });

  it("fails at the first event that is not JSON-RPC, naming it, and passes nothing from it on", () => {
    for (let size = 1; size <= 7; size++) {
      const { out, failure } = feed(`data: ${note}\n\ndata: {"jsonrpc":"2.0"}\n\ndata: ${answer}\n\n`, size);
      expect(out).toBe(`data: ${note}\n\n`);
      expect(failure).toBe('its answer stream carried an event that is not a JSON-RPC message (`{"jsonrpc":"2.0"}`)');
    }
  });

  it("passes events of other types and without data as they came (the SDK skips them)", () => {
    const text = "event: ping\ndata: {not json\n\nid: 4\ndata:\n\n";
    const { out, failure, guard } = feed(text, 5);
    expect(failure).toBeUndefined();
    expect(out).toBe(text);
    expect(guard.end()).toEqual({ out: new Uint8Array(0) }); // resumable from id 4: left to the SDK
  });

  it("takes a batch message by message, its event id on the last", () => {
    const { out } = feed(`id: 9\ndata: [${note},${answer}]\n\n`, 64);
    expect(out).toBe(`event: message\ndata: ${note}\n\nevent: message\nid: 9\ndata: ${answer}\n\n`);
  });

  it("drops an answer to another id, gives an id-less error its call's id, and says an unanswered end", () => {
    const other = JSON.stringify({ jsonrpc: "2.0", id: "acp-relay-8", result: {} });
    const dropped = feed(`data: ${other}\n\n`, 64);
    expect(dropped.out).toBe("");
    expect(dropped.said).toEqual(['dropped an answer to "acp-relay-8" on the answer stream of `acp-relay-7`']);
    expect(dropped.guard.end().failure).toBe(UNANSWERED);
    const idless = feed(`data: {"jsonrpc":"2.0","error":{"code":-32700,"message":"parse error"}}\n\n`, 64);
    expect(JSON.parse(idless.out.replace(/^event: message\ndata: /, ""))).toEqual({
      jsonrpc: "2.0",
      id: ID,
      error: { code: -32700, message: "parse error" },
    });
    expect(idless.guard.end().failure).toBeUndefined();
  });

  it("on an HTTP+SSE connection's stream, ends at an event that is no JSON-RPC unless it names a call in flight", () => {
    const named: string[] = [];
    const guard = new AnswerStreamGuard(
      undefined,
      () => undefined,
      (data) => named.push(data) > 0 && data.includes(ID),
    );
    const broken = `{"jsonrpc":"2.0","id":"${ID}","result":{`;
    const first = guard.push(encoder.encode(`data: ${note}\n\ndata: ${broken}\n\ndata: ${note}\n\n`));
    // the broken answer names its call: that call fails (as `named` says), the event is dropped, the stream goes on
    expect(first.failure).toBeUndefined();
    expect(decoder.decode(first.out)).toBe(`data: ${note}\n\ndata: ${note}\n\n`);
    const second = guard.push(encoder.encode(`data: {not json\n\ndata: ${note}\n\n`));
    expect(named).toEqual([broken, "{not json"]);
    expect(decoder.decode(second.out)).toBe("");
    expect(second.failure).toBe(
      "the server's event stream (HTTP+SSE), which carries every answer, broke: it carried an event that is not a JSON-RPC message (`{not json`)",
    );
  });
});
