import type { FastifyReply, FastifyRequest } from "fastify";
import { FAQ_LIMITS, parseFaq, parseQuestion, type FaqBody } from "../content/faq.js";
import type { FaqRow, SandboxRow } from "../store/claim-store.js";
import { contentGate, NO_GATE, storeAdmitted } from "./content-gate.js";
import type { ClaimRuntime } from "./context.js";

/** A route handler. */
export type Handler = (req: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;
/** Route parameters. */
export type Params = Record<string, string>;

/** A 4xx answer with a stable code (input problems, not existence: those get the one failure answer). */
export function invalid(reply: FastifyReply, code: string, message: string, status = 400): FastifyReply {
  return reply.code(status).header("cache-control", "no-store").send({ error: { code, message } });
}

/** 409 `claim_content_changed`: the FAQ changed under this request, which wrote nothing (send it again). */
function changed(reply: FastifyReply): FastifyReply {
  return invalid(
    reply,
    "claim_content_changed",
    "the faq changed while this request ran (an edit or a publication); nothing was written: send it again",
    409,
  );
}

/** Registers one API route (API origin only). */
export type Api = (method: "GET" | "POST" | "PATCH" | "DELETE", url: string, action: string, h: Handler) => void;
/** Wraps a handler so it runs only for a live sandbox's agent token. */
export type Authed = (
  h: (s: SandboxRow, req: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> | FastifyReply,
) => Handler;

/** The FAQ representation an agent sees. */
export function faqJson(f: FaqRow): Record<string, unknown> {
  return { id: f.id, faq_id: f.id, sandbox_id: f.sandbox_id, status: f.status, ...f.body };
}

/** The FAQ content routes of Part 4 (create, update, questions, delete, publish). */
export function registerFaqRoutes(
  api: Api,
  authed: Authed,
  rt: ClaimRuntime,
  pubUrl: (req: FastifyRequest, handle: string, slug?: string) => string,
): void {
  /**
   * The `:faq` of the path when it has the shape of an FAQ id, else "" (found nowhere). Nothing else reaches the
   * store: PostgreSQL refuses a NUL character in a text parameter with an error, SQLite just finds nothing.
   */
  const faqParam = (req: FastifyRequest): string => {
    const id = (req.params as Params)["faq"] ?? "";
    return /^faq_[0-9A-Za-z]{22}$/.test(id) ? id : "";
  };
  const faqOf = (s: SandboxRow, req: FastifyRequest): Promise<FaqRow | undefined> =>
    rt.store.getFaq(s.id, faqParam(req));
  const save = async (
    req: FastifyRequest,
    s: SandboxRow,
    f: FaqRow,
    body: FaqBody,
    reply: FastifyReply,
    status = 200,
  ): Promise<FastifyReply> => {
    // Published content changes live: it passes the same scan as a publication (§23.2). A draft's body is not
    // scanned, so it is written only while the FAQ is still a draft (checked by the write itself): a publication
    // committed since `f` was read must not take this body live unscanned.
    const draft = f.status !== "published";
    const pass = draft ? NO_GATE : await contentGate(rt, req, reply, s, body, false);
    if (pass === "answered") return reply;
    const updated = await storeAdmitted(
      pass,
      () => rt.store.updateFaq(s.id, f.id, body, rt.now(), draft),
      (ok) => ok,
    );
    if (updated) return reply.code(status).send(faqJson({ ...f, body }));
    if (draft && (await rt.store.getFaq(s.id, f.id))?.status === "published") return changed(reply);
    return invalid(reply, "claim_slug_taken", `slug \`${body.slug}\` is already used in this sandbox`, 409);
  };

  api(
    "POST",
    "/v1/faqs",
    "faq.create",
    authed(async (s, req, reply) => {
      const p = parseFaq(req.body);
      if (!p.ok) return invalid(reply, p.issue.code, p.issue.message);
      const r = await rt.store.createFaq(s.id, p.value, FAQ_LIMITS.faqsPerSandbox, rt.now());
      if (r === "limit")
        return invalid(reply, "claim_limit_exceeded", `a sandbox holds at most ${FAQ_LIMITS.faqsPerSandbox} faqs`, 409);
      if (r === "slug_taken")
        return invalid(reply, "claim_slug_taken", `slug \`${p.value.slug}\` is already used in this sandbox`, 409);
      return reply.code(201).send(faqJson(r));
    }),
  );
  api(
    "GET",
    "/v1/faqs",
    "faq.list",
    authed(async (s, req, reply) => reply.send({ faqs: (await rt.store.listFaqs(s.id)).map(faqJson) })),
  );
  api(
    "GET",
    "/v1/faqs/:faq",
    "faq.get",
    authed(async (s, req, reply) => {
      const f = await faqOf(s, req);
      return f === undefined ? rt.fail(req, reply) : reply.send(faqJson(f));
    }),
  );
  api(
    "PATCH",
    "/v1/faqs/:faq",
    "faq.update",
    authed(async (s, req, reply) => {
      const f = await faqOf(s, req);
      if (f === undefined) return rt.fail(req, reply);
      const p = parseFaq(req.body, f.body);
      return p.ok ? save(req, s, f, p.value, reply) : invalid(reply, p.issue.code, p.issue.message);
    }),
  );
  api(
    "DELETE",
    "/v1/faqs/:faq",
    "faq.delete",
    authed(async (s, req, reply) =>
      (await rt.store.deleteFaq(s.id, faqParam(req))) ? reply.code(204).send() : rt.fail(req, reply),
    ),
  );
  api(
    "GET",
    "/v1/faqs/:faq/questions",
    "question.list",
    authed(async (s, req, reply) => {
      const f = await faqOf(s, req);
      return f === undefined ? rt.fail(req, reply) : reply.send({ questions: f.body.questions });
    }),
  );
  api(
    "POST",
    "/v1/faqs/:faq/questions",
    "question.create",
    authed(async (s, req, reply) => {
      const f = await faqOf(s, req);
      if (f === undefined) return rt.fail(req, reply);
      if (f.body.questions.length >= FAQ_LIMITS.questionsPerFaq)
        return invalid(
          reply,
          "claim_limit_exceeded",
          `an faq holds at most ${FAQ_LIMITS.questionsPerFaq} questions`,
          409,
        );
      const q = parseQuestion(req.body, f.body.questions.length);
      return q.ok
        ? save(req, s, f, { ...f.body, questions: [...f.body.questions, q.value] }, reply, 201)
        : invalid(reply, q.issue.code, q.issue.message);
    }),
  );
  api(
    "PATCH",
    "/v1/faqs/:faq/questions/:q",
    "question.update",
    authed(async (s, req, reply) => {
      const f = await faqOf(s, req);
      const prev = f?.body.questions.find((x) => x.id === (req.params as Params)["q"]);
      if (f === undefined || prev === undefined) return rt.fail(req, reply);
      const q = parseQuestion(req.body, prev.order, prev);
      return q.ok
        ? save(
            req,
            s,
            f,
            { ...f.body, questions: f.body.questions.map((x) => (x.id === prev.id ? q.value : x)) },
            reply,
          )
        : invalid(reply, q.issue.code, q.issue.message);
    }),
  );
  api(
    "DELETE",
    "/v1/faqs/:faq/questions/:q",
    "question.delete",
    authed(async (s, req, reply) => {
      const f = await faqOf(s, req);
      const id = (req.params as Params)["q"];
      if (f === undefined || !f.body.questions.some((x) => x.id === id)) return rt.fail(req, reply);
      return save(req, s, f, { ...f.body, questions: f.body.questions.filter((x) => x.id !== id) }, reply);
    }),
  );
  const publish: Handler = authed(async (s, req, reply) => {
    const id = faqParam(req);
    const f = await rt.store.getFaq(s.id, id);
    if (f === undefined) return rt.fail(req, reply);
    const pass = await contentGate(rt, req, reply, s, f.body, true);
    if (pass === "answered") return reply;
    // The store publishes only if the body is still the one just scanned (compared in its transaction): an edit
    // landing between the read above and the publication is never published unscanned.
    const r = await storeAdmitted(
      pass,
      () => rt.store.publishFaq(s.id, id, rt.now(), f.body),
      (x) => x !== undefined && x !== "changed",
    );
    if (r === "changed") return changed(reply);
    if (r === undefined) return rt.fail(req, reply);
    return reply.send({
      id,
      faq_id: id,
      status: "published",
      published_url: pubUrl(req, r.handle, f.body.slug),
      previous_handle: r.previous ?? null,
      new_handle: r.handle,
      handle_rotated: r.rotated,
    });
  });
  api("POST", "/v1/faqs/:faq/publish", "faq.publish", publish);
  api("POST", "/v1/content/:faq/publish", "content.publish", publish);
}
