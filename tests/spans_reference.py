#!/usr/bin/env python3
"""spans_reference.py — the {% generation %} spans transformers computes for
return_assistant_tokens_mask, for checking `chatfmt render --spans`.

Usage: spans_reference.py TEMPLATE CONTEXT.json
Prints the rendered text, a newline, then the spans as a JSON array
[{"start": S, "end": E}, ...] on the last line — the format of
`chatfmt render --spans`.

transformers' AssistantTracker (chat_template_utils.py) is re-expressed
here: the render runs through Template.generate(); each top-level chunk
Jinja2 yields is appended to a list; when a generation block finishes, its
span starts at the length (in characters) of the chunks yielded so far and
ends len(body) later. Spans are recorded only while the tracker is
"active", which transformers tests as `rendered_blocks or
generation_indices` — so a block that finishes before anything was yielded
is not recorded. Everything else (environment, globals, chat-mode
variables) comes from the oracle, ../shared/oracle/hf_render.py.
"""
import copy
import json
import os
import sys

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get("CHATFMT_SHARED", os.path.join(HERE, "..", "..", "shared"))
sys.path.insert(0, os.path.join(SHARED, "oracle"))
import hf_render  # noqa: E402  (the reference renderer)


class TrackingAssistantTracker(Extension):
    tags = {"generation"}

    def __init__(self, environment):
        super().__init__(environment)
        self.blocks = None
        self.spans = None

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_generation_support"), [], [], body).set_lineno(lineno)

    def _generation_support(self, caller):
        rv = caller()
        if self.blocks or self.spans:   # transformers' is_active()
            start = len("".join(self.blocks))
            self.spans.append((start, start + len(rv)))
        return rv


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        text = f.read()
    with open(argv[2], encoding="utf-8") as f:
        original = json.load(f)
    ctx = copy.deepcopy(original)
    env = hf_render.compile_template(text).environment
    tracked = jinja2.sandbox.ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True,
        extensions=[TrackingAssistantTracker, jinja2.ext.loopcontrols])
    tracked.filters["tojson"] = env.filters["tojson"]
    tracked.globals.update({k: env.globals[k] for k in ("raise_exception", "strftime_now")})
    tracker = next(e for e in tracked.extensions.values() if isinstance(e, TrackingAssistantTracker))
    template = tracked.from_string(text)
    messages = ctx.pop("messages")
    tools = ctx.pop("tools", None)
    documents = ctx.pop("documents", None)
    agp = ctx.pop("add_generation_prompt", False)
    if ctx.pop("continue_final_message", False):
        sys.stderr.write("spans_reference.py: continue_final_message is not supported here\n")
        return 2
    tracker.blocks, tracker.spans = [], []
    for chunk in template.generate(messages=messages, tools=tools, documents=documents,
                                   add_generation_prompt=agp, **ctx):
        tracker.blocks.append(chunk)
    out = "".join(tracker.blocks)
    # the oracle must agree on the text itself
    assert out == hf_render.render(text, original), "text differs from the oracle"
    spans = [{"start": s, "end": e} for s, e in tracker.spans]
    sys.stdout.write(out + "\n" + json.dumps(spans) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
