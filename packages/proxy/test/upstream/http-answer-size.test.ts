import type { RequestListener } from "node:http";
import { describe, expect, it } from "vitest";
import { createAbortIsolatingFetch, MAX_MESSAGE_BYTES } from "../../src/upstream/abort-isolating-fetch.js";
import { useLoopbackServer } from "./loopback-server.js";

const OVER = "x".repeat(MAX_MESSAGE_BYTES + 1);
const MIB = "y".repeat(1024 * 1024);

/** A loopback URL upstream answering with bodies around the size of one message. */
const answer: RequestListener = (req, res) => {
  if (req.url === "/big-json") {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(`"${OVER}"`);
  } else if (req.url === "/big-event") {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write("data: small\n\n");
    res.end(`data: ${OVER}\n\n`);
  } else if (req.url === "/lying-json") {
    // a JSON answer whose type names the event stream in a parameter, its blank lines cut as if into events:
    // the SDK reads it whole as JSON (its media type is application/json)
    res.writeHead(200, { "content-type": "application/json; profile=text/event-stream" });
    res.write("[");
    for (let i = 0; i < 12; i++) res.write(`${i === 0 ? "" : ","}\n\n"${MIB}"`);
    res.end("]");
  } else if (req.url === "/many-events") {
    // 12 events of 1 MiB each, CRLF and LF line ends: more than one message in all, each under it
    res.writeHead(200, { "content-type": "text/event-stream" });
    for (let i = 0; i < 12; i++) res.write(i % 2 === 0 ? `data: ${MIB}\r\n\r\n` : `data: ${MIB}\n\n`);
    res.end();
  } else {
    res.writeHead(500, { "content-type": "text/plain" });
    res.end(OVER);
  }
};

// Over stdio one message of an upstream may take at most 10 MiB; over HTTP the SDK reads a JSON answer, an
// error's text, or an event whole, with no bound: one server's endless answer could fill the proxy's memory
// and stop it for every other upstream and session. The URL upstreams' fetch holds each to the same size.
describe("a URL upstream's answer larger than one message", () => {
  const server = useLoopbackServer(answer);
  const limit = `the server's answer is over the ${MAX_MESSAGE_BYTES}-byte limit of one message`;

  it("fails as a JSON answer, with or without the connection's signal", async () => {
    const isolating = createAbortIsolatingFetch();
    await expect(
      (await isolating(`${server.url()}/big-json`, { signal: new AbortController().signal })).text(),
    ).rejects.toThrow(limit);
    await expect((await isolating(`${server.url()}/big-json`)).text()).rejects.toThrow(limit);
  });

  it("fails as one event of a stream; a stream of many smaller events is read whole", async () => {
    const isolating = createAbortIsolatingFetch();
    const signal = new AbortController().signal;
    await expect((await isolating(`${server.url()}/big-event`, { signal })).text()).rejects.toThrow(limit);
    const many = await (await isolating(`${server.url()}/many-events`, { signal })).text();
    expect(many.length).toBeGreaterThan(MAX_MESSAGE_BYTES);
  });

  it("is read by its media type: a JSON answer whose type names the event stream in a parameter is bound whole", async () => {
    const response = await createAbortIsolatingFetch()(`${server.url()}/lying-json`, {
      signal: new AbortController().signal,
    });
    await expect(response.text()).rejects.toThrow(limit);
  });

  it("fails as an error's text; the error keeps its status and URL", async () => {
    const response = await createAbortIsolatingFetch()(`${server.url()}/big-error`, {
      signal: new AbortController().signal,
    });
    expect(response.status).toBe(500);
    expect(response.url).toBe(`${server.url()}/big-error`);
    await expect(response.text()).rejects.toThrow(limit);
  });
});
