// compare.mjs CASES.jsonl REFERENCE.jsonl REPEAT
// The JavaScript peers on the cases chatfmt is measured on: @huggingface/jinja
// (transformers.js) and minijinja-js, each set up as a chat template engine
// is (trim_blocks/lstrip_blocks, raise_exception, strftime_now, tools and
// documents defined). For each: how many cases give exactly the reference's
// result (the same text, or an error where the reference fails), and the
// median microseconds per render with templates compiled once. chatfmt's own
// WebAssembly package (js/) runs beside them when CHATFMT_JS_INDEX names its
// index.js (compare_peers.sh builds it), and its ratio to @huggingface/jinja
// is printed.
import fs from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { Template } = await import("@huggingface/jinja");
const { Environment } = require("minijinja-js");

const [casesPath, refPath, repeatArg] = process.argv.slice(2);
const repeat = Number(repeatArg || 5);
const cases = fs.readFileSync(casesPath, "utf8").split("\n").filter(Boolean).map(JSON.parse);
const refs = fs.readFileSync(refPath, "utf8").split("\n").filter(Boolean).map(JSON.parse);
const texts = cases.map((c) => c.template_text ?? fs.readFileSync(c.template, "utf8"));

// "now" pinned as the reference pins it (CHATFMT_NOW); the strftime codes templates use.
const NOW = new Date(Date.UTC(2026, 2, 14, 15, 9, 26));
const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
  "October", "November", "December"];
const pad = (n, w = 2) => String(n).padStart(w, "0");
function strftimeNow(fmt) {
  const d = NOW;
  const codes = {
    Y: d.getUTCFullYear(), m: pad(d.getUTCMonth() + 1), d: pad(d.getUTCDate()), H: pad(d.getUTCHours()),
    M: pad(d.getUTCMinutes()), S: pad(d.getUTCSeconds()), B: MONTHS[d.getUTCMonth()],
    b: MONTHS[d.getUTCMonth()].slice(0, 3), A: DAYS[d.getUTCDay()], a: DAYS[d.getUTCDay()].slice(0, 3), "%": "%",
  };
  return String(fmt).replace(/%(.)/g, (m, c) => (c in codes ? String(codes[c]) : m));
}
// @huggingface/jinja's own strftime_now reads the clock: pin it at NOW.
const RealDate = Date;
globalThis.Date = class extends RealDate {
  constructor(...args) {
    super(...(args.length ? args : [NOW.getTime()]));
  }
  static now() {
    return NOW.getTime();
  }
};
function raiseException(message) {
  throw new Error(String(message));
}
function chatContext(c) {
  const ctx = { ...c.context };
  if (!c.raw) {
    ctx.tools ??= null;
    ctx.documents ??= null;
    ctx.add_generation_prompt ??= false;
  }
  return ctx;
}

// chatfmt itself in WebAssembly (the js/ package), when compare_peers.sh built it:
// templates compiled once, the same calls a JS user makes.
const chatfmtIndex = process.env.CHATFMT_JS_INDEX;
const chatfmt = chatfmtIndex ? await import(chatfmtIndex) : null;
const PINNED_NOW = "2026-03-14T15:09:26";

const engines = {
  ...(chatfmt && {
    "chatfmt-wasm": () => {
      const compiled = new Map();
      return (i) => {
        let t = compiled.get(texts[i]);
        if (!t) compiled.set(texts[i], (t = new chatfmt.Template(texts[i], { now: PINNED_NOW })));
        const c = cases[i];
        if (c.raw) return t.render(c.context);
        const { messages, ...options } = c.context;
        return t.applyChatTemplate(messages, options);
      };
    },
  }),
  "@huggingface/jinja": () => {
    const compiled = new Map();
    return (i) => {
      let t = compiled.get(texts[i]);
      if (!t) compiled.set(texts[i], (t = new Template(texts[i])));
      // (it defines raise_exception and strftime_now itself, and refuses a second
      // one: its clock is pinned below instead)
      return t.render(chatContext(cases[i]));
    };
  },
  "minijinja-js": () => {
    // A JS exception thrown through a render (raise_exception) leaves the
    // Environment borrowed ("recursive use of an object"): after any error
    // the next render starts from a fresh one.
    let env = null;
    let names = new Map();
    const fresh = () => {
      env = new Environment();
      env.trimBlocks = true;
      env.lstripBlocks = true;
      env.enablePyCompat();
      env.addGlobal("raise_exception", raiseException);
      env.addGlobal("strftime_now", strftimeNow);
      names = new Map();
    };
    return (i) => {
      if (!env) fresh();
      try {
        let name = names.get(texts[i]);
        if (!name) {
          name = `t${names.size}`;
          env.addTemplate(name, texts[i]);   // (throws on a syntax error: not kept)
          names.set(texts[i], name);
        }
        return env.renderTemplate(name, chatContext(cases[i]));
      } catch (e) {
        env = null;
        throw e;
      }
    };
  },
};

const perRender = {};
for (const [label, make] of Object.entries(engines)) {
  let render;
  try {
    render = make();
  } catch (e) {
    console.log(`${label}: cannot start: ${e.message}`);
    continue;
  }
  let same = 0;
  const usable = [];   // cases whose template compiles in this engine (timed below)
  for (let i = 0; i < cases.length; i++) {
    let out = null;
    try {
      out = render(i);
      usable.push(i);
    } catch (e) {
      if (process.env.DEBUG) console.log(label, i, e.message);
      out = null;
    }
    if (refs[i].ok ? out === refs[i].output : out === null) same++;
  }
  // Timing needs no pinned clock (the pin would slow every Date the engine makes).
  const PinnedDate = globalThis.Date;
  globalThis.Date = RealDate;
  const runs = [];
  for (let r = 0; r < 5; r++) {
    const t0 = process.hrtime.bigint();
    for (let k = 0; k < repeat; k++) {
      for (const i of usable) {
        try {
          render(i);
        } catch {
          /* failing renders cost time too */
        }
      }
    }
    runs.push(Number(process.hrtime.bigint() - t0) / 1e3 / (repeat * Math.max(usable.length, 1)));
  }
  globalThis.Date = PinnedDate;
  runs.sort((a, b) => a - b);
  perRender[label] = runs[2];
  console.log(`${label}\tparity ${same}/${cases.length}\tus_per_render ${runs[2].toFixed(2)}`);
}
if (repeat > 0 && perRender["chatfmt-wasm"] && perRender["@huggingface/jinja"]) {
  const ratio = perRender["@huggingface/jinja"] / perRender["chatfmt-wasm"];
  console.log(`chatfmt-wasm vs @huggingface/jinja\t${ratio.toFixed(1)}x ${ratio > 1 ? "faster" : "slower"} per render (median of 5 rounds each)`);
}
