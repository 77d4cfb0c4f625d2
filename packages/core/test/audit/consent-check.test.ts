import { describe, expect, it } from "vitest";
import {
  actionHash,
  approvedActionOf,
  checkEventConsent,
  createRedactor,
  omittedString,
  redactAuditInput,
  type AuditEventV02,
  type AuditMetadata,
} from "../../src/index.js";
import { OTHER_KEY, sampleRequest, sampleResponse, TEST_KEY } from "../proof-fixtures.js";

const SECRET = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";

/** An event as checkEventConsent reads it (its type and metadata; the chain is another check's). */
function eventWith(metadata: Record<string, unknown>, type = "consent_approved"): AuditEventV02 {
  return { event_type: type, metadata: JSON.parse(JSON.stringify(metadata)) as AuditMetadata } as AuditEventV02;
}

describe("checkEventConsent: a consent response checked from its event with the public key alone", () => {
  const request = sampleRequest();
  const response = sampleResponse(request);
  const action = approvedActionOf(request, null);

  it("verifies against the recorded action, and refuses an edited action, decision or key", () => {
    const key = TEST_KEY.publicKeyHex;
    expect(checkEventConsent(eventWith({ consent_response: response, consent_action: action }), key)).toEqual({
      status: "valid",
    });
    const other = { ...action, parameters: { ...action.parameters, to: "eve@example.com" } };
    const edited = checkEventConsent(eventWith({ consent_response: response, consent_action: other }), key);
    expect(edited.status).toBe("invalid");
    const denied = { ...response, decision: "denied" };
    expect(checkEventConsent(eventWith({ consent_response: denied, consent_action: action }), key).status).toBe(
      "invalid",
    );
    const wrongKey = checkEventConsent(
      eventWith({ consent_response: response, consent_action: action }),
      OTHER_KEY.publicKeyHex,
    );
    expect(wrongKey.status).toBe("invalid");
  });

  it("counts as not checkable a response without its action (withheld, or an older event); other events have none", () => {
    const key = TEST_KEY.publicKeyHex;
    const withheld = eventWith({
      consent_response: response,
      consent_action: null,
      consent_action_withheld: "redacted",
    });
    expect(checkEventConsent(withheld, key)).toEqual({ status: "unchecked", why: "withheld" });
    expect(checkEventConsent(eventWith({ consent_response: response }), key)).toEqual({
      status: "unchecked",
      why: "missing",
    });
    expect(checkEventConsent(eventWith({ consent_action: action }, "policy_evaluated"), key)).toEqual({
      status: "none",
    });
  });
});

describe("checkEventConsent: a value cut to fit the line", () => {
  const key = TEST_KEY.publicKeyHex;
  const long = "x".repeat(4096);
  const request = { ...sampleRequest() };
  const withLong = {
    ...request,
    action: { ...request.action, parameters: { ...request.action.parameters, body: long } },
  };
  const response = sampleResponse(withLong);
  const action = approvedActionOf(withLong, null);
  const cut = { ...action, parameters: { ...action.parameters, body: omittedString(long) } };

  it("is not checkable (`omitted`): the signed action cannot be rebuilt", () => {
    expect(checkEventConsent(eventWith({ consent_response: response, consent_action: cut }), key)).toEqual({
      status: "unchecked",
      why: "omitted",
    });
    // metadata replaced whole (`audit_omitted`): the response it held cannot be checked either
    const whole = eventWith({ audit_omitted: { characters: 2_000_000, sha256: `sha256:${"0".repeat(64)}` } });
    expect(checkEventConsent(whole, key)).toEqual({ status: "unchecked", why: "omitted" });
    expect(checkEventConsent({ ...whole, event_type: "policy_evaluated" }, key)).toEqual({ status: "none" });
  });

  it("still fails a response signed by another key: a cut hides only the action", () => {
    const otherKey = checkEventConsent(
      eventWith({ consent_response: response, consent_action: cut }),
      OTHER_KEY.publicKeyHex,
    );
    expect(otherKey).toMatchObject({ status: "invalid", message: expect.stringMatching(/^wrong_key/) as unknown });
  });

  it("with the action's hash recorded beside the cut action, checks the signature against it", () => {
    const hash = actionHash(action);
    const event = eventWith({ consent_response: response, consent_action: cut, consent_action_hash: hash });
    expect(checkEventConsent(event, key)).toEqual({ status: "unchecked", why: "omitted", signatureChecked: true });
    // a decision edited in the log, or another hash put beside it: the signature does not verify
    const denied = { ...response, decision: "denied" };
    const edited = eventWith({ consent_response: denied, consent_action: cut, consent_action_hash: hash });
    expect(checkEventConsent(edited, key)).toMatchObject({ status: "invalid" });
    const other = actionHash({ ...action, tool: "delete_all" });
    const swapped = eventWith({ consent_response: response, consent_action: cut, consent_action_hash: other });
    expect(checkEventConsent(swapped, key)).toMatchObject({ status: "invalid" });
    // beside a whole action, the hash must be the action's own
    const whole = eventWith({ consent_response: response, consent_action: action, consent_action_hash: other });
    expect(checkEventConsent(whole, key)).toMatchObject({ status: "invalid" });
    const matching = eventWith({ consent_response: response, consent_action: action, consent_action_hash: hash });
    expect(checkEventConsent(matching, key)).toEqual({ status: "valid" });
  });

  it("checks an argument that only quotes the placeholder's text, as any other", () => {
    const quoting = {
      ...request,
      action: {
        ...request.action,
        parameters: { ...request.action.parameters, body: "[omitted from the audit: 3 characters]" },
      },
    };
    const signed = sampleResponse(quoting);
    const event = eventWith({ consent_response: signed, consent_action: approvedActionOf(quoting, null) });
    expect(checkEventConsent(event, key)).toEqual({ status: "valid" });
  });
});

describe("redactAuditInput withholds a consent action redaction would change", () => {
  const redact = createRedactor();
  const request = sampleRequest();
  const response = sampleResponse(request);

  it("keeps an action redaction leaves alone (same object)", () => {
    const metadata = { consent_response: response, consent_action: approvedActionOf(request, null) };
    const input = { event_type: "consent_approved", metadata } as unknown as Parameters<typeof redactAuditInput>[0];
    expect(redactAuditInput(input, redact)).toBe(input);
  });

  it("writes null and why, and nothing of a secret in the action or in the response's modifications", () => {
    const secretAction = { server: "mail", tool: "send_email", parameters: { body: `token ${SECRET}` } };
    const modified = sampleResponse(request, {
      decision: "approved_with_modifications",
      modifications: { body: SECRET },
    });
    for (const metadata of [
      { consent_response: response, consent_action: secretAction, consent_action_hash: actionHash(secretAction) },
      {
        consent_response: modified,
        consent_action: approvedActionOf(request, { body: SECRET }),
        consent_action_hash: actionHash(approvedActionOf(request, { body: SECRET })),
      },
    ]) {
      const input = { event_type: "consent_approved", metadata } as unknown as Parameters<typeof redactAuditInput>[0];
      const out = redactAuditInput(input, redact).metadata as Record<string, unknown>;
      expect(out["consent_action"]).toBeNull();
      expect(out).not.toHaveProperty("consent_action_hash");
      expect(out["consent_action_withheld"]).toBe("redacted");
      expect(JSON.stringify(out)).not.toContain(SECRET);
    }
  });
});
