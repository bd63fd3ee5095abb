// The package's API: shapes, errors, template sources, caps, memory.
// Where the C CLI answers the same question, the answer must be the CLI's.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import * as chatfmt from "../index.js";
import { Template, applyChatTemplate, loadTemplate, caps, parseReply, ReplyStream, builtinNames, heapInUse } from "../index.js";
import { REPO, CHATFMT_BIN, NOW, figure } from "./helpers.mjs";

const haveCli = fs.existsSync(CHATFMT_BIN);
const noCli = !haveCli && `${CHATFMT_BIN} not built (make)`;
const USER = [{ role: "user", content: "Hi é 😀" }];

function cli(...args) {
  const run = spawnSync(CHATFMT_BIN, args, { encoding: "utf8", env: { ...process.env, CHATFMT_NOW: NOW, TZ: "UTC" } });
  return { status: run.status, out: run.stdout, err: run.stderr };
}

function tmpdir() {
  return fs.mkdtempSync(path.join(os.tmpdir(), "chatfmt-js-api-"));
}

test("new Template(text).render(vars): raw mode, the shape of @huggingface/jinja's Template", () => {
  const t = new Template("{% for x in items %}{{ x|upper }}{{ ',' if not loop.last }}{% endfor %}|{{ missing is defined }}");
  assert.equal(t.render({ items: ["a", "b"] }), "A,B|False");
  assert.equal(t.kind, "text");
  t.dispose();
  assert.equal(t.disposed, true);
  assert.throws(() => t.render({}), chatfmt.UsageError);
  t.dispose(); // idempotent
  const u = new Template("{{ x }}");
  u[Symbol.dispose]();
  assert.equal(u.disposed, true);
});

test("errors: the Python exception names, Jinja2's hierarchy, line and column", () => {
  let e = null;
  try {
    new Template("line one\n{{ m.content }\n");
  } catch (err) {
    e = err;
  }
  assert.ok(e instanceof chatfmt.TemplateSyntaxError && e instanceof chatfmt.TemplateError && e instanceof chatfmt.ChatfmtError);
  assert.equal(e.name, "TemplateSyntaxError");
  assert.equal(e.kind, "TemplateSyntaxError");
  assert.deepEqual([e.lineno, e.column], [2, 14]);
  assert.throws(() => new Template("{{ nope.x }}").render(), (x) =>
    x instanceof chatfmt.UndefinedError && x instanceof chatfmt.TemplateRuntimeError && x.message === "'nope' is undefined");
  assert.throws(() => applyChatTemplate("{{ raise_exception('no system role') }}", USER), (x) =>
    x.name === "TemplateError" && x.message === "no system role");
  assert.throws(() => new Template("{{ 1 / 0 }}").render(), (x) =>
    x.name === "ZeroDivisionError" && x instanceof chatfmt.ChatfmtError && x instanceof RangeError);
  assert.throws(() => new Template("{{ 'a' + 1 }}").render(), (x) =>
    x.name === "TypeError" && x instanceof TypeError && x instanceof chatfmt.ChatfmtError);
  assert.throws(() => new Template("{{ x }}").render({ n: 10n }), chatfmt.errors.TypeError);
  assert.ok(!(new Error("plain") instanceof chatfmt.ChatfmtError));
});

test("chat mode: transformers' keyword arguments and continue_final_message", () => {
  const t = new Template("{% for m in messages %}<{{ m.role }}>{{ m.content }}</{{ m.role }}>{% endfor %}" +
    "{% if add_generation_prompt %}<assistant>{% endif %}{{ tools is none }}{{ documents is none }}{{ extra | default('') }}");
  assert.equal(t.applyChatTemplate(USER), "<user>Hi é 😀</user>TrueTrue");
  assert.equal(t.applyChatTemplate(USER, { add_generation_prompt: true, extra: "!" }), "<user>Hi é 😀</user><assistant>TrueTrue!");
  assert.equal(t.applyChatTemplate([...USER, { role: "assistant", content: "The answer" }], { continue_final_message: true }),
    "<user>Hi é 😀</user><assistant>The answer");
  assert.throws(() => t.applyChatTemplate([{ role: "user" }], { continue_final_message: true }), chatfmt.ValueError);
  t.dispose();
});

