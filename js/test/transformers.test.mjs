// transformers' apply_chat_template options in the JS package (js/tokenize.js):
// tokenize with a tokenizer passed in, return_dict, assistant masks, batches,
// padding and truncation; none of them reaches the template. Texts and spans
// are the C CLI's; the tokenizer is a stand-in written here (no tokenizer
// package is installed), with the two interfaces the package takes.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import * as chatfmt from "../index.js";
import { Template, applyChatTemplate } from "../index.js";
import { REPO, SHARED, CHATFMT_BIN, NOW, figure } from "./helpers.mjs";

const noCli = !fs.existsSync(CHATFMT_BIN) && `${CHATFMT_BIN} not built (make)`;

function cli(...args) {
  const run = spawnSync(CHATFMT_BIN, args, { encoding: "utf8", env: { ...process.env, CHATFMT_NOW: NOW, TZ: "UTC" } });
  assert.equal(run.status, 0, run.stderr);
  return run.stdout;
}

/** GPT-2-like pieces (whitespace runs, words, single symbols) with their
 * [start, end) string offsets, and a stable hash as the id. */
function pieces(text) {
  return [...text.matchAll(/\s+|[\p{L}\p{N}_]+|[^\s\p{L}\p{N}_]/gu)].map((m) => {
    let h = 2166136261;
    for (const ch of m[0]) h = Math.imul(h ^ ch.codePointAt(0), 16777619) >>> 0;
    return { id: 100 + (h % 50000), start: m.index, end: m.index + m[0].length };
  });
}

/** The encode() interface of @huggingface/tokenizers: an Encoding with ids, offsets, attention_mask. */
class EncodingTokenizer {
  constructor() {
    this.pad_token_id = 0;
    this.padding_side = "right";
    this.calls = [];
  }
  encode(text, options) {
    this.calls.push(options);
    const p = pieces(text);
    return { ids: p.map((x) => x.id), offsets: p.map((x) => [x.start, x.end]), attention_mask: p.map(() => 1) };
  }
}

/** transformers.js's call interface: tok(text | texts, options) -> {input_ids, attention_mask} (no offsets). */
function callableTokenizer(seen) {
  return (texts, options) => {
    seen.push(options);
    const one = (t) => pieces(t).map((x) => x.id);
    const ids = Array.isArray(texts) ? texts.map(one) : one(texts);
    const mask = Array.isArray(texts) ? ids.map((r) => r.map(() => 1)) : ids.map(() => 1);
    return { input_ids: ids, attention_mask: mask };
  };
}

/** transformers' assistant-mask rule, written out here from the spans and the
 * offsets: tokens from the one holding a span's first character to the one
 * holding its last (spans in code points, offsets in string indices). */
function expectedMask(text, spans) {
  const p = pieces(text);
  const cps = Array.from(text);
  const index = (cp) => cps.slice(0, cp).join("").length;
  const tokenAt = (i) => p.findIndex((x) => x.start <= i && i < x.end);
  const mask = p.map(() => 0);
  for (const [a, b] of spans) {
    const s = tokenAt(index(a));
    if (s < 0) break;
    const e = tokenAt(index(b - 1));
    for (let j = s; j <= (e < 0 ? mask.length - 1 : e); j++) mask[j] = 1;
  }
  return mask;
}

function tmpdir() {
  return fs.mkdtempSync(path.join(os.tmpdir(), "chatfmt-js-transformers-"));
}

const CONVERSATIONS = ["01-single-user.json", "02-system-multiturn.json", "03-tools-roundtrip.json", "05-reasoning-history.json"]
  .map((f) => path.join(SHARED, "conversations", f));
const SEEDS = fs.existsSync(path.join(SHARED, "seeds"))
  ? fs.readdirSync(path.join(SHARED, "seeds")).filter((f) => f.endsWith(".jinja")).map((f) => path.join(SHARED, "seeds", f))
  : [];

