#!/usr/bin/env python3
"""reply_peer_cases.py — the replies other projects' parser tests feed their
parsers (../shared/replies: llama.cpp's tests/test-chat.cpp, vLLM's
tests/tool_parsers and tests/reasoning), parsed by `chatfmt parse` as a user
would, and compared with what those tests assert.

Usage (from the repository root, after `make`):
  python3 tests/reply_peer_cases.py [--chatfmt build/chatfmt] [--shared ../shared]
        [--known tests/KNOWN_DIFFERENCES.md] [--min-matched N] [--min-strict N] [--show N]
        [--only TEXT] [--chunks 1,7] [--failures FILE] [--json FILE] [--peer CMD] [-j JOBS] [-v]

Which cases: every strict case of cases.jsonl (the test asserts the whole
message) whose template is in shared/corpus/templates or corpus/more, and the
cases of cases_option_dependent.jsonl whose option chatfmt has (OPTIONS below;
an option chatfmt lacks leaves its cases out, counted on the first line).
Each runs as
  chatfmt parse --template T [--tools F] [--reasoning-open | --prompt EMPTY] [-D K=V]... REPLY
with --reasoning-open when the case says the prompt left reasoning open, an
empty prompt when it says the prompt did not (and set no switch), and -D for
the template switches the test set (enable_thinking, vLLM's
chat_template_kwargs). What is compared is what the test asserts:
  - content and reasoning_content: "" and null are the same; compared after
    strip() where the test strips (whitespace_insensitive);
  - tool calls: count, names, arguments as JSON values (key order free; a
    "subset of keys" assertion checks only those keys); ids only where the
    test asserts one.
A case listed in tests/KNOWN_DIFFERENCES.md as `- reply:<id> — reason` is one
where chatfmt deliberately gives another message (the rule "nothing the model
wrote is lost" wins over a peer's convention); it still counts as not matched,
and the report says how many failures are listed and how many are not.

Prints one line per source and parser (with the format chatfmt detects for
its template), per source and per detected format, the first failures, and
last `reply cases: M/N matched (R) ...`. Exit status 0 when M >= --min-matched and the strict cases matched >= --min-strict.
--peer CMD scores another project's parser on the same cases instead
(bench/compare_peers.sh passes llama.cpp's); see run_peer for its protocol.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import replylib  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# option_dependent reasons (cases_option_dependent.jsonl) -> how chatfmt is
# told: (CLI flag it must have, extra arguments), or None when the option only
# shapes what the model may generate (a grammar), not how the reply is read.
# A reason missing here, or whose flag `chatfmt parse --help` does not list,
# leaves the case out.
OPTIONS = {
    # the server tells the parser the reply is the JSON answer (a fence around it is dropped)
    "json_schema (response_format) constrains the reply": ("--response-format", ["--response-format", "json"]),
    "tool_choice=COMMON_CHAT_TOOL_CHOICE_REQUIRED": None,
    "reasoning_format=none (reasoning left inline in content)": ("--reasoning-inline", ["--reasoning-inline"]),
    "reasoning_in_content=true": ("--reasoning-inline", ["--reasoning-inline"]),
    "parse_tool_calls=false": ("--no-tool-calls", ["--no-tool-calls"]),
}


def find_template(shared, name):
    for d in ("templates", "more"):
        path = os.path.join(shared, "corpus", d, name)
        if os.path.exists(path):
            return path
    return None


def load(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def option_args(case, parser):
    """Extra `chatfmt parse` arguments for an option-dependent case, or (None, why)."""
    args = []
    for reason in case.get("option_dependent") or []:
        if reason not in OPTIONS:
            return None, reason
        if OPTIONS[reason] is not None:
            flag, extra = OPTIONS[reason]
            if not parser.has_option(flag):
                return None, reason
            args += [a for a in extra if a not in args]
    return args, None


EMPTY_PROMPT = "(empty file)"


def case_args(case):
    """How the case's prompt state is told: --reasoning-open where the test's
    prompt left reasoning open; the template switches it set (-D); where the
    test says the prompt did not open reasoning and set no switch, an empty
    --prompt, so that a template whose own generation prompt opens reasoning
    does not override what the test states."""
    args = []
    opts = case.get("options") or {}
    switches = dict(opts.get("chat_template_kwargs") or {})
    if "enable_thinking" in opts:
        switches["enable_thinking"] = opts["enable_thinking"]
    if case.get("reasoning_open") is True:
        args.append("--reasoning-open")
    elif case.get("reasoning_open") is False and not switches:
        args += ["--prompt", EMPTY_PROMPT]
    for key, value in sorted(switches.items()):
        args += ["-D", "%s=%s" % (key, json.dumps(value))]
    return args


def text_differs(got, want, strip):
    got, want = got or "", want or ""
    if strip:
        got, want = got.strip(), want.strip()
    return got != want


def judge(case, msg):
    """What differs between MSG and what the case's test asserts ([] = match)."""
    want, asserted = case["expect"], set(case["asserted"])
    strip = bool(case.get("whitespace_insensitive"))
    problems = []
    for key in ("content", "reasoning_content"):
        if key in asserted and text_differs(msg.get(key), want.get(key), strip):
            problems.append("%s %s, want %s" % (key, replylib.short(msg.get(key)), replylib.short(want.get(key))))
    if any(a.startswith("content(falsy") for a in asserted) and msg.get("content"):
        problems.append("content %s, want none" % replylib.short(msg.get("content")))
    calls = msg.get("tool_calls") or []
    wcalls = want.get("tool_calls")
    whole = "tool_calls" in asserted          # llama.cpp: the whole list
    if "tool_calls.nonempty" in asserted and not calls:
        problems.append("no tool calls, want some")
    if wcalls is None or not (whole or any(a.startswith("tool_calls.") for a in asserted)):
        return problems
    if (whole or "tool_calls.count" in asserted) and len(calls) != len(wcalls):
        problems.append("%d tool calls %s, want %d %s" % (
            len(calls), replylib.short([c["function"].get("name") for c in calls]), len(wcalls),
            replylib.short([c.get("name") for c in wcalls])))
        return problems
    subset = any("subset of keys" in a for a in asserted)
    for i, (w, c) in enumerate(zip(wcalls, calls)):
        f = c.get("function") or {}
        if w.get("name") is not None and f.get("name") != w["name"]:
            problems.append("call %d name %s, want %s" % (i, replylib.short(f.get("name")), replylib.short(w["name"])))
        if w.get("arguments") is not None:
            got = replylib.arguments_of(c)
            if subset and isinstance(got, dict):
                got = {k: got[k] for k in w["arguments"] if k in got}
            if not replylib.json_equal(got, w["arguments"]):
                problems.append("call %d arguments %s, want %s" % (i, replylib.short(got), replylib.short(w["arguments"])))
        if w.get("id") and c.get("id") != w["id"]:
            problems.append("call %d id %s, want %s" % (i, replylib.short(c.get("id")), replylib.short(w["id"])))
    return problems                           # without a count asserted, only the listed calls are