test("renderWithSpans: the {% generation %} spans of `chatfmt render --spans` (tests/data/spans)", { skip: noCli }, () => {
  const dir = path.join(REPO, "tests/data/spans");
  const conversation = path.join(dir, "conversation.json");
  const { messages, ...options } = JSON.parse(fs.readFileSync(conversation, "utf8"));
  const templates = fs.readdirSync(dir).filter((f) => f.endsWith(".jinja")).map((f) => path.join(dir, f));
  let spans = 0;
  for (const file of templates) {
    const want = cli("render", file, conversation, "--spans");
    const t = new Template(fs.readFileSync(file, "utf8"), { now: NOW });
    if (want.status !== 0) {
      assert.throws(() => t.renderWithSpans(messages, options), chatfmt.ChatfmtError, file);
    } else {
      const cut = want.out.lastIndexOf("\n", want.out.length - 2);
      const got = t.renderWithSpans(messages, options);
      assert.equal(got.text + "\n", want.out.slice(0, cut + 1), file);
      const wantSpans = JSON.parse(want.out.slice(cut + 1)).map((s) => [s.start, s.end]);
      assert.deepEqual(got.spans, wantSpans, file);
      spans += wantSpans.length;
    }
    t.dispose();
  }
  figure(`spans: ${templates.length} templates, ${spans} spans as the CLI's`);
  assert.ok(spans > 0);
});

test("renderJSON keeps what a JavaScript number cannot (1.0, integers beyond 2^53)", () => {
  const t = new Template("{{ a }} {{ b }} {{ b + 1 }}");
  assert.equal(t.renderJSON('{"a": 1.0, "b": 98765432109876543210}'), "1.0 98765432109876543210 98765432109876543211");
  assert.equal(t.render({ a: 1.0, b: 2 }), "1 2 3");
  assert.throws(() => t.renderJSON("{nope"), chatfmt.JSONDecodeError);
  t.dispose();
});

test("built-in templates render as `chatfmt render NAME`", { skip: noCli }, () => {
  const dir = tmpdir();
  const ctx = { messages: USER, add_generation_prompt: true, enable_thinking: false };
  fs.writeFileSync(path.join(dir, "ctx.json"), JSON.stringify(ctx));
  assert.deepEqual(builtinNames(), cli("list-templates").out.trim().split("\n"));
  for (const name of builtinNames()) {
    const want = cli("render", name, path.join(dir, "ctx.json"));
    assert.equal(want.status, 0, want.err);
    const { messages, ...options } = ctx;
    assert.equal(applyChatTemplate(name, messages, options), want.out, name);
    const t = loadTemplate(name);
    assert.equal(t.kind, "builtin");
    assert.equal(t.applyChatTemplate(messages, options), want.out, name);
    t.dispose();
  }
  fs.rmSync(dir, { recursive: true });
});

test("loadTemplate(tokenizer_config.json): special tokens, named templates, tool_use, as the CLI", { skip: noCli }, () => {
  const dir = tmpdir();
  const config = {
    bos_token: "<s>", eos_token: { content: "</s>", lstrip: false }, pad_token: null,
    chat_template: [
      { name: "default", template: "{{ bos_token }}{% for m in messages %}{{ m.content }}{{ eos_token }}{% endfor %}" },
      { name: "tool_use", template: "TOOLS {{ tools | length }} {{ bos_token }}{{ messages[0].content }}" },
    ],
  };
  const file = path.join(dir, "tokenizer_config.json");
  fs.writeFileSync(file, JSON.stringify(config));
  fs.writeFileSync(path.join(dir, "ctx.json"), JSON.stringify({ messages: USER }));
  const tools = [{ type: "function", function: { name: "f", parameters: {} } }];
  fs.writeFileSync(path.join(dir, "tools.json"), JSON.stringify(tools));
  const t = loadTemplate(fs.readFileSync(file));
  assert.equal(t.kind, "tokenizer_config");
  assert.equal(t.applyChatTemplate(USER), cli("render", file, path.join(dir, "ctx.json")).out);
  assert.equal(t.applyChatTemplate(USER), "<s>Hi é 😀</s>");
  assert.equal(t.applyChatTemplate(USER, { bos_token: "[B]" }), "[B]Hi é 😀</s>"); // caller keys win
  assert.equal(t.applyChatTemplate(USER, { tools }),
    cli("render", file, path.join(dir, "ctx.json"), "--tools", path.join(dir, "tools.json")).out);
  assert.equal(t.render({ messages: USER }), "Hi é 😀"); // raw: no special tokens
  const named = loadTemplate(JSON.stringify(config), { templateName: "tool_use" });
  assert.equal(named.applyChatTemplate(USER, { tools: [] }), "TOOLS 0 <s>Hi é 😀");
  assert.throws(() => loadTemplate(JSON.stringify(config), { templateName: "nope" }), chatfmt.UsageError);
  t.dispose();
  named.dispose();
  fs.rmSync(dir, { recursive: true });
});