test("transformers' options never reach the template", () => {
  const t = new Template("{{ tokenize }}|{{ return_dict }}|{{ padding }}|{{ truncation }}|{{ max_length }}|"
    + "{{ return_tensors }}|{{ return_assistant_tokens_mask }}|{{ tokenizer_kwargs }}|{{ tokenizer }}|{{ x }}");
  const user = [{ role: "user", content: "hi" }];
  assert.equal(t.applyChatTemplate(user, { x: 1 }), "|||||||||1");
  assert.equal(t.applyChatTemplate(user, {
    tokenize: false, return_dict: false, padding: false, truncation: false, max_length: null,
    return_assistant_tokens_mask: false, tokenizer_kwargs: {}, tokenizer: null, x: 1,
  }), "|||||||||1");
  assert.deepEqual(t.applyChatTemplate(user, { return_dict: true, x: 2 }), { text: "|||||||||2", assistant_spans: [] });
  t.dispose();
});

test("tokenize without a tokenizer, and options that cannot go together: transformers' ValueErrors", () => {
  const t = new Template("{{ messages[0].content }}");
  const user = [{ role: "user", content: "hi" }];
  assert.throws(() => t.applyChatTemplate(user, { tokenize: true }), (e) => e instanceof chatfmt.ValueError && /tokenizer/.test(e.message));
  assert.throws(() => t.applyChatTemplate(user, { return_assistant_tokens_mask: true }), /incompatible with `return_dict=False`/);
  assert.throws(() => t.applyChatTemplate(user, { continue_final_message: true, add_generation_prompt: true, return_dict: true }),
    /not compatible/);
  assert.throws(() => t.applyChatTemplate(user, { tokenize: true, tokenizer: {} }), chatfmt.TypeError);
  assert.throws(() => t.applyChatTemplate(user, { tokenize: true, tokenizer: new EncodingTokenizer(), return_tensors: "pt" }),
    chatfmt.ValueError);
  t.dispose();
});

test("seeds x conversations: text as the CLI's; tokenize gives the tokenizer's ids of that text; batches", { skip: noCli || !SEEDS.length }, () => {
  const dir = tmpdir();
  let cases = 0;
  for (const seed of SEEDS) {
    const text = fs.readFileSync(seed, "utf8");
    const tok = new EncodingTokenizer();
    const batch = [], wants = [];
    for (const file of CONVERSATIONS) {
      const { messages, ...options } = JSON.parse(fs.readFileSync(file, "utf8"));
      delete options.continue_final_message;
      const ctx = path.join(dir, "ctx.json");
      fs.writeFileSync(ctx, JSON.stringify({ messages, ...options }));
      const want = cli("render", seed, ctx);
      const t = new Template(text, { now: NOW });
      assert.equal(t.applyChatTemplate(messages, options), want, `${seed} ${file}`);
      const ids = applyChatTemplate(t, messages, { ...options, tokenize: true, tokenizer: tok });
      assert.deepEqual(ids, pieces(want).map((x) => x.id));
      assert.deepEqual(tok.calls.at(-1), { add_special_tokens: false });
      const plainIds = t.applyChatTemplate(messages, { ...options, tokenize: true, tokenizer: { encode: (s) => Uint32Array.from(pieces(s).map((x) => x.id)) } });
      assert.deepEqual(plainIds, ids, "an encode() that returns ids (transformers.js)");
      const dict = t.applyChatTemplate(messages, { ...options, tokenize: true, return_dict: true, tokenizer: tok });
      assert.deepEqual(dict, { input_ids: ids, attention_mask: ids.map(() => 1) });
      t.dispose();
      if (!options.tools && !options.documents) {
        batch.push(messages);
        wants.push(want);
      }
      cases++;
    }
    // a batch: texts in order, and padded ids (the tokenizer's pad id, to the longest)
    const opts = { add_generation_prompt: true };
    const texts = applyChatTemplate(text, batch, opts);
    assert.equal(texts.length, batch.length);
    const one = batch.map((m) => applyChatTemplate(text, m, opts));
    assert.deepEqual(texts, one);
    const padded = applyChatTemplate(text, batch, { ...opts, tokenize: true, tokenizer: tok, padding: true, return_dict: true });
    const longest = Math.max(...one.map((s) => pieces(s).length));
    assert.deepEqual(padded.input_ids, one.map((s) => {
      const ids = pieces(s).map((x) => x.id);
      return [...ids, ...Array(longest - ids.length).fill(0)];
    }));
    assert.deepEqual(padded.attention_mask, one.map((s) => {
      const n = pieces(s).length;
      return [...Array(n).fill(1), ...Array(longest - n).fill(0)];
    }));
    const cut = applyChatTemplate(text, batch, { ...opts, tokenize: true, tokenizer: tok, truncation: true, max_length: 7 });
    assert.deepEqual(cut, one.map((s) => pieces(s).slice(0, 7).map((x) => x.id)));
    const seen = [];
    const called = applyChatTemplate(text, batch, { ...opts, tokenize: true, tokenizer: callableTokenizer(seen), truncation: true, max_length: 9 });
    assert.deepEqual(called, one.map((s) => pieces(s).map((x) => x.id)), "the call interface's own ids");
    assert.deepEqual(seen[0], { add_special_tokens: false, padding: false, truncation: true, max_length: 9, return_tensor: false });
  }
  fs.rmSync(dir, { recursive: true, force: true });
  figure(`transformers options: ${cases} seed x conversation cases as the CLI's text, tokenized`);
});

