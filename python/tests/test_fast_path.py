"""The one-call render path (cf_render_data): variables cross as Python
marshal data and the output comes back in a per-thread buffer. Whatever
the data, the result must be exactly what the JSON path gives (the path a
render falls back to when the marshal reader declines), and big outputs,
threads and errors must behave as on that path. Expected values come from
the binding's own JSON path or the reference renderer, never typed by hand."""
import collections
import enum
import os
import threading
import unittest
from concurrent.futures import ThreadPoolExecutor
from unittest import mock

from support import SHARED, chatfmt, conversations, hf_render, oracle_outcome, read, templates

template_module = chatfmt.template


def through_json(call):
    """call() with the native path off and the marshal encoder refusing
    everything: the JSON path."""
    def refuse(*args):
        raise ValueError("unmarshallable object")
    with mock.patch.object(template_module, "_marshal", refuse), \
            mock.patch.object(template_module, "_native", None):
        return outcome(call)


def through_marshal(call):
    """call() with the native path (_speedups) off: cf_render_data."""
    with mock.patch.object(template_module, "_native", None):
        return outcome(call)


def outcome(call):
    try:
        return "ok", call()
    except Exception as e:  # noqa: BLE001 - the error class and message are the outcome
        return "error", type(e).__name__, str(e)