def run_peer(cmd, todo):
    """Another project's parser on the cases: CMD reads JSON lines {"template",
    "tools", "reply", "kwargs"} and prints {"message": ...} or {"error": ...}
    for each. It learns whether the prompt opened reasoning from the template
    and the switches, as that project does."""
    lines = []
    for case, path, _ in todo:
        opts = case.get("options") or {}
        kwargs = dict(opts.get("chat_template_kwargs") or {})
        if "enable_thinking" in opts:
            kwargs["enable_thinking"] = opts["enable_thinking"]
        lines.append(json.dumps({"template": path, "tools": case.get("tools"), "reply": case["text"],
                                 "kwargs": kwargs}, ensure_ascii=False) + "\n")
    r = subprocess.run(cmd, shell=True, input="".join(lines).encode("utf-8"), capture_output=True)
    out = r.stdout.decode("utf-8", "replace").splitlines()
    if r.returncode != 0 or len(out) != len(todo):
        sys.exit("reply_peer_cases: the peer gave %d lines for %d cases (exit %d): %s" % (
            len(out), len(todo), r.returncode, r.stderr.decode("utf-8", "replace")[-500:]))
    rows = [json.loads(line) for line in out]
    return [(row.get("message"), row.get("error")) for row in rows]


def detected_format(chatfmt, template, cache):
    if template not in cache:
        r = subprocess.run([chatfmt, "caps", template], capture_output=True, text=True)
        try:
            cache[template] = json.loads(r.stdout).get("reply_format") or "?"
        except ValueError:
            cache[template] = "?"
    return cache[template]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--chatfmt", default=os.path.join(ROOT, "build", "chatfmt"))
    ap.add_argument("--shared", default=os.environ.get("CHATFMT_SHARED", os.path.join(ROOT, "..", "shared")))
    ap.add_argument("--known", default=os.path.join(ROOT, "tests", "KNOWN_DIFFERENCES.md"))
    ap.add_argument("--min-matched", type=int, default=0, help="fail below this many matched cases")
    ap.add_argument("--min-strict", type=int, default=0,
                    help="fail below this many matched strict cases of cases.jsonl")
    ap.add_argument("--show", type=int, default=10, help="failures printed (default 10)")
    ap.add_argument("--only", default=None, help="cases whose id, parser or template contains this")
    ap.add_argument("--failures", default=None, help="write every failure here, one per line")
    ap.add_argument("--json", default=None, help="write every compared case and its parse here")
    ap.add_argument("--peer", default=None, help="parse with another project's parser (see run_peer)")
    ap.add_argument("--chunks", default="", help="also stream each reply in chunks of these sizes (e.g. 1,7): "
                    "a case matches only if every stream equals the whole parse")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("-v", action="store_true", help="print every failure")
    a = ap.parse_args()

    replies = os.path.join(a.shared, "replies")
    main_cases = load(os.path.join(replies, "cases.jsonl"))
    optdep = load(os.path.join(replies, "cases_option_dependent.jsonl"))
    known = replylib.known_ids(a.known, "reply")
    tmp = tempfile.mkdtemp(prefix="chatfmt-reply-cases-")
    parser = replylib.Parser(a.chatfmt, tmp)

    todo, left_out = [], collections.Counter()
    for case in main_cases + optdep:
        if a.only and not any(a.only in (case.get(k) or "") for k in ("id", "parser", "template")):
            continue
        extra = []
        if "option_dependent" in case:
            extra, why = option_args(case, parser)
            if extra is None:
                left_out["option chatfmt lacks: " + why] += 1
                continue
        if not case.get("strict"):
            left_out["not strict (the test asserts part of the message)"] += 1
            continue
        path = find_template(a.shared, case["template"]) if case.get("template") else None
        if not path:
            left_out["no template of its family in the corpus"] += 1
            continue
        todo.append((case, path, extra + case_args(case)))

    def run(item):
        case, path, args = item
        args = [parser.file(b"") if x == EMPTY_PROMPT else x for x in args]
        msg, err = parser.parse(case["text"], template=path, tools=case.get("tools"), args=args)
        problems = judge(case, msg) if msg is not None else ["chatfmt failed: " + err]
        for k in chunks:
            smsg, serr = parser.parse(case["text"], chunk=k, template=path, tools=case.get("tools"), args=args)
            streams[0] += 1
            if replylib.stream_agrees(smsg, msg):   # replies may be cut off: the documented exception holds
                streams[1] += 1
            else:
                problems.append("streamed in %d-byte chunks: %s" % (
                    k, replylib.short(smsg) if smsg is not None else serr))
        return msg, err, problems

    chunks = [int(x) for x in a.chunks.split(",") if x.strip()] if not a.peer else []
    streams = [0, 0]    # streamed parses, equal to the whole parse (list: updated from threads, += is atomic enough under the GIL)
    if a.peer:
        results = [(msg, err, judge(case, msg) if msg is not None else ["the peer failed: " + err])
                   for (case, _, _), (msg, err) in zip(todo, run_peer(a.peer, todo))]
    else:
        with concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as pool:
            results = list(pool.map(run, todo))
    formats = {}
    for case, path, _ in todo:
        detected_format(a.chatfmt, path, formats)

    by_parser, by_source, by_format = (collections.OrderedDict() for _ in range(3))
    failures, rows = [], []
    matched = listed_failing = listed_matching = 0
    strict = [0, 0]   # the strict cases of cases.jsonl alone: matched, compared
    for (case, path, args), (msg, err, problems) in zip(todo, results):
        fmt = formats[path]
        ok = not problems
        matched += ok
        if "option_dependent" not in case:
            strict[0] += ok
            strict[1] += 1
        for table, key in ((by_parser, (case["source"], case["parser"], fmt)),
                           (by_source, case["source"]), (by_format, fmt)):
            t = table.setdefault(key, [0, 0])
            t[0] += ok
            t[1] += 1
        if case["id"] in known:
            if ok:
                listed_matching += 1
            else:
                listed_failing += 1
        elif not ok:
            failures.append((case, path, args, problems))
        rows.append({"id": case["id"], "ok": ok, "format": fmt, "args": args, "got": msg,
                     "problems": problems})
    shutil.rmtree(tmp, ignore_errors=True)

    print("peer test cases: %d in cases.jsonl, %d option-dependent; compared %d; left out: %s" % (
        len(main_cases), len(optdep), len(todo),
        "; ".join("%s %d" % kv for kv in sorted(left_out.items())) or "none"))
    print("%-10s %-52s %-11s %s" % ("source", "parser (the peer's)", "chatfmt", "matched"))
    for (source, name, fmt), (p, n) in sorted(by_parser.items()):
        print("%-10s %-52s %-11s %d/%d" % (source, name, fmt, p, n))
    print("per source: " + ", ".join("%s %d/%d" % (k, p, n) for k, (p, n) in sorted(by_source.items())))
    print("per chatfmt format: " + ", ".join("%s %d/%d" % (k, p, n) for k, (p, n) in sorted(by_format.items())))
    lines = []
    for case, path, args, problems in failures:
        cmd = ("the peer on %s" % os.path.basename(path) if a.peer else
               "chatfmt parse --template %s%s" % (os.path.basename(path), "".join(" " + x for x in args)))
        lines.append("FAIL %s [%s, %s] %s\n    reply: %s\n    %s" % (
            case["id"], case["parser"], formats[path], cmd, replylib.short(case["text"], 200),
            "\n    ".join(problems)))
    for line in lines[:None if a.v else a.show]:
        print(line)
    if len(lines) > a.show and not a.v:
        print("... %d more failures (-v or --failures FILE prints them all)" % (len(lines) - a.show))
    if a.failures:
        with open(a.failures, "w", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in lines))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, ensure_ascii=False, indent=1)
    unknown = sorted(set(known) - {c["id"] for c in main_cases + optdep})
    if unknown:
        print("note: %s lists ids that are no case: %s" % (a.known, ", ".join(unknown)))
    if listed_matching:
        print("note: %d cases listed in %s now match: drop them from the list" % (listed_matching, a.known))
    n = len(todo)
    print("strict cases of cases.jsonl: %d/%d matched (%.3f); option-dependent cases: %d/%d" % (
        strict[0], strict[1], strict[0] / max(strict[1], 1), matched - strict[0], n - strict[1]))
    streamed = "; streamed agrees with whole %d/%d" % (streams[1], streams[0]) if streams[0] else ""
    print("reply cases: %d/%d matched (%.3f), strict %d/%d%s; %d differ, %d of them listed in KNOWN_DIFFERENCES; "
          "threshold %d (strict %d)" % (matched, n, matched / max(n, 1), strict[0], strict[1], streamed, n - matched,
                                        listed_failing, a.min_matched, a.min_strict))
    return 0 if matched >= a.min_matched and strict[0] >= a.min_strict else 1


if __name__ == "__main__":
    sys.exit(main())