test("return_dict: assistant_spans and assistant_masks from the CLI's {% generation %} spans (tests/data/spans)", { skip: noCli }, () => {
  const dir = path.join(REPO, "tests/data/spans");
  const conversation = path.join(dir, "conversation.json");
  const { messages, ...options } = JSON.parse(fs.readFileSync(conversation, "utf8"));
  const tok = new EncodingTokenizer();
  let masked = 0, templates = 0;
  for (const f of fs.readdirSync(dir).filter((x) => x.endsWith(".jinja"))) {
    const file = path.join(dir, f);
    const run = spawnSync(CHATFMT_BIN, ["render", file, conversation, "--spans"], { encoding: "utf8", env: { ...process.env, CHATFMT_NOW: NOW, TZ: "UTC" } });
    if (run.status !== 0) continue;
    const cut = run.stdout.lastIndexOf("\n", run.stdout.length - 2);
    const text = run.stdout.slice(0, cut);
    const spans = JSON.parse(run.stdout.slice(cut + 1)).map((s) => [s.start, s.end]);
    const t = new Template(fs.readFileSync(file, "utf8"), { now: NOW });
    assert.deepEqual(t.applyChatTemplate(messages, { ...options, return_dict: true }), { text, assistant_spans: spans }, f);
    const out = t.applyChatTemplate(messages, { ...options, tokenize: true, tokenizer: tok, return_dict: true, return_assistant_tokens_mask: true });
    assert.deepEqual(out.input_ids, pieces(text).map((x) => x.id), f);
    assert.deepEqual(out.assistant_masks, expectedMask(text, spans), f);
    const batch = t.applyChatTemplate([messages, messages], { ...options, tokenize: true, tokenizer: tok, return_dict: true, return_assistant_tokens_mask: true });
    assert.deepEqual(batch.assistant_masks, [out.assistant_masks, out.assistant_masks], f);
    masked += out.assistant_masks.reduce((a, b) => a + b, 0);
    templates++;
    const noOffsets = { encode: (s) => pieces(s).map((x) => x.id) };
    assert.throws(() => t.applyChatTemplate(messages, { ...options, tokenize: true, tokenizer: noOffsets, return_dict: true, return_assistant_tokens_mask: true }),
      (e) => e instanceof chatfmt.ValueError && /offsets/.test(e.message));
    t.dispose();
  }
  figure(`assistant masks: ${templates} templates, ${masked} assistant tokens as the CLI's spans give them`);
  assert.ok(templates > 0 && masked > 0);
});

test("assistant masks with characters beyond the BMP (spans in code points, offsets in string indices)", () => {
  const t = new Template("{% for m in messages %}{{ m.role }}: {% if m.role == 'assistant' %}{% generation %}{{ m.content }}{% endgeneration %}{% else %}{{ m.content }}{% endif %} |{% endfor %}");
  const messages = [{ role: "user", content: "😀😀 hi" }, { role: "assistant", content: "😀 ok 😀 fine" }, { role: "user", content: "🎉 more" }];
  const { text, assistant_spans } = t.applyChatTemplate(messages, { return_dict: true });
  assert.equal(Array.from(text).slice(...assistant_spans[0]).join(""), "😀 ok 😀 fine");
  const out = t.applyChatTemplate(messages, { tokenize: true, tokenizer: new EncodingTokenizer(), return_dict: true, return_assistant_tokens_mask: true });
  const marked = pieces(text).filter((_, j) => out.assistant_masks[j]).map((x) => text.slice(x.start, x.end)).join("");
  assert.equal(marked, "😀 ok 😀 fine");
  t.dispose();
});