test("loadTemplate(GGUF bytes): tests/make_gguf.py's fixtures load, fail and render as the CLI", { skip: noCli }, () => {
  const dir = tmpdir();
  const made = spawnSync("python3", [path.join(REPO, "tests/make_gguf.py"), dir], { encoding: "utf8" });
  if (made.status !== 0) return; // no python3: tests/test_loader.c covers the loader
  fs.writeFileSync(path.join(dir, "ctx.json"), JSON.stringify({ messages: USER, add_generation_prompt: true }));
  let rendered = 0;
  let refused = 0;
  for (const name of fs.readdirSync(dir).filter((f) => f.endsWith(".gguf"))) {
    const file = path.join(dir, name);
    const want = cli("render", file, path.join(dir, "ctx.json"));
    let got;
    try {
      const t = loadTemplate(fs.readFileSync(file), { name: file });
      assert.equal(t.kind, "gguf", name);
      try {
        got = { ok: true, out: t.applyChatTemplate(USER, { add_generation_prompt: true }) };
      } finally {
        t.dispose();
      }
    } catch (e) {
      if (!(e instanceof chatfmt.ChatfmtError)) throw e;
      got = { ok: false, out: `${e.name}: ${e.message}` };
    }
    if (want.status === 0) {
      assert.deepEqual(got, { ok: true, out: want.out }, name);
      rendered++;
    } else {
      assert.equal(got.ok, false, name);
      assert.ok(want.err.includes(`error: ${got.out}`), `${name}: CLI ${want.err} JS ${got.out}`);
      refused++;
    }
  }
  figure(`gguf fixtures: ${rendered} render and ${refused} fail as the CLI`);
  assert.ok(rendered > 0 && refused > 0);
  fs.rmSync(dir, { recursive: true });
});

test("web copies are repaired by loadTemplate as by `chatfmt repair`, kept by new Template", { skip: noCli }, () => {
  const pasted = "1 {% for m in messages %}\n2 {{ m.content }}\n3 {% endfor %}\n";
  const dir = tmpdir();
  fs.writeFileSync(path.join(dir, "pasted.txt"), pasted);
  const t = loadTemplate(pasted);
  assert.ok(t.warnings.some((w) => w.includes("repaired")), JSON.stringify(t.warnings));
  assert.equal(t.source, cli("repair", path.join(dir, "pasted.txt")).out);
  const raw = new Template(pasted);
  assert.equal(raw.source, pasted);
  assert.equal(raw.applyChatTemplate(USER), "1 2 Hi é 😀\n3 ");
  t.dispose();
  raw.dispose();
  fs.rmSync(dir, { recursive: true });
});

test("caps(template) equals `chatfmt caps` for every built-in", { skip: noCli }, () => {
  for (const name of builtinNames()) {
    const want = cli("caps", name);
    assert.equal(want.status, 0, want.err);
    assert.deepEqual(caps(name), JSON.parse(want.out), name);
  }
});

