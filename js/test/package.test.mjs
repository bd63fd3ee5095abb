// The npm package as users get it: `npm pack`, installed offline into an
// empty folder, imported from `node -e`, renders a seed as the reference.
// And its size: WebAssembly + JavaScript under 1 MB.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { JS_DIR, REPO, readJsonl, figure } from "./helpers.mjs";

const noNpm = spawnSync("npm", ["--version"]).status !== 0 && "npm not found";

test("npm pack installs offline into an empty folder and renders a seed from node -e", { skip: noNpm || false, timeout: 120000 }, () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "chatfmt-js-pack-"));
  try {
    const pack = spawnSync("npm", ["pack", "--pack-destination", tmp, "--loglevel=error"], { cwd: JS_DIR, encoding: "utf8" });
    assert.equal(pack.status, 0, pack.stderr);
    const tgz = path.join(tmp, pack.stdout.trim().split("\n").pop());
    const app = path.join(tmp, "app");
    fs.mkdirSync(app);
    const install = spawnSync("npm", ["install", "--offline", "--no-audit", "--no-fund", "--loglevel=error", tgz],
      { cwd: app, encoding: "utf8" });
    assert.equal(install.status, 0, install.stderr);
    const cases = readJsonl(path.join(REPO, "tests/golden/seeds.cases.jsonl"));
    const expected = readJsonl(path.join(REPO, "tests/golden/seeds.expected.jsonl"));
    const i = cases.findIndex((c) => c.id === "glm45.jinja|03-tools-roundtrip.json");
    fs.writeFileSync(path.join(app, "case.json"), JSON.stringify(cases[i]));
    const script = 'import("chatfmt").then(({ applyChatTemplate }) => { const c = JSON.parse(require("fs").readFileSync("case.json", "utf8"));' +
      ' const { messages, ...options } = c.context; process.stdout.write(applyChatTemplate(c.template_text, messages, options)); })';
    const run = spawnSync(process.execPath, ["-e", script], { cwd: app, encoding: "utf8" });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, expected[i].output);
    const files = fs.readdirSync(path.join(app, "node_modules", "chatfmt"), { recursive: true });
    figure(`npm pack: ${path.basename(tgz)} ${(fs.statSync(tgz).size / 1024).toFixed(0)} KiB, installed offline (${files.length} files), renders ${cases[i].id} as the reference`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

test("WebAssembly + JavaScript under 1 MB", () => {
  const files = ["dist/chatfmt.wasm", "dist/chatfmt.mjs", "index.js"].map((f) => path.join(JS_DIR, f));
  const bytes = files.reduce((n, f) => n + fs.statSync(f).size, 0);
  figure(`size: wasm + JS ${(bytes / 1024).toFixed(0)} KiB (${files.map((f) => `${path.basename(f)} ${fs.statSync(f).size}`).join(", ")})`);
  assert.ok(bytes < 1000000, `${bytes} bytes`);
});
