// The playground in a real browser: headless Chromium (Debian's) driven by
// playwright-core loads js/playground/ from a loopback server, renders a seed
// case typed into the page, and the prompt read back from the DOM must be the
// reference's text. Also: highlighted special tokens, the caps table, the
// parsed reply, an error shown at its line:column, and a built-in's
// {% generation %} spans shaded as the package computes them. Screenshots go to
// $BUILD/playground.png and $BUILD/playground-error.png.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { JS_DIR, REPO, BUILD, readJsonl, figure } from "./helpers.mjs";

const deps = process.env.CHATFMT_JS_DEPS; // node_modules with playwright-core (js/tools/ensure_test_deps.sh)
let playwright = null;
let why = null;
if (!fs.existsSync("/usr/bin/chromium")) why = "/usr/bin/chromium not installed (js/tools/ensure_test_deps.sh installs it)";
else {
  try {
    playwright = deps ? await import(pathToFileURL(path.join(deps, "playwright-core", "index.mjs")).href)
      : await import("playwright-core");
  } catch (e) {
    why = `playwright-core not found (${e.code || e.message}); js/tools/ensure_test_deps.sh installs it`;
  }
}

const TYPES = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm",
  ".css": "text/css", ".json": "application/json" };

/** A static server for js/ on 127.0.0.1 (a random port). */
function serve() {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    const file = path.join(JS_DIR, path.normalize(decodeURIComponent(url.pathname)));
    if (!file.startsWith(JS_DIR) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": TYPES[path.extname(file)] || "application/octet-stream" });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

test("playground: a seed renders in headless Chromium exactly as the reference", { skip: why || false, timeout: 120000 }, async () => {
  // a seed case with tools and a generation prompt, and no clock (the page does not pin one)
  const cases = readJsonl(path.join(REPO, "tests/golden/seeds.cases.jsonl"));
  const expected = readJsonl(path.join(REPO, "tests/golden/seeds.expected.jsonl"));
  const i = cases.findIndex((c) => c.id === "toolcall-qwen3.jinja|03-tools-roundtrip.json");
  assert.ok(i >= 0 && expected[i].ok);
  const { messages, tools = null, add_generation_prompt = false, ...extra } = cases[i].context;

  const server = await serve();
  const browser = await playwright.chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync"],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const problems = [];
    page.on("pageerror", (e) => problems.push(e.message));
    await page.goto(`http://127.0.0.1:${server.address().port}/playground/index.html`);
    await page.waitForSelector("body[data-ready=true]", { timeout: 30000 });
    // the default view: a built-in with tools, a reply parsed, caps shown
    assert.ok(await page.locator("#prompt .tok", { hasText: "<|im_start|>" }).count() > 0, "special tokens highlighted");
    assert.match(await page.textContent("#caps"), /supports_tools\s*true/);
    const parsed = JSON.parse(await page.textContent("#parsed"));
    assert.equal(parsed.tool_calls[0].function.name, "get_weather");

    await page.fill("#messages", JSON.stringify(messages, null, 2));
    await page.fill("#tools", tools ? JSON.stringify(tools) : "");
    await page.fill("#extra", JSON.stringify(extra));
    await page.setChecked("#agp", !!add_generation_prompt);
    await page.fill("#template", cases[i].template_text);
    await page.waitForFunction((want) => document.querySelector("#prompt").textContent === want &&
      document.querySelector("#error").style.display !== "block", expected[i].output, { timeout: 30000 });
    assert.equal(await page.textContent("#prompt"), expected[i].output);
    await page.screenshot({ path: path.join(BUILD, "playground.png"), fullPage: true });

    await page.fill("#template", "{% for m in messages %}\n{{ m.content }\n{% endfor %}");
    await page.waitForSelector("#error u", { timeout: 30000 });
    const error = await page.textContent("#error");
    assert.match(error, /TemplateSyntaxError/);
    assert.match(error, /line 2:14/);
    assert.equal(await page.textContent("#error u"), "{{ m.content }");
    await page.screenshot({ path: path.join(BUILD, "playground-error.png") });
    // {% generation %} spans shaded, as the package computes them (tests/data/spans: multi-byte text in them)
    const spansDir = path.join(REPO, "tests/data/spans");
    const genText = fs.readFileSync(path.join(spansDir, "multibyte_loop.jinja"), "utf8");
    const { messages: genMessages, ...genOptions } = JSON.parse(fs.readFileSync(path.join(spansDir, "conversation.json"), "utf8"));
    await page.fill("#messages", JSON.stringify(genMessages));
    await page.fill("#tools", "");
    await page.fill("#extra", JSON.stringify(genOptions));
    await page.fill("#template", genText);
    await page.waitForSelector("#prompt .gen", { timeout: 30000 });
    const { Template: NodeTemplate } = await import("../index.js");
    const t = new NodeTemplate(genText);
    const { text, spans } = t.renderWithSpans(genMessages, { ...genOptions, add_generation_prompt: !!add_generation_prompt });
    t.dispose();
    const cps = [...text];
    const shaded = spans.map(([a, b]) => cps.slice(a, b).join(""));
    assert.ok(shaded.length > 0 && shaded.every((x) => x.length > 0));
    assert.deepEqual(await page.locator("#prompt .gen").allTextContents(), shaded);
    assert.equal(await page.textContent("#prompt"), text);
    assert.deepEqual(problems, []);
    figure(`playground: ${cases[i].id} rendered in Chromium ${browser.version()} as the reference (${expected[i].output.length} chars)`);
  } finally {
    await browser.close();
    server.close();
  }
});
