/**
 * Runs one content check on attacker-sized input in a worker thread (bundled by `claim-content-linear.test.ts`),
 * so a check that backtracks for minutes can be stopped: posts what the check answered.
 */
import { parentPort, workerData } from "node:worker_threads";
import { scanFaq } from "../src/content/content-scan.js";
import { parseFaq, type FaqBody } from "../src/content/faq.js";
import { faqsPage } from "../src/http/pages.js";

const { check, answer } = workerData as { check: "parse" | "scan" | "page"; answer: string };
/** 50 questions (§28), each answer `answer` plus its own number (so no two are the same). */
const input = {
  title: "Help",
  questions: Array.from({ length: 50 }, (_, i) => ({ question: `Question ${i}?`, answer: `${answer} ${i}` })),
};
const parsed = parseFaq(input);
const body: FaqBody | undefined = parsed.ok ? parsed.value : undefined;
let result: string;
if (check === "parse") result = parsed.ok ? "accepted" : parsed.issue.code;
else if (body === undefined) result = "refused at input";
else if (check === "scan") result = scanFaq(body)?.kind ?? "clean";
else {
  // A published page: 5 FAQs (§28) of 50 such answers each.
  const rows = Array.from({ length: 5 }, (_, i) => ({
    id: `faq_${i}`,
    sandbox_id: "sbx_x",
    status: "published" as const,
    body,
    updated_at: 0,
  }));
  result = `${faqsPage("Help", rows, "").length} characters`;
}
parentPort?.postMessage(result);
