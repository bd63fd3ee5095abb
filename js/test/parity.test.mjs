// The package against the reference renderer (transformers' apply_chat_template
// through Jinja2): seeds x conversations (the committed goldens), corpus x
// conversations and the unit tables, from tests/run_tests.sh's oracle cache.
import { test } from "node:test";
import { spawnSync } from "node:child_process";
import assert from "node:assert/strict";
import fs from "node:fs";
import { Template, applyChatTemplate } from "../index.js";
import { REPO, NOW, readJsonl, figure, asResult, sameResult, templateText, rawField, knownIds,
  knownMessageIds, parityMatch, CHATFMT_BIN } from "./helpers.mjs";

/** Renders one batch case through the object API (as a JS caller would). */
function renderCase(c, cache) {
  const text = templateText(c);
  let t = cache.get(text);
  if (!t) {
    t = asResult(() => new Template(text, { now: NOW }));
    cache.set(text, t);
  }
  if (!t.ok) return { ok: false, error_type: t.error_type, error: t.error };
  const tpl = t.output;
  if (c.raw) return asResult(() => tpl.render(c.context));
  const { messages, ...options } = c.context;
  return asResult(() => tpl.applyChatTemplate(messages, options));
}

function disposeAll(cache) {
  for (const t of cache.values()) if (t.ok) t.output.dispose();
}

function parity(cases, refs, render, label) {
  assert.equal(refs.length, cases.length, `${label}: reference has ${refs.length} results for ${cases.length} cases`);
  const bad = [];
  for (let i = 0; i < cases.length; i++) {
    const got = render(cases[i]);
    if (!sameResult(refs[i], got)) bad.push({ id: cases[i].id, ref: refs[i], got });
  }
  const same = cases.length - bad.length;
  figure(`${label} ${same}/${cases.length}`);
  return { same, bad };
}

function show(bad) {
  return bad.slice(0, 3).map((b) => `${b.id}: ref ${JSON.stringify(b.ref).slice(0, 160)} got ${JSON.stringify(b.got).slice(0, 160)}`).join("\n");
}

test("seeds x conversations: identical to the reference (goldens), 100%", () => {
  const cases = readJsonl(`${REPO}/tests/golden/seeds.cases.jsonl`);
  const refs = readJsonl(`${REPO}/tests/golden/seeds.expected.jsonl`);
  const cache = new Map();
  const { bad } = parity(cases, refs, (c) => renderCase(c, cache), "seeds");
  disposeAll(cache);
  assert.equal(bad.length, 0, show(bad));
});

test("applyChatTemplate(text) caches and renders as Template", () => {
  const [c] = readJsonl(`${REPO}/tests/golden/seeds.cases.jsonl`).filter((c) => !/strftime|now/.test(c.template_text));
  const { messages, ...options } = c.context;
  const t = new Template(c.template_text);
  assert.equal(applyChatTemplate(c.template_text, messages, options), t.applyChatTemplate(messages, options));
  assert.deepEqual(applyChatTemplate(c.template_text, [messages, messages], options),
    [t.applyChatTemplate(messages, options), t.applyChatTemplate(messages, options)]);
  t.dispose();
});

const corpusCases = process.env.CHATFMT_JS_CORPUS_CASES;
const corpusRef = process.env.CHATFMT_JS_CORPUS_REF;
test("corpus x conversations: >= 99.5% identical to the reference", { skip: !(corpusCases && corpusRef) &&
  "CHATFMT_JS_CORPUS_CASES / CHATFMT_JS_CORPUS_REF not set (tests/run_tests.sh sets them from the oracle cache)" }, () => {
  const cases = readJsonl(corpusCases);
  const cache = new Map();
  const { same, bad } = parity(cases, readJsonl(corpusRef), (c) => renderCase(c, cache), "corpus");
  disposeAll(cache);
  assert.ok(same / cases.length >= 0.995, show(bad));
});

// "cases.jsonl:ref.jsonl" pairs, comma-separated
const unitTables = (process.env.CHATFMT_JS_UNIT || "").split(",").filter(Boolean).map((p) => p.split(":"));
test("unit tables through renderJSON: as the reference (tests/parity.py's rule) and exactly as the C CLI", {
  skip: !unitTables.length && "CHATFMT_JS_UNIT not set (tests/run_tests.sh sets it from the oracle cache)" }, () => {
  const known = knownIds();
  const knownMessages = knownMessageIds();
  const haveCli = fs.existsSync(CHATFMT_BIN);
  let total = 0;
  let kindsDiffer = 0;
  const bad = [];
  const unlikeCli = [];
  for (const [casesFile, refFile] of unitTables) {
    const lines = fs.readFileSync(casesFile, "utf8").split("\n").filter((l) => l.trim());
    const refs = readJsonl(refFile);
    assert.equal(refs.length, lines.length, casesFile);
    let cli = null;
    if (haveCli) {
      const run = spawnSync(CHATFMT_BIN, ["render", "--batch", casesFile], {
        encoding: "utf8", maxBuffer: 1 << 28, env: { ...process.env, CHATFMT_NOW: NOW, TZ: "UTC" } });
      assert.equal(run.status, 0, run.stderr);
      cli = run.stdout.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
    }
    const cache = new Map();
    lines.forEach((line, i) => {
      const c = JSON.parse(line);
      if (known.has(c.id)) return;
      total++;
      let t = cache.get(c.template_text);
      if (!t) cache.set(c.template_text, (t = asResult(() => new Template(templateText(c), { now: NOW }))));
      const got = t.ok ? asResult(() => t.output.renderJSON(rawField(line, "context") ?? "{}", { chat: !c.raw })) : t;
      if (!parityMatch(refs[i], got, knownMessages.has(c.id))) bad.push({ id: c.id, ref: refs[i], got });
      else if (!refs[i].ok && refs[i].error_type !== got.error_type) kindsDiffer++;
      if (cli && !sameResult(cli[i], got)) unlikeCli.push({ id: c.id, ref: cli[i], got });
    });
    disposeAll(cache);
  }
  figure(`unit ${total - bad.length}/${total} (${kindsDiffer} error kinds differ from Python's as the C library's do)`);
  if (haveCli) figure(`unit, same text or error kind and message as the C CLI ${total - unlikeCli.length}/${total}`);
  assert.equal(bad.length, 0, show(bad));
  assert.equal(unlikeCli.length, 0, "unlike the C CLI:\n" + show(unlikeCli));
});
