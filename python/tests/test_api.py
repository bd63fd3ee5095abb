"""The binding's API: compile/render, loaders, errors, options, threads.
Expected values come from the reference renderer or from the CLI built
from the same tree (never typed by hand)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest
from concurrent.futures import ThreadPoolExecutor

from support import HERE, REPO, SHARED, chatfmt, conversations, hf_render, oracle_outcome, read

BIN = os.environ.get("CHATFMT_BIN") or os.path.join(REPO, os.environ.get("BUILD", "build"), "chatfmt")
SEEDS = os.path.join(SHARED, "seeds")


def cli_render(template, context, *args):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(context, f)
    try:
        r = subprocess.run([BIN, "render", *args, template, f.name], capture_output=True)
    finally:
        os.unlink(f.name)
    if r.returncode:
        raise AssertionError(f"chatfmt render failed: {r.stderr.decode()}")
    return r.stdout.decode("utf-8")


ERROR_TEMPLATES = [
    "{{ missing.attr }}",
    "{% if %}",
    "{{ raise_exception('no system role') }}",
    "{{ 1 / 0 }}",
    "{{ messages[0]['nope'] ~ 1 }}{{ messages.nope.nope }}",
    "{{ 'a' + 1 }}",
    "{{ messages | unknownfilter }}",
    "{% for %}",
    "{{ (messages | first).content.foo() }}",
]


@unittest.skipIf(hf_render is None, "reference renderer unavailable")
class AgainstOracle(unittest.TestCase):
    def test_errors_same_class_and_message(self):
        ctx = {"messages": [{"role": "user", "content": "hi"}]}
        for text in ERROR_TEMPLATES:
            try:
                hf_render.render(text, ctx)
                want = None
            except Exception as e:  # noqa: BLE001
                want = (type(e).__name__, str(e))
            with self.subTest(template=text):
                self.assertIsNotNone(want)
                with self.assertRaises(chatfmt.ChatfmtError) as cm:
                    chatfmt.apply_chat_template(text, **ctx)
                self.assertEqual((type(cm.exception).__name__, str(cm.exception)), want)

    def test_raw_mode(self):
        text = "{{ a }}-{{ b | tojson }}-{{ messages is defined }}"
        variables = {"a": "x", "b": [1, {"c": None}]}
        self.assertEqual(chatfmt.compile(text).render_raw(**variables), hf_render.render(text, variables, True))

    def test_builtin_name_and_path_render_like_the_seed(self):
        name, ctx = conversations()[2]
        want = oracle_outcome(read(os.path.join(SEEDS, "glm45.jinja")), ctx)
        self.assertEqual(("ok", chatfmt.apply_chat_template("glm45", **ctx)), want)
        self.assertEqual(("ok", chatfmt.apply_chat_template(os.path.join(SEEDS, "glm45.jinja"), **ctx)), want)
        from pathlib import Path
        self.assertEqual(("ok", chatfmt.compile(Path(SEEDS) / "glm45.jinja").render(**ctx)), want)

    def test_batched_conversations(self):
        convs = [c["messages"] for _, c in conversations()[:4]]
        text = read(os.path.join(SEEDS, "toolcall-qwen3.jinja"))
        want = [hf_render.render(text, {"messages": m, "add_generation_prompt": True}) for m in convs]
        self.assertEqual(chatfmt.apply_chat_template(text, convs, add_generation_prompt=True), want)

    def test_compiled_template_is_reusable_and_thread_safe(self):
        t = chatfmt.compile(read(os.path.join(SEEDS, "nanbeige.jinja")))
        ctxs = [c for _, c in conversations()] * 8
        want = [oracle_outcome(t.source, c) for c in ctxs]

        def one(c):
            try:
                return "ok", t.render(**c)
            except chatfmt.ChatfmtError as e:
                return "error", type(e).__name__
        with ThreadPoolExecutor(4) as pool:
            self.assertEqual(list(pool.map(one, ctxs)), want)


class Api(unittest.TestCase):
    def test_exception_hierarchy(self):
        E = chatfmt
        self.assertTrue(issubclass(E.UndefinedError, E.TemplateRuntimeError))
        self.assertTrue(issubclass(E.TemplateRuntimeError, E.TemplateError))
        self.assertTrue(issubclass(E.TemplateAssertionError, E.TemplateSyntaxError))
        self.assertTrue(issubclass(E.TemplateSyntaxError, E.TemplateError))
        self.assertTrue(issubclass(E.TemplateError, E.ChatfmtError))
        self.assertTrue(issubclass(E.FilterArgumentError, E.TemplateRuntimeError))
        for name, builtin in (("TypeError", TypeError), ("KeyError", KeyError), ("ValueError", ValueError),
                              ("IndexError", IndexError), ("ZeroDivisionError", ZeroDivisionError),
                              ("IOError", OSError), ("JSONDecodeError", ValueError),
                              ("AssertionError", AssertionError)):
            self.assertTrue(issubclass(getattr(E, name), builtin), name)
            self.assertTrue(issubclass(getattr(E, name), E.ChatfmtError), name)

    def test_filter_argument_and_assertion_errors(self):
        # as Jinja2: dictsort(by=...) raises FilterArgumentError, truncate's checks AssertionError
        with self.assertRaises(chatfmt.FilterArgumentError) as cm:
            chatfmt.compile("{{ {'a': 1}|dictsort(by='z') }}").render_raw()
        self.assertEqual(str(cm.exception), 'You can only sort by either "key" or "value"')
        with self.assertRaises(chatfmt.AssertionError) as cm:
            chatfmt.compile("{{ 'abcdef'|truncate(1) }}").render_raw()
        self.assertEqual(str(cm.exception), "expected length >= 3, got 1")

    def test_syntax_error_location(self):
        with self.assertRaises(chatfmt.TemplateSyntaxError) as cm:
            chatfmt.compile("line one\n{% if %}")
        self.assertEqual(cm.exception.lineno, 2)
        self.assertIsNotNone(cm.exception.column)

    def test_spans_match_the_cli(self):
        name, ctx = conversations()[1]
        text = "{% for m in messages %}{% if m.role == 'assistant' %}{% generation %}{{ m.content }}" \
               "{% endgeneration %}{% else %}{{ m.content }}{% endif %}{% endfor %}"
        with tempfile.NamedTemporaryFile("w", suffix=".jinja", delete=False) as f:
            f.write(text)
        try:
            out = cli_render(f.name, ctx, "--spans")
        finally:
            os.unlink(f.name)
        body, spans = out.rsplit("\n", 2)[0], json.loads(out.rsplit("\n", 2)[1])
        got_text, got_spans = chatfmt.compile(text).render_with_spans(**ctx)
        self.assertEqual(got_text, body)
        self.assertEqual(got_spans, [(s["start"], s["end"]) for s in spans])
        self.assertTrue(got_spans)

    def test_tokenizer_config_tokens_and_tool_use(self):
        config = {"bos_token": "<B>", "eos_token": {"content": "<E>"},
                  "chat_template": [
                      {"name": "default", "template": "D{{ bos_token }}{{ messages|length }}{{ eos_token }}"},
                      {"name": "tool_use", "template": "T{{ bos_token }}{{ tools|length }}"}]}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "tokenizer_config.json")
            with open(path, "w") as f:
                json.dump(config, f)
            msgs = [{"role": "user", "content": "x"}]
            tools = [{"type": "function", "function": {"name": "f"}}]
            t = chatfmt.compile(path)
            self.assertEqual(t.kind, "tokenizer_config")
            for ctx in ({"messages": msgs}, {"messages": msgs, "tools": tools},
                        {"messages": msgs, "bos_token": "<override>"}):
                self.assertEqual(t.render(**ctx), cli_render(path, ctx), ctx)
                self.assertEqual(chatfmt.apply_chat_template(path, **ctx), cli_render(path, ctx), ctx)

    def test_broken_tool_use_template_fails_only_with_tools(self):
        config = {"chat_template": [{"name": "default", "template": "ok {{ messages | length }}"},
                                    {"name": "tool_use", "template": "{% if %}"}]}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "tokenizer_config.json")
            with open(path, "w") as f:
                json.dump(config, f)
            t = chatfmt.compile(path)
            self.assertEqual(t.render([]), cli_render(path, {"messages": []}))
            with self.assertRaises(chatfmt.TemplateSyntaxError):
                t.render([], tools=[])

    def test_limits(self):
        t = chatfmt.compile("{% for i in range(100000) %}{{ i }}{% endfor %}", limits={"max_steps": 1000})
        with self.assertRaises(chatfmt.LimitError):
            t.render([])
        with self.assertRaises(chatfmt.UsageError):
            chatfmt.compile("x", limits={"max_nonsense": 1})

    def test_now_pins_strftime(self):
        t = chatfmt.compile("{{ strftime_now('%Y-%m-%d %H:%M') }}", now="2024-02-29T23:58:00")
        self.assertEqual(t.render([]), "2024-02-29 23:58")

    def test_bad_inputs(self):
        with self.assertRaises(ValueError):   # NaN is not JSON: refused before the library
            chatfmt.apply_chat_template("{{ x }}", [], x=float("nan"))
        with self.assertRaises(chatfmt.KeyError):   # no messages (raw context in chat mode)
            chatfmt.compile("x")._run({}, True)
        with self.assertRaises(chatfmt.UnicodeDecodeError):
            chatfmt.compile(b"\xff{{ x }}")

    def test_library_lookup(self):
        env = dict(os.environ, CHATFMT_LIBRARY="/nonexistent/libchatfmt.so",
                   PYTHONPATH=os.path.join(REPO, "python"))
        r = subprocess.run([sys.executable, "-c", "import chatfmt"], cwd=HERE, env=env, capture_output=True)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(b"cannot find libchatfmt.so", r.stderr)
        env.pop("CHATFMT_LIBRARY")
        r = subprocess.run([sys.executable, "-c", "import chatfmt; print(chatfmt.library_path)"],
                           cwd=HERE, env=env, capture_output=True)
        if os.path.exists(os.path.join(REPO, "build", "libchatfmt.so")):
            self.assertEqual(r.stdout.decode().strip(), os.path.join(REPO, "build", "libchatfmt.so"))

    def test_caps_and_polyfill_match_the_cli(self):
        if chatfmt._lib.cf_caps_json is None:
            self.skipTest("library without cf_caps_json")
        for seed in ("glm45", "command-a-reasoning"):
            r = subprocess.run([BIN, "caps", seed], capture_output=True)
            if r.returncode:
                self.skipTest(f"{BIN} has no caps command")
            self.assertEqual(chatfmt.compile(seed).caps(), json.loads(r.stdout), seed)
        t = chatfmt.compile(os.path.join(SEEDS, "glm45.jinja"), polyfill=True)
        for name, ctx in conversations():
            with self.subTest(conversation=name):
                try:
                    got = t.render(**ctx)
                except chatfmt.ChatfmtError:
                    continue   # the CLI's error path is covered by its own tests
                self.assertEqual(got, cli_render(os.path.join(SEEDS, "glm45.jinja"), ctx, "--polyfill"))

    def test_versions_agree(self):
        import re
        header = re.search(r'#define CHATFMT_VERSION "([^"]+)"', read(os.path.join(REPO, "include", "chatfmt.h")))
        pyproject = re.search(r'^version = "([^"]+)"', read(os.path.join(REPO, "python", "pyproject.toml")), re.M)
        self.assertEqual(chatfmt.__version__, header.group(1))
        self.assertEqual(chatfmt.__version__, pyproject.group(1))

    def test_builtin_names(self):
        names = chatfmt.builtin_names()
        self.assertIn("glm45", names)
        r = subprocess.run([BIN, "list-templates"], capture_output=True)
        for n in names:
            self.assertIn(n.encode(), r.stdout)


if __name__ == "__main__":
    unittest.main()
