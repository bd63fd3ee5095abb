// index.d.ts: it declares exactly what index.js exports, and a TypeScript
// user's file (test/types/use.ts) type-checks against it with tsc --strict.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import * as chatfmt from "../index.js";
import { JS_DIR } from "./helpers.mjs";

test("index.d.ts declares every export of index.js, and nothing else", () => {
  const dts = fs.readFileSync(path.join(JS_DIR, "index.d.ts"), "utf8");
  const declared = new Set([...dts.matchAll(/^export (?:declare )?(?:function|class|const) (\w+)/gm)].map((m) => m[1]));
  assert.deepEqual([...declared].sort(), Object.keys(chatfmt).sort());
});

const deps = process.env.CHATFMT_JS_DEPS; // node_modules with typescript (js/tools/ensure_test_deps.sh)
const tsc = deps && path.join(deps, "typescript", "bin", "tsc");
test("a TypeScript user's file type-checks with tsc --strict", {
  skip: !(tsc && fs.existsSync(tsc)) && "typescript not installed (js/tools/ensure_test_deps.sh installs it)" }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chatfmt-js-types-"));
  try {
    fs.mkdirSync(path.join(dir, "node_modules"));
    fs.symlinkSync(JS_DIR, path.join(dir, "node_modules", "chatfmt"));
    fs.copyFileSync(path.join(JS_DIR, "test", "types", "use.ts"), path.join(dir, "use.ts"));
    const run = spawnSync(process.execPath, [tsc, "--noEmit", "--strict", "--module", "nodenext", "--moduleResolution",
      "nodenext", "--target", "es2022", "--lib", "es2022,esnext.disposable,dom", "use.ts"], { cwd: dir, encoding: "utf8" });
    assert.equal(run.status, 0, run.stdout + run.stderr);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
