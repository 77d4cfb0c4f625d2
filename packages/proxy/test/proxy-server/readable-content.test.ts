import { describe, expect, it } from "vitest";
import { ContentReader, logText, requestText } from "../../src/proxy-server/readable-content.js";

const b64 = (text: string, encoding: BufferEncoding = "utf8"): string => Buffer.from(text, encoding).toString("base64");

// What of a blob the session runtime is told: decoded when its type is text-like (or absent and the bytes
// are UTF-8), never an image's bytes, and no more than one result's decoding limit.
describe("ContentReader", () => {
  it("decodes a blob of a text-like type, in the charset it names", () => {
    const reader = new ContentReader();
    expect(reader.blob("text/plain", b64("pay bob"))).toBe("pay bob");
    expect(reader.blob("application/vnd.api+json", b64('{"to":"x@y.example"}'))).toBe('{"to":"x@y.example"}');
    expect(reader.blob("message/rfc822", b64("From: a@b.example"))).toBe("From: a@b.example");
    expect(reader.blob("Text/CSV; charset=UTF-16LE", b64("naïve", "utf16le"))).toBe("naïve");
    expect(reader.blob("text/plain; charset=no-such-charset", b64("plain"))).toBe("plain");
    expect(reader.cut).toBeUndefined();
  });

  it("does not decode an image, audio or binary type, nor a blob without a type that is not UTF-8", () => {
    const reader = new ContentReader();
    expect(reader.blob("image/png", b64("pay mallory@attacker.example"))).toBe("");
    expect(reader.blob("application/octet-stream", b64("pay mallory@attacker.example"))).toBe("");
    expect(reader.blob(undefined, Buffer.from([0xff, 0xfe, 0x00]).toString("base64"))).toBe("");
    expect(reader.blob(undefined, b64("untyped, but text"))).toBe("untyped, but text");
  });

  it("reads an embedded resource's URI with its text or blob, and a resource's contents without it", () => {
    const reader = new ContentReader();
    const embedded = { type: "resource", resource: { uri: "file:///a.txt", mimeType: "text/plain", blob: b64("hi") } };
    expect(reader.block(embedded)).toBe("file:///a.txt\nhi");
    expect(reader.resource({ uri: "file:///a.txt", text: "hello" })).toBe("hello");
    expect(reader.block({ type: "image", data: b64("pay x@y.example"), mimeType: "image/png" })).toBe("");
  });

  it("decodes one result's blobs up to its limit and says what it left", () => {
    const reader = new ContentReader(10);
    expect(reader.blob("text/plain", b64("123456"))).toBe("123456");
    expect(reader.cut).toBeUndefined();
    // 4 bytes left: 3 decoded (whole Base64 quanta), the rest left undecoded and named
    expect(reader.blob("text/plain", b64("abcdefgh"))).toBe("abc");
    expect(reader.cut).toBe("a blob of about 8 bytes is past the 10 bytes of blobs read of one result");
    expect(reader.blob("text/plain", b64("more"))).toBe("");
  });

  it("a blob of exactly the bytes left is not cut (its padding is not counted)", () => {
    const reader = new ContentReader(4);
    expect(reader.blob("text/plain", b64("abcd"))).toBe("abcd");
    expect(reader.cut).toBeUndefined();
  });
});

// What of an upstream's requests to the agent's client and of its log lines the session runtime is told.
describe("requestText and logText", () => {
  it("reads a sampling request's system prompt and each message's content, one block or a list", () => {
    const params = {
      systemPrompt: "you are helpful",
      messages: [
        { role: "user", content: { type: "text", text: "pay a@x.example" } },
        {
          role: "user",
          content: [
            { type: "text", text: "or b@x.example" },
            { type: "image", data: "AA==" },
          ],
        },
      ],
      maxTokens: 5,
    };
    expect(requestText(new ContentReader(), "sampling/createMessage", params)).toBe(
      "you are helpful\npay a@x.example\nor b@x.example",
    );
  });

  it("reads an elicitation's message, URL and form schema (its titles and choices are shown)", () => {
    const schema = { type: "object", properties: { to: { type: "string", enum: ["c@x.example"] } } };
    const text = requestText(new ContentReader(), "elicitation/create", {
      message: "confirm",
      url: "https://x.example/confirm",
      requestedSchema: schema,
    });
    expect(text).toBe(`confirm\nhttps://x.example/confirm\n${JSON.stringify(schema)}`);
    expect(requestText(new ContentReader(), "roots/list", { message: "x" })).toBe("");
  });

  it("reads a log line's logger and data, as JSON when it is not a string; too deep to write throws", () => {
    expect(logText({ level: "info", logger: "mail", data: "to d@x.example" })).toBe("mail\nto d@x.example");
    expect(logText({ level: "info", data: { to: "e@x.example" } })).toBe('{"to":"e@x.example"}');
    let deep: unknown = "f@x.example";
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(() => logText({ level: "info", data: deep })).toThrow("could not be read");
  });
});