test("parseReply / ReplyStream: format from the template, deltas for any chunking", () => {
  const reply = '<think>The user wants weather.</think>\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';
  const msg = parseReply(reply, { template: "toolcall-qwen3" });
  assert.deepEqual(msg, {
    role: "assistant", content: null, reasoning_content: "The user wants weather.",
    tool_calls: [{ id: "call_0", type: "function", function: { name: "get_weather", arguments: '{"city": "Paris"}' } }],
  });
  for (const size of [1, 3, 1000]) {
    const s = new ReplyStream({ template: "toolcall-qwen3" });
    let reasoning = "";
    let args = "";
    for (let i = 0; i < reply.length; i += size) {
      for (const d of s.feed(reply.slice(i, i + size))) {
        reasoning += d.reasoning_content ?? "";
        for (const call of d.tool_calls ?? []) args += call.function.arguments ?? "";
      }
    }
    s.finish();
    assert.throws(() => s.finish(), chatfmt.UsageError);
    s.dispose();
    assert.equal(reasoning, "The user wants weather.");
    assert.equal(args, '{"city": "Paris"}');
  }
  assert.equal(parseReply("Hi", { format: "glm45" }).content, "Hi");
  assert.throws(() => parseReply("x", { format: "nope" }), chatfmt.UsageError);
});

test("hostile templates end in errors, not crashes", () => {
  assert.throws(() => new Template("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}").render(), chatfmt.ChatfmtError);
  assert.throws(() => new Template("{% for i in range(100) %}{{ 'x' * 1000 }}{% endfor %}", { limits: { max_output: 50000 } })
    .render(), chatfmt.LimitError);
  assert.throws(() => new Template("{{ x }}", { limits: { max_nothing: 1 } }), chatfmt.UsageError);
  assert.throws(() => new Template("{{ (" + "[".repeat(5000) + "]".repeat(5000) + ") }}"), chatfmt.ChatfmtError);
  // just under the default limits the engine's own stack (V8's, for wasm frames) still holds
  const deep = new Template("{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{% else %}x{% endif %}{% endmacro %}{{ f(490) }}");
  assert.equal(deep.render(), "x");
  deep.dispose();
  const nested = new Template("{% if true %}".repeat(450) + "y" + "{% endif %}".repeat(450));
  assert.equal(nested.render(), "y");
  nested.dispose();
  const length = new Template("{{ x|length }}");
  assert.equal(length.renderJSON(`{"x": ${"[".repeat(510)}${"]".repeat(510)}}`), "1");
  assert.throws(() => length.renderJSON(`{"x": ${"[".repeat(600)}${"]".repeat(600)}}`), chatfmt.ChatfmtError);
  length.dispose();
});

test("no leak: 100000 renders, and 1000 each of templates, streams, replies and errors made and dropped", () => {
  const first = JSON.parse(fs.readFileSync(path.join(REPO, "tests/golden/seeds.cases.jsonl"), "utf8").split("\n")[0]);
  const t = new Template(first.template_text, { now: NOW });
  const conversations = [USER, [{ role: "system", content: "Be brief." }, ...USER, { role: "assistant", content: "Hello!" }]];
  const render = (i) => t.applyChatTemplate(conversations[i & 1], { add_generation_prompt: true });
  const objects = (i) => {
    const u = new Template("{{ messages[0].content }}" + i);
    u.applyChatTemplate(USER);
    u.dispose();
    const s = new ReplyStream({ format: "hermes" });
    s.feed('<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>');
    s.finish();
    s.dispose();
    parseReply("<think>r</think>c", { template: t });
    assert.throws(() => new Template("{{ x }"), chatfmt.TemplateSyntaxError);
  };
  // warm-up: the library keeps a few buffers per thread for its next calls (chatfmt.h)
  for (let i = 0; i < 1000; i++) render(i);
  for (let i = 0; i < 100; i++) objects(i);
  const before = heapInUse();
  for (let i = 0; i < 100000; i++) render(i);
  const afterRenders = heapInUse();
  for (let i = 0; i < 1000; i++) objects(i);
  const afterObjects = heapInUse();
  t.dispose();
  figure(`heap in use ${before} bytes after warm-up; +${afterRenders - before} after 100000 renders; ` +
    `+${afterObjects - afterRenders} after 1000 x (template, stream, reply, error)`);
  // a leak of even 1 byte a render would show as 100 KB; of 16 bytes an object as 16 KB
  assert.ok(afterRenders - before < 16384, `renders grew the heap by ${afterRenders - before} bytes`);
  assert.ok(afterObjects - afterRenders < 16384, `objects grew the heap by ${afterObjects - afterRenders} bytes`);
});