@unittest.skipIf(chatfmt._lib.cf_render_data is None, "library without cf_render_data")
class FastPath(unittest.TestCase):
    def test_seeds_same_as_json_path(self):
        for tname, text in templates("seeds"):
            t = chatfmt.compile(text)
            for cname, ctx in conversations():
                with self.subTest(case=f"{tname}|{cname}"):
                    got = outcome(lambda: t.render(**ctx))
                    self.assertEqual(got, through_json(lambda: t.render(**ctx)))
                    self.assertEqual(got, through_marshal(lambda: t.render(**ctx)))

    def test_data_outside_the_json_model_falls_back(self):
        class Color(enum.IntEnum):
            RED = 1

        class Text(str):
            pass
        t = chatfmt.compile("{{ x | tojson }}|{{ x }}")
        values = [
            {1: "int key", "1": "str key"}, {None: 1, True: 2, 2.5: 3}, collections.OrderedDict(a=1),
            [Color.RED], Text("sub"), 2 ** 70, -2 ** 63, 2 ** 63 - 1, 2 ** 63,
            float("nan"), float("inf"), b"bytes", {1, 2}, "lone \ud800 surrogate", "\U0001f600 \u00e9",
            -0.0, 1e300, [None, True, False, 0, -1, 2 ** 31, "", {}], {"k": [[[]]]},
        ]
        shared = ["shared"]
        values.append([shared, shared, {"a": shared}])
        for v in values:
            with self.subTest(value=repr(v)[:60]):
                got = outcome(lambda: t.render_raw(x=v))
                self.assertEqual(got, through_json(lambda: t.render_raw(x=v)))
                self.assertEqual(got, through_marshal(lambda: t.render_raw(x=v)))

    @unittest.skipIf(hf_render is None, "no reference renderer")
    def test_tuples_stay_tuples(self):
        # JSON has no tuples; the native and marshal paths keep them, as Jinja2 sees them
        # (the JSON path, taken when other data is outside the JSON model, makes them lists)
        text = "{{ x }}|{{ x | tojson }}|{{ [x] }}|{{ {'k': x} }}|{{ x[:0] == () if x is not mapping }}"
        t = chatfmt.compile(text)
        for v in [("a", ("b", 1)), (), (5,), [(1, "x")], {"k": (1, 2)}]:
            with self.subTest(value=repr(v)):
                want = oracle_outcome(text, {"x": v}, raw=True)
                self.assertEqual(outcome(lambda: t.render_raw(x=v)), want)
                self.assertEqual(through_marshal(lambda: t.render_raw(x=v)), want)
                self.assertEqual(outcome(lambda: chatfmt.apply_chat_template(text, [], x=v)),
                                 oracle_outcome(text, {"messages": [], "x": v}))
        plus = "{{ x + (3,) }}"   # a tuple concatenates with a tuple only
        self.assertEqual(outcome(lambda: chatfmt.compile(plus).render_raw(x=(1, 2))), ("ok", "(1, 2, 3)"))
        self.assertEqual(oracle_outcome(plus, {"x": (1, 2)}, raw=True), ("ok", "(1, 2, 3)"))

    def test_nesting_past_the_depth_limit(self):
        deep = []
        for _ in range(600):
            deep = [deep]
        t = chatfmt.compile("{{ x | length }}")
        got = outcome(lambda: t.render_raw(x=deep))
        self.assertEqual(got, through_json(lambda: t.render_raw(x=deep)))
        self.assertEqual(got[:2], ("error", "LimitError"))

    def test_outputs_bigger_than_the_buffer(self):
        t = chatfmt.compile("{% for i in range(n) %}{% for j in range(100) %}{{ '%08d' % j }}\u00e9"
                            "{% endfor %}{% endfor %}")
        for n in (1, 200, 1, 3000, 1):   # 200 KB, then 3 MB: past the first buffers
            with self.subTest(n=n):
                want = "".join("%08d\u00e9" % j for j in range(100)) * n
                self.assertEqual(t.render_raw(n=n), want)

    def test_errors_same_as_json_path(self):
        for text in ["{{ missing.attr }}", "{{ raise_exception('no') }}", "{{ 1 / 0 }}", "{{ messages[5].content.x }}"]:
            t = chatfmt.compile(text)
            with self.subTest(template=text):
                got = outcome(lambda: t.render([{"role": "user", "content": "hi"}]))
                self.assertEqual(got[0], "error")
                self.assertEqual(got, through_json(lambda: t.render([{"role": "user", "content": "hi"}])))

    def test_threads_keep_their_own_buffers(self):
        t = chatfmt.compile(read(os.path.join(SHARED, "seeds", "glm45.jinja")))
        long_text = "{% for i in range(n) %}{{ i }},{% endfor %}"
        big = chatfmt.compile(long_text)
        jobs = [("conv", ctx) for _, ctx in conversations()] * 6 + [("big", n) for n in (30000, 1, 50000, 7)] * 3
        want = [outcome(lambda: t.render(**j)) if k == "conv" else outcome(lambda: big.render_raw(n=j))
                for k, j in jobs]
        barrier = threading.Barrier(4)

        def one(job):
            kind, j = job
            if kind == "conv":
                return outcome(lambda: t.render(**j))
            return outcome(lambda: big.render_raw(n=j))

        def run_all(chunk):
            barrier.wait()
            return [one(job) for job in chunk]
        chunks = [jobs[i::4] for i in range(4)]
        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(run_all, chunks))
        for i, chunk_results in enumerate(results):
            self.assertEqual(chunk_results, want[i::4])

    @unittest.skipIf(hf_render is None, "reference renderer unavailable")
    def test_raw_and_chat_modes_against_the_oracle(self):
        text = "{{ a }}-{{ b | tojson }}-{{ messages is defined }}-{{ c[1] }}"
        variables = {"a": "x\u00e9", "b": [1, {"c": None, "d": 1.5}], "c": ("t", "u")}
        self.assertEqual(("ok", chatfmt.compile(text).render_raw(**variables)), oracle_outcome(text, variables, True))
        name, ctx = conversations()[3]
        seed = read(os.path.join(SHARED, "seeds", "toolcall-qwen3.jinja"))
        self.assertEqual(("ok", chatfmt.apply_chat_template(seed, **ctx)), oracle_outcome(seed, ctx))


