// Shared by the tests: where the repository, the reference material and the
// CLI are, and how a reference result is compared with ours.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const JS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const REPO = path.resolve(JS_DIR, "..");
export const SHARED = path.resolve(REPO, process.env.CHATFMT_SHARED || "../shared");
export const BUILD = path.resolve(REPO, process.env.BUILD || "build");
export const CHATFMT_BIN = path.resolve(REPO, process.env.CHATFMT_BIN || path.join(BUILD, "chatfmt"));
export const NOW = "2026-03-14T15:09:26"; // the pinned clock of tests/run_tests.sh

export function readJsonl(file) {
  return fs.readFileSync(file, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
}

/** A figure for the runner's PASS line (tests/run_tests.sh reads this file). */
export function figure(text) {
  const file = process.env.CHATFMT_JS_FIGURES;
  if (file) fs.appendFileSync(file, text + "\n");
  console.log(text);
}

/** Our result in the reference's batch shape: {ok, output} or {ok: false, error_type, error}. */
export function asResult(fn) {
  try {
    return { ok: true, output: fn() };
  } catch (e) {
    if (!e || typeof e.kind !== "string") throw e; // not a chatfmt error: a bug in the wrapper
    return { ok: false, error_type: e.name, error: e.message };
  }
}

/** Same text, or the same error kind and message. */
export function sameResult(ref, got) {
  if (ref.ok) return got.ok && got.output === ref.output;
  return !got.ok && got.error_type === ref.error_type && got.error === ref.error;
}

export function templateText(c) {
  return c.template_text ?? fs.readFileSync(c.template, "utf8");
}

/** The JSON text of `key`'s value in one JSON Lines row, exactly as written
 * (JSON.parse would round integers beyond 2^53 and 1.0 to 1). */
export function rawField(line, key) {
  const marker = JSON.stringify(key) + ":";
  let i = line.indexOf(marker);
  if (i < 0) return null;
  i += marker.length;
  while (line[i] === " ") i++;
  const start = i;
  let depth = 0;
  for (; i < line.length; i++) {
    const ch = line[i];
    if (ch === '"') {
      for (i++; line[i] !== '"'; i++) if (line[i] === "\\") i++;
      if (depth === 0) return line.slice(start, i + 1);
    } else if (ch === "{" || ch === "[") {
      depth++;
    } else if (ch === "}" || ch === "]") {
      if (--depth === 0) return line.slice(start, i + 1);
      if (depth < 0) return line.slice(start, i).trim();
    } else if (ch === "," && depth === 0) {
      return line.slice(start, i).trim();
    }
  }
  return line.slice(start).trim();
}

/** Case ids left out of a table's ratio: `- unit:<id>` lines of tests/KNOWN_DIFFERENCES.md. */
export function knownIds() {
  const file = path.join(REPO, "tests", "KNOWN_DIFFERENCES.md");
  const ids = new Set();
  if (!fs.existsSync(file)) return ids;
  for (const m of fs.readFileSync(file, "utf8").matchAll(/^- unit:(\S+)/gm)) ids.add(m[1]);
  return ids;
}

/** Case ids whose error message alone may differ: `- message:<id>` lines. */
export function knownMessageIds() {
  const file = path.join(REPO, "tests", "KNOWN_DIFFERENCES.md");
  if (!fs.existsSync(file)) return new Set();
  return new Set([...fs.readFileSync(file, "utf8").matchAll(/^- message:(\S+)/gm)].map((m) => m[1]));
}

/** tests/parity.py's rule with --strict-messages: the same text, or both
 * fail (the same message when the kinds agree, unless the id is a known
 * message difference). */
export function parityMatch(ref, got, messageKnown = false) {
  if (ref.ok || got.ok) return sameResult(ref, got);
  if (ref.error_type === got.error_type) return ref.error === got.error || messageKnown;
  return true; // parity.py's "error-type-differs": counted, not a mismatch
}
