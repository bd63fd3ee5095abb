#!/usr/bin/env python3
"""reply_roundtrip.py — render an assistant turn with each seed template,
parse it back with `chatfmt parse`, and check the message survives.

Usage (from the repository root):
  python3 tests/reply_roundtrip.py [--chatfmt build/chatfmt] [--renderer chatfmt|oracle]
                                   [--shared ../shared] [-v]

For every assistant message of ../shared/conversations/*.json and every seed:
  prompt = render(messages before it, add_generation_prompt=True)
  full   = render(messages up to it,  add_generation_prompt=False)
  reply  = full minus prompt (minus the turn's end marker)
then `chatfmt parse --format F --tools T --prompt PROMPT REPLY` must give the
message back, up to what the template itself normalises:
  - content and reasoning are compared stripped; a template that does not
    write a field (reasoning of earlier turns, content parts it skips) is
    expected to come back empty; reasoning written inline as <think>..</think>
    in the content is expected as reasoning (every seed splits it out);
  - tool calls: names and arguments (as JSON values); ids only for command-a,
    whose template writes its own ("0", "1", ...);
and the streamed parse (--stream, 3-byte chunks) must reassemble to the
same message as the whole parse.
Renders that the template refuses (raise_exception), turns whose prompt is
not a prefix of the full render, and command-a tool calls outside its
documents branch (it cannot write them) are skipped and counted.
Exit status 0 when every compared turn matches and at least 20 were compared.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

SEEDS = {  # seed file -> (format, end-of-turn marker the model stops at)
    "glm45.jinja": ("glm45", ""),
    "toolcall-qwen3.jinja": ("hermes", "<|im_end|>\n"),
    "nanbeige.jinja": ("hermes", "<|im_end|>\n"),
    "reasoning-qwen25.jinja": ("hermes", "<|im_end|>\n"),
    "command-a-reasoning.jinja": ("command-a", ""),
}
WS = " \t\n\r\f\v"


class Renderer:
    def __init__(self, kind, chatfmt, shared):
        self.kind, self.chatfmt = kind, chatfmt
        if kind == "oracle":
            sys.path.insert(0, os.path.join(shared, "oracle"))
            import hf_render
            self.hf = hf_render

    def render(self, template_path, ctx):
        """Rendered text, or None when the template refuses."""
        if self.kind == "oracle":
            with open(template_path, encoding="utf-8") as f:
                text = f.read()
            try:
                return self.hf.render(text, ctx)
            except Exception:  # noqa: BLE001 - a refusing template is data
                return None
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as f:
            json.dump(ctx, f, ensure_ascii=False)
        try:
            r = subprocess.run([self.chatfmt, "render", template_path, f.name], capture_output=True)
        finally:
            os.unlink(f.name)
        return r.stdout.decode("utf-8") if r.returncode == 0 else None


def text_of(content):
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return content if isinstance(content, str) else ""


def expected(msg, reply, fmt):
    content = text_of(msg.get("content"))
    if msg.get("content") is None and "None" in reply:
        content = "None"        # Jinja prints a null content as "None" (glm45 does)
    reasoning = msg.get("reasoning_content") or ""
    if fmt != "command-a" and not reasoning and "</think>" in content:
        # inline reasoning: the <think> seeds split it out (command-a writes
        # it as response text, where <think> means nothing)
        reasoning = content.split("</think>")[0].split("<think>")[-1]
        content = content.split("</think>")[-1]
    content, reasoning = content.strip(WS), reasoning.strip(WS)
    if content and content not in reply:            # the template did not write it
        content = ""
    if reasoning and reasoning not in reply:
        reasoning = ""
    calls = []
    for tc in msg.get("tool_calls") or []:
        f = tc.get("function", tc)
        args = f.get("arguments")
        calls.append((f["name"], json.loads(args) if isinstance(args, str) else (args or {})))
    return content or None, reasoning or None, calls


def parse(chatfmt, fmt, tools, prompt, reply, stream):
    with tempfile.TemporaryDirectory() as d:
        paths = {}
        for name, data in (("prompt", prompt), ("reply", reply), ("tools", json.dumps(tools or []))):
            paths[name] = os.path.join(d, name)
            with open(paths[name], "w", encoding="utf-8") as f:
                f.write(data)
        cmd = [chatfmt, "parse", "--format", fmt, "--prompt", paths["prompt"]]
        if tools:
            cmd += ["--tools", paths["tools"]]
        if stream:
            cmd += ["--stream", "--chunk-bytes", "3"]
        r = subprocess.run(cmd + [paths["reply"]], capture_output=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.decode())
    out = r.stdout.decode("utf-8")
    return json.loads(out) if not stream else reassemble(out)


def reassemble(lines):
    msg = {"role": "assistant", "content": None, "reasoning_content": None}
    calls = []
    for line in lines.splitlines():
        delta = json.loads(line)["choices"][0]["delta"]
        for key in ("content", "reasoning_content"):
            if key in delta:
                msg[key] = (msg[key] or "") + delta[key]
        for tc in delta.get("tool_calls", []):
            if "id" in tc:
                assert tc["index"] == len(calls), "call header out of order"
                calls.append({"id": tc["id"], "type": "function",
                              "function": {"name": tc["function"]["name"], "arguments": ""}})
            calls[tc["index"]]["function"]["arguments"] += tc["function"].get("arguments", "")
        if "citations" in delta:
            msg.setdefault("citations", []).extend(delta["citations"])
    if calls:
        msg["tool_calls"] = calls
    if "citations" in msg:
        msg["citations"] = msg.pop("citations")
    return msg


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--chatfmt", default=os.path.join(ROOT, "build", "chatfmt"))
    ap.add_argument("--renderer", choices=["chatfmt", "oracle"], default=None)
    ap.add_argument("--shared", default=os.environ.get("CHATFMT_SHARED", os.path.join(ROOT, "..", "shared")))
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    renderer = Renderer(a.renderer or "chatfmt", a.chatfmt, a.shared)
    conv_dir = os.path.join(a.shared, "conversations")
    compared = matched = 0
    skipped = {}
    failures = []
    for conv_name in sorted(os.listdir(conv_dir)):
        with open(os.path.join(conv_dir, conv_name), encoding="utf-8") as f:
            conv = json.load(f)
        if conv.get("continue_final_message"):
            continue
        base = {k: v for k, v in conv.items() if k not in ("messages", "add_generation_prompt")}
        msgs = conv["messages"]
        for seed, (fmt, end) in SEEDS.items():
            tpath = os.path.join(a.shared, "seeds", seed)
            for i, msg in enumerate(msgs):
                if msg.get("role") != "assistant":
                    continue
                where = "%s %s #%d" % (conv_name, seed, i)
                prompt = renderer.render(tpath, dict(base, messages=msgs[:i], add_generation_prompt=True))
                full = renderer.render(tpath, dict(base, messages=msgs[:i + 1], add_generation_prompt=False))
                if prompt is None or full is None:
                    skipped["template refuses"] = skipped.get("template refuses", 0) + 1
                    continue
                if not full.startswith(prompt):
                    skipped["prompt not a prefix"] = skipped.get("prompt not a prefix", 0) + 1
                    continue
                reply = full[len(prompt):]
                if end and reply.endswith(end):
                    reply = reply[:-len(end)]
                content, reasoning, calls = expected(msg, reply, fmt)
                if any(name not in reply for name, _ in calls):
                    skipped["template drops the calls"] = skipped.get("template drops the calls", 0) + 1
                    continue
                got = parse(a.chatfmt, fmt, conv.get("tools"), prompt, reply, False)
                streamed = parse(a.chatfmt, fmt, conv.get("tools"), prompt, reply, True)
                got_calls = [(c["function"]["name"], json.loads(c["function"]["arguments"]))
                             for c in got.get("tool_calls", [])]
                problems = []
                if got["content"] != content:
                    problems.append("content %r != %r" % (got["content"], content))
                if got["reasoning_content"] != reasoning:
                    problems.append("reasoning %r != %r" % (got["reasoning_content"], reasoning))
                if got_calls != calls:
                    problems.append("calls %r != %r" % (got_calls, calls))
                if fmt == "command-a" and calls:
                    ids = [c["id"] for c in got["tool_calls"]]
                    if not all(x.isdigit() for x in ids):
                        problems.append("command-a ids %r are not the template's" % ids)
                if streamed != got:
                    problems.append("stream %r != whole %r" % (streamed, got))
                compared += 1
                if problems:
                    failures.append((where, reply, problems))
                else:
                    matched += 1
                    if a.v:
                        print("ok  ", where)
    for where, reply, problems in failures[:20]:
        print("FAIL", where, "\n  reply:", repr(reply[:300]))
        for p in problems:
            print("   ", p[:400])
    print("round trip (%s renderer): %d compared, %d matched; skipped: %s" % (
        renderer.kind, compared, matched, ", ".join("%s %d" % kv for kv in sorted(skipped.items())) or "none"))
    return 0 if compared == matched and compared >= 20 else 1


if __name__ == "__main__":
    sys.exit(main())