class NativePath(unittest.TestCase):
    """The C render path (_speedups.c) is used when built: the test run
    that builds it sets CHATFMT_EXPECT_SPEEDUPS=1, and a run with
    CHATFMT_NO_SPEEDUPS=1 checks the paths without it."""

    def test_used_when_expected(self):
        if os.environ.get("CHATFMT_NO_SPEEDUPS"):
            self.assertIsNone(template_module._native)
        elif os.environ.get("CHATFMT_EXPECT_SPEEDUPS"):
            self.assertIsNotNone(template_module._native, "python/chatfmt/_speedups was built but not used")
        else:
            self.skipTest("neither CHATFMT_EXPECT_SPEEDUPS nor CHATFMT_NO_SPEEDUPS set")

    @unittest.skipIf(template_module._native is None, "_speedups not built or disabled")
    def test_declines_what_it_cannot_read_exactly(self):
        r, declined = template_module._native.render, template_module._DECLINED
        t = chatfmt.compile("{{ x }}")
        ptr, opts = t._plain.ptr, t._raw_options_addr
        self.assertEqual(r(ptr, opts, False, {"x": "\u00e9"}), "\u00e9")
        for v in [float("nan"), 2 ** 63, "lone \ud800", {1: 2}, (lambda: 0), b"b"]:
            with self.subTest(value=repr(v)):
                self.assertIs(r(ptr, opts, False, {"x": v}), declined)
                self.assertIs(template_module._native.chat(ptr, t._options_addr, {"x": v}, [], None, None,
                                                           False, False), declined)
        bad = chatfmt.compile("{{ 1 / 0 }}")
        kind, message, line, column, offset = r(bad._plain.ptr, opts, False, {})
        self.assertEqual((chatfmt._lib.cf_error_kind_name(kind).decode(), message, line), ("ZeroDivisionError", "division by zero", 1))

    @unittest.skipIf(template_module._native is None, "_speedups not built or disabled")
    def test_chat_arguments_are_the_variables_render_builds(self):
        """_native.chat walks kwargs then the five chat arguments: the same
        variables, in the same order, as the dict the general path builds."""
        t = chatfmt.compile("{% for m in messages %}{{ m.content }}{% endfor %}|{{ extra }}|{{ tools | tojson }}|"
                            "{{ documents }}|{{ add_generation_prompt }}|{{ continue_final_message is defined }}")
        kwargs = {"extra": [1, {"a": None}], "bos_token": "<s>"}
        args = ([{"role": "user", "content": "hi"}], [{"type": "function"}], None, None, True)   # chat_template=None, agp
        got = outcome(lambda: t.render(*args, **kwargs))
        self.assertEqual(got, through_marshal(lambda: t.render(*args, **kwargs)))
        self.assertEqual(got[0], "ok")
        failing = chatfmt.compile("{{ x.y.z }}")
        got = outcome(lambda: failing.render([], name="n"))
        self.assertEqual(got[0], "error")
        self.assertEqual(got, through_marshal(lambda: failing.render([], name="n")))

    @unittest.skipIf(not getattr(template_module, "_native_apply", False), "_speedups not built or disabled")
    def test_front_door_answers_as_the_general_function(self):
        """chatfmt.apply_chat_template is _speedups' C front door: every call
        must answer (text or exception) exactly as template.py's function,
        whichever of them handles it."""
        front, general = chatfmt.apply_chat_template, template_module._apply_general
        self.assertIsNot(front, general)
        for tname, text in templates("seeds"):
            for cname, ctx in conversations():
                with self.subTest(case=f"{tname}|{cname}"):
                    want = outcome(lambda: general(text, **ctx))
                    self.assertEqual(outcome(lambda: front(text, **ctx)), want)
                    self.assertEqual(outcome(lambda: front(text, **ctx)), want)   # now a known text
                    copy = "".join(list(text))   # an equal str, another object: found by value
                    self.assertEqual(outcome(lambda: front(copy, **ctx)), want)
        text = "{{ messages|length }}|{{ tools }}|{{ documents }}|{{ add_generation_prompt }}|" \
               "{{ continue_final_message }}|{{ x | default('-') }}|{{ y is defined }}"
        msgs = [{"role": "user", "content": "hi"}]
        calls = [
            ((text, msgs), {}),
            ((text,), {"messages": msgs, "x": 1}),
            ((), {"template": text, "messages": msgs, "tools": [{"a": 1}], "y": None}),
            ((text, msgs, None, [{"d": 1}], True, False), {"x": "k"}),
            ((text, msgs, None, None, False, False, "extra"), {}),    # too many arguments
            ((text, msgs), {"messages": msgs}),                        # given twice
            ((text,), {}),                                             # no messages
            ((text, [msgs, msgs]), {"add_generation_prompt": True}),   # a batch
            ((text, []), {}),
            ((text, ({"role": "user", "content": "t"},)), {}),         # a tuple
            ((text, msgs), {"x": float("nan")}),                       # declined by the walk
            ((text, msgs), {"x": 2 ** 70}),
            ((text, msgs), {"x": {1: 2}}),
            (("{{ 1/0 }}", msgs), {}),                                 # a render error
            (("{{ raise_exception('no') }}", msgs), {}),
            (("{% if %}", msgs), {}),                                  # a compile error
            ((42, msgs), {}),
        ]
        for args, kwargs in calls:
            with self.subTest(args=repr(args)[:80], kwargs=repr(kwargs)[:80]):
                want = outcome(lambda: general(*args, **kwargs))
                for _ in range(2):
                    self.assertEqual(outcome(lambda: front(*args, **kwargs)), want)

    @unittest.skipIf(not getattr(template_module, "_native_apply", False), "_speedups not built or disabled")
    def test_template_render_in_c_answers_as_the_python_method(self):
        """Template.render is a C method too: every call answers as the
        Python method it stands in for (Template._render_py)."""
        general = chatfmt.Template._render_py
        self.assertIsNot(chatfmt.Template.render, general)
        for tname, text in templates("seeds"):
            t = chatfmt.compile(text)
            for cname, ctx in conversations():
                with self.subTest(case=f"{tname}|{cname}"):
                    self.assertEqual(outcome(lambda: t.render(**ctx)), outcome(lambda: general(t, **ctx)))
        t = chatfmt.compile("{{ messages|length }}|{{ tools }}|{{ documents }}|{{ add_generation_prompt }}|"
                            "{{ continue_final_message }}|{{ template | default('-') }}|{{ y is defined }}")
        msgs = [{"role": "user", "content": "hi"}]
        calls = [
            ((msgs,), {}), ((), {"messages": msgs, "template": "a variable here"}),
            ((msgs, [{"a": 1}], [{"d": 1}], None, True, False), {"y": 1}), ((msgs, None, None, None, False, False, 6), {}),
            ((msgs,), {"tokenize": False, "return_dict": False, "chat_template": None, "tokenizer": None}),
            ((msgs,), {"conversation": msgs}), ((), {"conversation": msgs, "continue_final_message": True}),
            ((msgs,), {"messages": msgs}), ((), {}), (([msgs, msgs],), {}), (([],), {}),
            ((msgs,), {"y": float("nan")}), ((msgs,), {"y": 2 ** 70}), (((m for m in msgs),), {}),
        ]
        for args, kwargs in calls:
            with self.subTest(args=repr(args)[:80], kwargs=repr(kwargs)[:80]):
                self.assertEqual(outcome(lambda: t.render(*args, **kwargs)), outcome(lambda: general(t, *args, **kwargs)))
        bad = chatfmt.compile("{{ 1 / 0 }}")
        self.assertEqual(outcome(lambda: bad.render(msgs)), outcome(lambda: general(bad, msgs)))
        self.assertEqual(outcome(lambda: bad.render(msgs))[1], "ZeroDivisionError")

    @unittest.skipIf(not getattr(template_module, "_native_apply", False), "_speedups not built or disabled")
    def test_front_door_keeps_its_templates_alive(self):
        """The front door holds what it renders: texts registered and then
        forgotten by Python, renders from threads while others register."""
        msgs = [{"role": "user", "content": "x"}]
        texts = ["{{ messages[0].content }}-" + str(i) + "{% if true %}{% endif %}" for i in range(300)]
        for _ in range(2):
            for i, t in enumerate(texts):
                self.assertEqual(chatfmt.apply_chat_template(t, msgs), f"x-{i}")
        template_module._by_text.clear()
        with ThreadPoolExecutor(4) as pool:
            got = list(pool.map(lambda t: chatfmt.apply_chat_template(t, msgs), texts * 3))
        self.assertEqual(got, [f"x-{i}" for i in range(300)] * 3)


if __name__ == "__main__":
    unittest.main()
