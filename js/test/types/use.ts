// Type-checked by types.test.mjs with tsc --strict: the package as a TypeScript user imports it.
import { Template, applyChatTemplate, loadTemplate, caps, parseReply, ReplyStream, errors, ChatfmtError, TemplateSyntaxError, builtinNames } from "chatfmt";
const t = new Template("{{ x }}", { limits: { max_steps: 1000 }, now: "2026-01-01T00:00:00" });
const s: string = t.render({ x: 1 });
const c: string = applyChatTemplate(t, [{ role: "user", content: "hi" }], { add_generation_prompt: true, enable_thinking: false });
const many: string[] = applyChatTemplate("glm45", [[{ role: "user", content: "hi" }]]);
const tok = { encode: (s: string, o: { add_special_tokens: boolean }) => [s.length, o.add_special_tokens ? 1 : 0], pad_token_id: 0 };
const ids = applyChatTemplate(t, [{ role: "user", content: "hi" }], { tokenize: true, tokenizer: tok, return_dict: true, padding: true });
const masks = typeof ids === "object" && !Array.isArray(ids) ? ids.assistant_masks : null;
const { text, spans } = t.renderWithSpans([{ role: "user", content: "x" }]);
const k: boolean = caps(t).supports_tools;
const m = parseReply("hi", { template: "glm45", tools: [] });
const calls = m.tool_calls?.[0].function.arguments;
const st = new ReplyStream({ format: "hermes" });
const d = st.feed("x").concat(st.finish());
st.dispose();
try { new Template("{{"); } catch (e) { if (e instanceof TemplateSyntaxError) console.log(e.lineno, e.kind); if (e instanceof ChatfmtError) console.log(e.message); }
const E = errors.TypeError;
const names: string[] = builtinNames();
const u = loadTemplate(new TextEncoder().encode("{{ messages }}"), { templateName: "default" });
console.log(s, c, many, text, spans, k, calls, d, E, names, u.kind, t.renderJSON("{}", { chat: false }));
