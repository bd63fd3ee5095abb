// Reply parsing: parseReply and ReplyStream give exactly what the C CLI's
// `chatfmt parse --template T [--tools F]` (whole and --stream) prints, on the
// real model replies of ../shared/replies with their model's template.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { loadTemplate, parseReply, ReplyStream } from "../index.js";
import { SHARED, CHATFMT_BIN, readJsonl, figure } from "./helpers.mjs";

const files = ["cases.jsonl", "cases_option_dependent.jsonl"].map((f) => path.join(SHARED, "replies", f));
const missing = !fs.existsSync(CHATFMT_BIN) ? `${CHATFMT_BIN} not built (make)`
  : !files.every((f) => fs.existsSync(f)) ? `${SHARED}/replies not found (set CHATFMT_SHARED)` : null;

function templatePath(name) {
  if (!name) return null;
  for (const dir of ["corpus/templates", "corpus/more"]) {
    const p = path.join(SHARED, dir, name);
    if (fs.existsSync(p)) return p;
  }
  return null;
}

function cli(args, input) {
  // --no-stop: the CLI cuts a reply at the template's stop strings, as a
  // server stops generating there; parseReply reads the text it is given
  const run = spawnSync(CHATFMT_BIN, ["parse", "--no-stop", ...args, input], { encoding: "utf8" });
  return { status: run.status, out: run.stdout, err: run.stderr };
}

/** The --stream output's deltas (without the role and finish chunks), one JSON text per delta. */
function cliDeltas(out) {
  return out.split("\n").filter(Boolean).map((l) => JSON.parse(l).choices[0])
    .filter((ch) => ch.finish_reason === null && !ch.delta.role).map((ch) => JSON.stringify(ch.delta));
}

test("parseReply and ReplyStream equal the C CLI on every shared reply case", { skip: missing || false }, () => {
  const cases = files.flatMap(readJsonl);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "chatfmt-js-reply-"));
  const templates = new Map();
  let whole = 0;
  let streamed = 0;
  const bad = [];
  try {
    for (const c of cases) {
      const tpath = templatePath(c.template);
      const replyFile = path.join(tmp, "reply.txt");
      fs.writeFileSync(replyFile, c.text);
      const args = [];
      const options = {};
      if (tpath) {
        args.push("--template", tpath);
        if (!templates.has(tpath)) templates.set(tpath, loadTemplate(fs.readFileSync(tpath)));
        options.template = templates.get(tpath);
      }
      if (c.tools) {
        fs.writeFileSync(path.join(tmp, "tools.json"), JSON.stringify(c.tools));
        args.push("--tools", path.join(tmp, "tools.json"));
        options.tools = c.tools;
      }
      if (c.reasoning_open === true) {
        args.push("--reasoning-open");
        options.reasoningOpen = true;
      }
      if ((c.option_dependent || []).some((why) => why.startsWith("json_schema (response_format)"))) {
        args.push("--response-format", "json");
        options.responseFormat = { type: "json_schema" };
      }
      const want = cli(args, replyFile);
      assert.equal(want.status, 0, `${c.id}: ${want.err}`);
      const got = JSON.stringify(parseReply(c.text, options));
      if (got === want.out.trimEnd()) whole++;
      else bad.push(`${c.id}: whole: CLI ${want.out.trimEnd()} JS ${got}`);

      // streamed 7 bytes at a time on both sides
      const wantStream = cli([...args, "--stream", "--chunk-bytes", "7"], replyFile);
      assert.equal(wantStream.status, 0, `${c.id}: ${wantStream.err}`);
      const bytes = new TextEncoder().encode(c.text);
      const stream = new ReplyStream(options);
      const deltas = [];
      for (let i = 0; i < bytes.length; i += 7) deltas.push(...stream.feed(bytes.subarray(i, i + 7)));
      deltas.push(...stream.finish());
      stream.dispose();
      const gotStream = deltas.map((d) => JSON.stringify(d));
      if (JSON.stringify(gotStream) === JSON.stringify(cliDeltas(wantStream.out))) streamed++;
      else bad.push(`${c.id}: stream: CLI ${JSON.stringify(cliDeltas(wantStream.out))} JS ${JSON.stringify(gotStream)}`);
    }
  } finally {
    for (const t of templates.values()) t.dispose();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  figure(`replies ${whole}/${cases.length} whole, ${streamed}/${cases.length} streamed as the C CLI`);
  assert.deepEqual(bad.slice(0, 5), []);
});
