import { describe, expect, it } from "vitest";
import { isTelegramChatUsername, telegramChatIdWarning } from "../../src/consent/index.js";

describe("telegram chat_id: a username can change hands, a numeric id cannot", () => {
  it("an @username is warned about, naming it and the numeric id to use instead", () => {
    expect(isTelegramChatUsername("@acp_approvals")).toBe(true);
    const warning = telegramChatIdWarning("@acp_approvals");
    expect(warning).toContain("`@acp_approvals`, a username");
    expect(warning).toContain("numeric id");
    expect(warning).toContain("getChat?chat_id=@acp_approvals");
  });

  it("a numeric id, as a number or a string, is not", () => {
    for (const id of [42, -1001234567890, "42", "-1001234567890"]) {
      expect(isTelegramChatUsername(id)).toBe(false);
      expect(telegramChatIdWarning(id)).toBeNull();
    }
  });
});
