"""replylib.py — what the reply tests share: run `chatfmt parse` (whole or
streamed), rebuild the message from a stream of chat.completion.chunk lines,
and compare messages with JSON's types (true is not 1; 3 == 3.0).

Used by tests/reply_peer_cases.py and tests/reply_template_roundtrip.py.
"""
import hashlib
import json
import os
import re
import subprocess
import threading

TIMEOUT = 30   # seconds for one parse: the idle cost is a few milliseconds


class Parser:
    """`chatfmt parse` with files kept in TMP (tools and prompts by content)."""

    def __init__(self, chatfmt, tmp):
        self.chatfmt, self.tmp = chatfmt, tmp
        self.lock = threading.Lock()     # parses run from several threads
        self.help = subprocess.run([chatfmt, "parse", "--help"], capture_output=True,
                                   text=True).stdout + ""

    def has_option(self, flag):
        return re.search(r"(^|\s)" + re.escape(flag) + r"\b", self.help) is not None

    def file(self, data):
        """A file holding DATA (str or bytes), written once."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        path = os.path.join(self.tmp, hashlib.sha1(data).hexdigest())
        with self.lock:
            if not os.path.exists(path):
                with open(path, "wb") as f:
                    f.write(data)
        return path

    def command(self, template=None, tools=None, prompt=None, args=(), chunk=None):
        cmd = [self.chatfmt, "parse"]
        if template:
            cmd += ["--template", template]
        if tools:
            cmd += ["--tools", self.file(json.dumps(tools, ensure_ascii=False))]
        if prompt is not None:
            cmd += ["--prompt", self.file(prompt)]
        cmd += list(args)
        if chunk:
            cmd += ["--stream", "--chunk-bytes", str(chunk)]
        return cmd

    def parse(self, reply, chunk=None, **kw):
        """(message dict, None) or (None, why). chunk: streamed in chunks of that size."""
        cmd = self.command(chunk=chunk, **kw) + ["-"]
        try:
            r = subprocess.run(cmd, input=reply.encode("utf-8"), capture_output=True, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            return None, "timed out after %ds" % TIMEOUT
        if r.returncode != 0:
            return None, "exit %d: %s" % (r.returncode, r.stderr.decode("utf-8", "replace").strip()[:300])
        out = r.stdout.decode("utf-8", "replace")
        try:
            return (reassemble(out) if chunk else json.loads(out)), None
        except (ValueError, KeyError, IndexError, TypeError) as e:
            return None, "unreadable output (%s): %s" % (e, out[:300])


def reassemble(lines):
    """The message a client builds from chat.completion.chunk lines; raises
    ValueError where the stream breaks the protocol (a call's header twice or
    out of order, a name sent in pieces, arguments before the header)."""
    msg = {"role": "assistant", "content": None, "reasoning_content": None}
    calls, cites = [], []
    for line in lines.splitlines():
        if not line.strip():
            continue
        delta = json.loads(line)["choices"][0]["delta"]
        for key in ("content", "reasoning_content"):
            if delta.get(key) is not None:
                msg[key] = (msg[key] or "") + delta[key]
        for tc in delta.get("tool_calls") or []:
            i, f = tc["index"], tc.get("function") or {}
            if "id" in tc or "name" in f:
                if i != len(calls):
                    raise ValueError("call %d's header comes as call %d" % (i, len(calls)))
                calls.append({"id": tc.get("id"), "type": "function",
                              "function": {"name": f.get("name"), "arguments": ""}})
            elif i >= len(calls):
                raise ValueError("arguments of call %d before its header" % i)
            calls[i]["function"]["arguments"] += f.get("arguments") or ""
        cites += delta.get("citations") or []
    if calls:
        msg["tool_calls"] = calls
    if cites:
        msg["citations"] = cites
    return msg


def json_equal(a, b):
    """Equal as JSON values: types kept apart (true is not 1, "1" is not 1),
    numbers by value (3 == 3.0; a 60-digit integer equals its double)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, float) or isinstance(b, float):
            try:
                return float(a) == float(b)
            except OverflowError:
                return False
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def arguments_of(call):
    """A tool call's arguments as a JSON value (they come as a JSON string);
    the raw string when it is not JSON."""
    args = (call.get("function") or {}).get("arguments")
    if isinstance(args, str):
        try:
            return json.loads(args)
        except ValueError:
            return args
    return args


def same_message(a, b):
    """Two parses of one reply give the same message (streamed == whole):
    text fields exactly, calls by id, name and arguments."""
    if a is None or b is None:
        return a is b
    for key in ("content", "reasoning_content"):
        if (a.get(key) or "") != (b.get(key) or ""):
            return False
    ca, cb = a.get("tool_calls") or [], b.get("tool_calls") or []
    if len(ca) != len(cb):
        return False
    for x, y in zip(ca, cb):
        if x.get("id") != y.get("id") or x["function"].get("name") != y["function"].get("name"):
            return False
        if not json_equal(arguments_of(x), arguments_of(y)):
            return False
    return (a.get("citations") or []) == (b.get("citations") or [])


def stream_agrees(streamed, whole):
    """The streamed message is the whole parse's, or has more calls: the
    documented exception (include/chatfmt.h) for a call that breaks after
    the stream committed to it, which the stream closes as received where
    the whole parse puts it back into content (fuzz/fuzz_reply.c checks the
    same)."""
    if same_message(streamed, whole):
        return True
    return (streamed is not None and whole is not None and
            len(streamed.get("tool_calls") or []) > len(whole.get("tool_calls") or []))


def short(value, n=160):
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= n else text[:n - 3] + "..."


def known_ids(path, what):
    """Ids listed in KNOWN_DIFFERENCES.md as lines `- WHAT:<id> — reason`."""
    ids = {}
    if path and os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                m = re.match(r"- " + re.escape(what) + r":(\S+)\s*(.*)", line)
                if m:
                    ids[m.group(1)] = m.group(2).lstrip("—- ").strip()
    return ids
