// The playground page: everything runs in the browser through the package
// (../index.js); no server beyond one that serves these files.
import { Template, loadTemplate, builtinNames, parseReply } from "../index.js";

const $ = (id) => document.getElementById(id);
const ui = {
  builtin: $("builtin"), file: $("file"), template: $("template"), sourceInfo: $("source-info"),
  messages: $("messages"), tools: $("tools"), agp: $("agp"), cfm: $("cfm"), thinking: $("thinking"),
  extra: $("extra"), error: $("error"), prompt: $("prompt"), promptInfo: $("prompt-info"),
  reply: $("reply"), parsed: $("parsed"), caps: $("caps"),
};

const EXAMPLE_MESSAGES = [
  { role: "system", content: "You are a helpful assistant." },
  { role: "user", content: "What is the weather in Paris?" },
];
const EXAMPLE_TOOLS = [{ type: "function", function: { name: "get_weather", description: "Get the weather",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }];
const EXAMPLE_REPLY = '<think>The user wants the weather.</think>\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';

// The template in use: a loaded source (built-in or file: it brings special
// tokens) as long as the text box still holds its text, else the box's text.
let loaded = null;
let current = null;
let compileError = null;

// Markup that tokenizers treat as special tokens in the templates people use.
const SPECIAL = /<\|[^|<>\s]{1,48}\|>|<｜[^｜\n]{1,48}｜>|\[gMASK\]|<sop>|<\/?s>|<(?:bos|eos|pad)>|<start_of_turn>|<end_of_turn>|<\/?(?:think|tool_call|tool_response|tools|arg_key|arg_value|answer)>|\[\/?(?:INST|TOOL_CALLS|AVAILABLE_TOOLS|TOOL_RESULTS|SYSTEM_PROMPT|THINK)\]/g;

function escapeHtml(s) {
  return s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
}

/** UTF-16 index of each code point offset (the library's spans count code points). */
function codePointToIndex(text) {
  const map = [0];
  let i = 0;
  for (const ch of text) {
    i += ch.length;
    map.push(i);
  }
  return (cp) => map[Math.min(cp, map.length - 1)];
}

/** The prompt as HTML: special tokens highlighted, {% generation %} spans shaded. */
function promptHtml(text, spans) {
  const at = codePointToIndex(text);
  const gen = spans.map(([s, e]) => [at(s), at(e)]);
  const cuts = new Set([0, text.length]);
  for (const [s, e] of gen) cuts.add(s).add(e);
  const tokens = [];
  for (const m of text.matchAll(SPECIAL)) {
    tokens.push([m.index, m.index + m[0].length]);
    cuts.add(m.index).add(m.index + m[0].length);
  }
  const points = [...cuts].sort((a, b) => a - b);
  let html = "";
  for (let k = 0; k + 1 < points.length; k++) {
    const [s, e] = [points[k], points[k + 1]];
    if (s === e) continue;
    let piece = escapeHtml(text.slice(s, e));
    if (tokens.some(([a, b]) => a <= s && e <= b)) piece = `<span class="tok">${piece}</span>`;
    if (gen.some(([a, b]) => a <= s && e <= b)) piece = `<span class="gen">${piece}</span>`;
    html += piece;
  }
  return html;
}

function showError(e, templateText) {
  ui.prompt.innerHTML = "";
  ui.promptInfo.textContent = "";
  let html = `<strong>${escapeHtml(e.name || "Error")}</strong>: ${escapeHtml(e.message || String(e))}`;
  if (e.lineno) {
    const line = (templateText.split("\n")[e.lineno - 1] ?? "").replace(/\r$/, "");
    const col = Math.max(1, e.column || 1);
    html += ` <span class="where">(line ${e.lineno}:${col})</span>` +
      `<pre class="line">${String(e.lineno).padStart(4)} | <u>${escapeHtml(line)}</u>\n` +
      `${" ".repeat(4)} | ${" ".repeat(col - 1)}^</pre>`;
  }
  ui.error.innerHTML = html;
  ui.error.style.display = "block";
}

function clearError() {
  ui.error.style.display = "none";
  ui.error.innerHTML = "";
}

function parseJson(text, what, fallback) {
  if (!text.trim()) return fallback;
  try {
    return JSON.parse(text);
  } catch (e) {
    throw Object.assign(new Error(`${what}: ${e.message}`), { name: "JSONDecodeError" });
  }
}

/** apply_chat_template's arguments from the boxes. */
function request() {
  const messages = parseJson(ui.messages.value, "messages", []);
  const tools = parseJson(ui.tools.value, "tools", null);
  const options = { ...parseJson(ui.extra.value, "other variables", {}), tools,
    add_generation_prompt: ui.agp.checked, continue_final_message: ui.cfm.checked };
  if (ui.thinking.value) options.enable_thinking = ui.thinking.value === "true";
  return { messages, options };
}

function compile() {
  if (current && current !== loaded) current.dispose();
  current = null;
  compileError = null;
  const text = ui.template.value;
  if (loaded && text === loaded.source) {
    current = loaded;
    ui.sourceInfo.textContent = `${loaded.kind}${loaded.name ? ` "${loaded.name}"` : ""}: its special tokens are defaults` +
      (loaded.warnings.length ? ` — ${loaded.warnings.join("; ")}` : "");
  } else {
    try {
      current = new Template(text);
    } catch (e) {
      compileError = e;
    }
    ui.sourceInfo.textContent = loaded ? "edited: rendered from the text box (no special tokens)" : "";
  }
  showCaps();
}

function render() {
  if (compileError) {
    ui.parsed.textContent = "";
    return showError(compileError, ui.template.value);
  }
  let req;
  try {
    req = request();
    const { text, spans } = current.renderWithSpans(req.messages, req.options);
    clearError();
    ui.prompt.innerHTML = promptHtml(text, spans);
    ui.prompt.dataset.rendered = String(Number(ui.prompt.dataset.rendered || 0) + 1);
    ui.promptInfo.textContent = `${text.length} characters, ${spans.length} generation span(s)`;
  } catch (e) {
    showError(e, current ? current.source : ui.template.value);
  }
  parse(req);
}

function parse(req) {
  if (!ui.reply.value || !current) {
    ui.parsed.textContent = "";
    return;
  }
  try {
    const tools = req ? req.options.tools : null;
    ui.parsed.textContent = JSON.stringify(parseReply(ui.reply.value, { template: current, tools }), null, 2);
  } catch (e) {
    ui.parsed.textContent = `${e.name}: ${e.message}`;
  }
}

function showCaps() {
  ui.caps.innerHTML = "";
  if (!current) return;
  let caps;
  try {
    caps = current.caps();
  } catch (e) {
    ui.caps.innerHTML = `<tr><td>${escapeHtml(e.name)}</td><td>${escapeHtml(e.message)}</td></tr>`;
    return;
  }
  ui.caps.innerHTML = Object.entries(caps).map(([k, v]) => {
    const cls = v === true ? "yes" : v === false ? "no" : "";
    const shown = typeof v === "string" ? v : JSON.stringify(v);
    return `<tr><td>${escapeHtml(k)}</td><td class="${cls}">${escapeHtml(shown)}</td></tr>`;
  }).join("");
}

function useLoaded(t) {
  if (loaded) loaded.dispose();
  if (current && current !== loaded) current.dispose();
  current = null;
  loaded = t;
  ui.template.value = t.source;
  compile();
  render();
}

let timer = 0;
function later(fn) {
  clearTimeout(timer);
  timer = setTimeout(fn, 120);
}

for (const name of builtinNames()) ui.builtin.add(new Option(name, name));
ui.builtin.addEventListener("change", () => {
  if (ui.builtin.value) useLoaded(loadTemplate(ui.builtin.value));
});
ui.file.addEventListener("change", async () => {
  const f = ui.file.files[0];
  if (!f) return;
  // a GGUF's metadata (and so its template) is at the start: the tensors are not needed
  const bytes = new Uint8Array(await f.slice(0, 64 << 20).arrayBuffer());
  try {
    useLoaded(loadTemplate(bytes, { name: f.name }));
    ui.builtin.value = "";
  } catch (e) {
    showError(e, "");
  }
});
ui.template.addEventListener("input", () => later(() => {
  ui.builtin.value = loaded && ui.template.value === loaded.source ? ui.builtin.value : "";
  compile();
  render();
}));
for (const el of [ui.messages, ui.tools, ui.extra]) el.addEventListener("input", () => later(render));
for (const el of [ui.agp, ui.cfm, ui.thinking]) el.addEventListener("change", render);
ui.reply.addEventListener("input", () => later(() => parse(safeRequest())));

function safeRequest() {
  try {
    return request();
  } catch {
    return null;
  }
}

ui.messages.value = JSON.stringify(EXAMPLE_MESSAGES, null, 2);
ui.tools.value = JSON.stringify(EXAMPLE_TOOLS);
ui.reply.value = EXAMPLE_REPLY;
ui.builtin.value = "toolcall-qwen3";
useLoaded(loadTemplate("toolcall-qwen3"));
document.body.dataset.ready = "true";
