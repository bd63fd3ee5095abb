"""The binding for data pipelines: Template.render_batch (threads without
the GIL, results in order, error objects in place), pickling (by text,
name and options; compiled once per process), chatfmt.format_jsonl (the
CLI's dataset mode, same bytes). Expected values come from Template.render
and from the CLI built from the same tree."""
import json
import os
import pickle
import subprocess
import sys
import tempfile
import threading
import unittest

from support import REPO, SHARED, chatfmt, conversations, read, templates

import chatfmt.dataset as dataset_module
import chatfmt.template as template_module

BIN = os.environ.get("CHATFMT_BIN") or os.path.join(REPO, os.environ.get("BUILD", "build"), "chatfmt")


# one character of each str kind past ASCII (Latin-1, 2-byte, a CJK one, the last 2-byte, astral)
OTHER_CHARACTERS = ("\u00e9", "\u00ff", "\u0100", "\u4e2d", "\uffff", "\U0001F600")


def ascii_text(n, seed, step=7):
    """n printable ASCII characters that vary byte to byte (so that a block
    written out of place shows), from seed."""
    return "".join(chr(33 + (seed + step * i) % 94) for i in range(n))


def outcome(call):
    try:
        return "ok", call()
    except Exception as e:  # noqa: BLE001 - render_batch puts any row's exception in its place
        return "error", (type(e).__name__, str(e))


def as_outcome(x):
    if isinstance(x, BaseException):
        return "error", (type(x).__name__, str(x))
    return "ok", x


class RenderBatch(unittest.TestCase):
    def test_equals_render_row_by_row(self):
        """Seeds x conversations (and rows the C walk declines): each row's
        result is what Template.render gives, on 1 and 2 threads, in order."""
        rows = [ctx for _, ctx in conversations()]
        rows += [{"messages": [{"role": "user", "content": "x"}], "odd": {1, 2}},     # declined: a set
                 {"messages": [{"role": "user", "content": float("nan")}]},           # declined: NaN
                 {"messages": "not a list"}]
        rows = rows * 3
        for name, text in templates("seeds"):
            t = chatfmt.compile(text)
            want = [outcome(lambda: t.render(**r)) for r in rows]
            for threads in (1, 2):
                with self.subTest(template=name, threads=threads):
                    got = [as_outcome(x) for x in t.render_batch(rows, threads=threads)]
                    self.assertEqual(got, want)
            self.assertTrue(any(w[0] == "error" for w in want) and any(w[0] == "ok" for w in want))
            # a context without messages fails as in dataset mode
            self.assertEqual(as_outcome(t.render_batch([{"nothing": True}])[0]), ("error", ("KeyError", "'messages'")))

    def test_rows_that_fail_alike(self):
        """Rows that fail alike (a row object that comes again, or rows of
        the same fault) each get an exception object of their own, of the
        class, arguments and attributes Template.render raises, in their
        place among the texts, on 1 to 3 threads: the same error made once
        and copied, others made each (another message, line or class)."""
        t = chatfmt.compile("{% for m in messages %}{% if m.content == 'boom' %}{{ raise_exception('boom') }}"
                            "{% elif m.content == 'bad' %}{{ m.content + 1 }}{% elif m.content == 'key' %}"
                            "{{ {}['k'] }}{% endif %}{{ m.content }}{% endfor %}", name="alike")
        boom = [{"role": "user", "content": "boom"}]
        pool = [boom, [{"role": "user", "content": "ok"}], [{"role": "user", "content": "bad"}],
                [{"role": "user", "content": "key"}], [{"role": "user", "content": "boom"}]]
        rows = [pool[(i * 3) % len(pool)] for i in range(2000)] + [boom] * 50
        rows += [json.loads(json.dumps(r)) for r in rows[:200]]

        def raised(r):
            try:
                return t.render(r)
            except chatfmt.ChatfmtError as e:
                return e

        def fields(x):
            if not isinstance(x, BaseException):
                return x
            return (type(x), x.args, x.message, x.lineno, x.column, x.offset, x.name, str(x), vars(x))

        want = [fields(raised(r)) for r in rows]
        for threads in (1, 2, 3):
            with self.subTest(threads=threads):
                got = t.render_batch(rows, threads=threads)
                self.assertEqual([fields(x) for x in got], want)
                errors = [x for x in got if isinstance(x, BaseException)]
                self.assertEqual(len({id(e) for e in errors}), len(errors))
                self.assertGreater(len(errors), 1000)

    @unittest.skipIf(template_module._native is None, "_speedups not built or disabled")
    def test_error_objects_of_every_class_copied_or_made(self):
        """The error objects of rows that fail alike, whatever class the
        template's error maker gives (ones whose builtin base keeps fields
        of its own, AttributeError's name, OSError's errno, are made each
        time): the class, arguments and attributes it made, each row its
        own object."""
        t = chatfmt.compile("{{ raise_exception('boom') }}", name="n")
        rows = [[{"role": "user", "content": "x"}]] * 300
        for cls in (chatfmt.errors.TemplateError, chatfmt.errors.TypeError, chatfmt.errors.KeyError,
                    chatfmt.errors.AttributeError, chatfmt.errors.IOError, chatfmt.errors.MemoryError):
            with self.subTest(cls=cls.__name__):
                t._error_object = lambda kind, message, line, column, offset, cls=cls: cls(
                    message, line or None, column or None, offset or None, "n")
                got = t.render_batch(rows, threads=2)
                self.assertEqual(len({id(e) for e in got}), len(got))
                for e in got:
                    self.assertEqual((type(e), e.args, e.message, e.lineno, e.column, e.offset, e.name, vars(e)),
                                     (cls, ("boom",), "boom", 1, got[0].column, None, "n", vars(got[0])))

    def test_conversations_and_common_variables(self):
        t = chatfmt.compile("{{ bos_token }}{{ messages | length }}{{ add_generation_prompt }}{{ x | default('-') }}")
        convs = [[{"role": "user", "content": "a"}] * n for n in range(1, 40)]
        got = t.render_batch(convs, threads=2, bos_token="<s>", add_generation_prompt=True)
        self.assertEqual(got, [t.render(c, bos_token="<s>", add_generation_prompt=True) for c in convs])
        rows = [{"messages": c, "x": i} for i, c in enumerate(convs)]
        got = t.render_batch(rows, threads=2, x="common", bos_token="B")
        self.assertEqual(got, [t.render(r["messages"], x=i, bos_token="B") for i, r in enumerate(rows)])
        self.assertEqual(chatfmt.apply_chat_template(t, convs, bos_token="<s>"),
                         [t.render(c, bos_token="<s>") for c in convs])

    def test_tool_use_template_and_its_error(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "tokenizer_config.json")
            with open(path, "w") as f:
                json.dump({"bos_token": "<s>", "chat_template": [
                    {"name": "default", "template": "D{{ bos_token }}"},
                    {"name": "tool_use", "template": "T{{ tools | length }}"}]}, f)
            t = chatfmt.compile(path)
            rows = [{"messages": []}, {"messages": [], "tools": [{}]}, {"messages": [], "tools": None}]
            self.assertEqual(t.render_batch(rows, threads=2), ["D<s>", "T1", "D<s>"])
            with open(path, "w") as f:
                json.dump({"chat_template": [{"name": "default", "template": "D"},
                                             {"name": "tool_use", "template": "{% if %}"}]}, f)
            t = chatfmt.compile(path)
            got = t.render_batch(rows)
            self.assertEqual(got[0], "D")
            self.assertIsInstance(got[1], chatfmt.TemplateSyntaxError)

    def test_repeated_row_objects_and_every_text_kind(self):
        """Rows that are the same objects many times over (render_batch
        builds such a row's variables once per call) and outputs of every
        str kind (ASCII, Latin-1, BMP, astral; outputs too long for a row
        slot; errors; rows the C walk declines), over many windows: each
        result is what Template.render gives. A change to a row object
        between two calls shows in the second."""
        t = chatfmt.compile("{% for m in messages %}{% if m.content == 'boom' %}{{ raise_exception('boom') }}"
                            "{% endif %}{{ m.role }}:{{ m.content }}|{% endfor %}{{ x | default('') }}")
        contents = ["", "plain", "caf\u00e9 \u00ff", "\u4e2d\u6587 \u00e9", "\U0001F600 and \u4e2d",
                    "x" * 40000 + "\u00e9", "\u4e2d" * 20000, "\U0001F600" * 9000, "boom", "\u07ff\u0800\uffff"]
        pool = []
        for i, c in enumerate(contents):
            conv = [{"role": "user", "content": c}, {"role": "assistant", "content": str(i)}]
            pool += [conv, {"messages": conv, "x": i}]
        pool.append({"messages": [{"role": "user", "content": "s"}], "odd": {1}})   # declined: a set
        rows = [pool[(i * 5) % len(pool)] for i in range(3000)]   # (5: every pool member, 21 of them)
        self.assertEqual(len({id(r) for r in rows}), len(pool))

        def one(r):
            return outcome(lambda: t.render(**r) if isinstance(r, dict) else t.render(r))

        want = {id(r): one(r) for r in pool}
        for threads in (1, 2):
            with self.subTest(threads=threads):
                got = t.render_batch(rows, threads=threads)
                self.assertEqual([as_outcome(x) for x in got], [want[id(r)] for r in rows])
                self.assertTrue(all(type(x) is str for x in got if not isinstance(x, BaseException)))
        pool[1]["x"] = "changed"
        pool[0][0]["content"] = "now ASCII"
        got = t.render_batch(rows, threads=2)
        self.assertEqual(got[0], t.render(pool[0]))
        at = next(i for i, r in enumerate(rows) if r is pool[1])
        self.assertEqual(got[at], t.render(**pool[1]))
        self.assertIn("now ASCII|", got[at])
        self.assertIn("changed", got[at])

    def test_other_characters_at_every_offset_of_an_ascii_text(self):
        """The rendering threads make each output's str form from its
        first byte that is not ASCII on (the ASCII before it is copied a
        block at a time): one character of each str kind, alone or with
        a second of another kind later, at every offset of an ASCII text
        and its vector blocks' edges, on distinct rows; each result is
        Template.render's, in its canonical kind (else they compare
        unequal). The ASCII around them varies byte to byte, so that a
        block widened out of place shows."""
        t = chatfmt.compile("{{ messages[0].content }}|{{ messages | length }}")

        rows = []
        for c in OTHER_CHARACTERS:
            for before in list(range(0, 140)) + [191, 192, 255, 256, 1000]:
                for after in (0, 1, 15, 16, 17, 70):
                    text = ascii_text(before, 0) + c + ascii_text(after, 1)
                    rows.append([{"role": "user", "content": text}])
                    rows.append([{"role": "user", "content": text + "\u00e9" + ascii_text(before % 37, 2) + c}])
        want = [t.render(r) for r in rows]
        for threads in (1, 2, 3):
            with self.subTest(threads=threads):
                got = t.render_batch(rows, threads=threads)
                self.assertEqual(len(got), len(want))
                self.assertEqual([i for i, (g, w) in enumerate(zip(got, want)) if g != w], [])   # (no long diff)
                self.assertTrue(all(type(x) is str for x in got))

    def test_rows_read_by_the_rendering_threads_and_those_walked_under_the_gil(self):
        """Distinct row objects (read by the rendering threads) mixed with
        rows outside what those threads read (subclasses of dict and str,
        non-str keys, ints beyond int64, lone surrogates, deep nesting, rows
        that are neither dict nor list: walked under the GIL after the pass)
        and rows whose result is made after the pass (render errors, outputs
        too long for a row slot), over many windows: each result is what
        Template.render gives, in order."""
        import copy

        class D(dict):
            pass

        class S(str):
            pass

        t = chatfmt.compile("{% for m in messages %}{% if m.content == 'boom' %}{{ raise_exception('boom') }}"
                            "{% endif %}{% for k, v in m.items() %}{{ k }}={{ v }};{% endfor %}|{% endfor %}"
                            "{{ extra | default('') }}{{ tools | length if tools else '' }}")

        def nest(depth):
            v = "leaf"
            for _ in range(depth):
                v = [v]
            return v

        contents = ["plain", "caf\u00e9 \u00ff", "\u4e2d\u6587 \u00e9", "\U0001F600 and \u4e2d", "\u07ff\u0800\uffff",
                    "\x80\u0100", "boom", "x" * 40000, "\u4e2d" * 20000, 7, 2 ** 63 - 1, -2 ** 63, 2 ** 63, 2 ** 70,
                    -2 ** 80, 1.5, True, None, [1, "a", (2, "b")], ("tu", "ple"), {"k": {"n": [None, False]}},
                    S("str subclass"), nest(150), nest(199), nest(260), float("inf")]
        rows = []
        for i, c in enumerate(contents):
            msg = {"role": "user", "content": c}
            rows += [{"messages": [msg, {"role": "assistant", "content": str(i)}], "extra": i},
                     [msg], (msg,), {"messages": [D(msg)]}, D(messages=[msg]), {"messages": [msg], "tools": [{}]},
                     {"messages": [dict(msg, **{S("k"): 1})]}, {"messages": [{**msg, 3: "int key"}]}]
        rows += ["neither dict nor list", {"messages": [{"role": "user", "content": "u"}], S("extra"): "s"}]
        rows = [copy.deepcopy(r) for _ in range(4) for r in rows]   # distinct objects, subclasses kept

        def one(r):
            if isinstance(r, dict):
                return outcome(lambda: t.render(**r))
            return outcome(lambda: t.render(r))

        want = [one(r) for r in rows]
        self.assertTrue(any(w[0] == "error" for w in want) and any(w[0] == "ok" for w in want))
        for threads in (1, 2, 3):
            with self.subTest(threads=threads):
                got = t.render_batch(rows, threads=threads)
                self.assertEqual([as_outcome(x) for x in got], want)
        # a lone surrogate (no UTF-8): the general path's error; its position
        # in the JSON of the variables differs between the two calls' contexts
        rows = [{"messages": [{"role": "user", "content": "lone \ud800"}]}] * 2 + [[{"role": "user", "content": "\udfff"}]]
        got = [type(x) for x in t.render_batch(copy.deepcopy(rows), threads=2)]
        self.assertEqual(got, [type(e) for e in (self.raised(lambda: t.render(**rows[0])),) * 2 +
                               (self.raised(lambda: t.render(rows[2])),)])

    def test_many_texts_that_are_not_ascii_in_one_row(self):
        """Rows of many strings that are not ASCII (UCS-1, 2 and 4, short and
        long, between ASCII ones): their UTF-8 fills a row's buffer, which is
        fed and started again; each row's result is what Template.render
        gives, on 1 and 2 threads."""
        import copy
        t = chatfmt.compile("{% for m in messages %}{{ m.role }}:{{ m.content }}|{{ m.content | length }};{% endfor %}")
        pieces = ["caf\u00e9", "\u4e2d\u6587", "\U0001F600", "\u00ff" * 300, "\u4e2d" * 257, "\U0001F600" * 129, "ascii"]
        rows = []
        for i in range(60):
            msgs = [{"role": "r\u00f4le" if (i + j) % 3 == 0 else "user",
                     "content": pieces[(i + j) % len(pieces)] * (1 + (i * j) % 5) + str(j)} for j in range(i % 40 + 1)]
            rows.append({"messages": msgs})
        rows = [copy.deepcopy(r) for r in rows]
        want = [outcome(lambda: t.render(**r)) for r in rows]
        self.assertTrue(all(w[0] == "ok" for w in want))
        for threads in (1, 2):
            with self.subTest(threads=threads):
                self.assertEqual([as_outcome(x) for x in t.render_batch(rows, threads=threads)], want)

    def test_variables_not_ascii_at_every_length_and_offset(self):
        """The rendering threads convert a variable that is not ASCII to
        UTF-8 a word at a time (8 characters of one byte, 4 of two): one
        character of each kind, and a second one, at every offset of texts
        of every length around those words, and a lone surrogate at every
        offset (no UTF-8: the general path's error), on distinct rows; each
        result is what Template.render gives."""
        t = chatfmt.compile("{{ messages[0].content }}|{{ messages[0].content | length }}")

        rows = []
        for c in ("\u00e9", "\u00ff", "\u0100", "\u4e2d", "\uffff", "\U0001F600", "\ud800", "\udfff"):
            for n in range(1, 42):
                for at in range(n):
                    text = ascii_text(at, n, 5) + c + ascii_text(n - at - 1, at, 5)
                    rows.append([{"role": "user", "content": text}])
                    if at + 2 < n:
                        second = "\u00e0" if c < "\u0100" else "\u0101"
                        rows.append([{"role": "user", "content": text[:at + 2] + second + text[at + 3:]}])
        want = [outcome(lambda: t.render(r)) for r in rows]
        self.assertTrue(any(w[0] == "error" for w in want) and any(w[0] == "ok" for w in want))
        for threads in (1, 2):
            with self.subTest(threads=threads):
                got = [as_outcome(x) for x in t.render_batch(rows, threads=threads)]
                self.assertEqual([i for i, (g, w) in enumerate(zip(got, want)) if g != w], [])   # (no long diff)

    def test_ints_around_every_digit_count(self):
        """Exact ints on distinct rows (one digit is read in place, more
        through Python; past int64 the general path): 0, and either side of
        each power of two up to 2**70, both signs; each result is what
        Template.render gives."""
        t = chatfmt.compile("{% for m in messages %}{{ m.content }};{% endfor %}{{ n }}|{{ n | tojson }}")
        values = {0}
        for bits in range(71):
            for d in (-1, 0, 1):
                values |= {2 ** bits + d, -(2 ** bits + d)}
        rows = [{"messages": [{"role": "user", "content": v}], "n": [v, -v]} for v in sorted(values)]
        want = [outcome(lambda: t.render(**r)) for r in rows]
        for threads in (1, 2):
            with self.subTest(threads=threads):
                self.assertEqual([as_outcome(x) for x in t.render_batch(rows, threads=threads)], want)

    def test_dicts_of_every_table_layout(self):
        """Dicts as CPython lays them out: keys deleted (holes in the table),
        deleted and set again (moved to the end), an object's attribute dict
        (values apart from the keys), a dict that once held a non-str key,
        one grown past its first table, and keys of UCS-1/2/4 text: each row's
        result is what Template.render gives for a compact copy of the row,
        through Template.render and render_batch on 1 and 2 threads."""
        import copy

        class Message:
            def __init__(self, role, content):
                self.role = role
                self.content = content

        t = chatfmt.compile("{% for m in messages %}{% for k, v in m.items() %}{{ k }}={{ v }};{% endfor %}|"
                            "{% endfor %}{{ extra | default('') }}")
        rows = []
        for i in range(40):
            holes = {"role": "user", "gone": 1, "content": "c%d" % i, "also gone": 2, "name": "n"}
            del holes["gone"], holes["also gone"]
            moved = {"role": "assistant", "content": "x", "name": "m"}
            del moved["role"]
            moved["role"] = "assistant"
            attrs = vars(Message("user", "from attributes %d" % i))
            was_general = {1: "int", "role": "user", "content": "was general"}
            del was_general[1]
            grown = {"role": "user", "content": "grown"}
            grown.update(("k%d" % j, j) for j in range(i))
            other_keys = {"r\u00f4le": "user", "\u4e2d": "x", "\U0001F600": "y", "content": "z"}
            rows.append({"messages": [holes, moved, attrs, was_general, grown, other_keys], "extra": i})
        rows = [copy.deepcopy(r) for r in rows] + rows   # (deepcopy rebuilds each dict compact)
        # expected from compact copies (json.loads makes every dict anew): the
        # layouts under test are not what the expected results are read from
        want = [outcome(lambda: t.render(**json.loads(json.dumps(r)))) for r in rows]
        self.assertEqual(want, [outcome(lambda: t.render(**r)) for r in rows])   # (Template.render's walk)
        self.assertTrue(all(w[0] == "ok" for w in want))
        for threads in (1, 2):
            with self.subTest(threads=threads):
                self.assertEqual([as_outcome(x) for x in t.render_batch(rows, threads=threads)], want)

    @unittest.skipIf(template_module._native is None, "_speedups not built or disabled")
    def test_other_python_threads_run_during_a_long_call(self):
        """The calling thread holds the GIL while the rendering threads read
        rows, and lets other Python threads run between windows: another
        thread runs while the calling thread is inside the native call."""
        import inspect
        t = chatfmt.compile(read(os.path.join(SHARED, "seeds", "glm45.jinja")))
        base = [ctx for _, ctx in conversations()]
        rows = [json.loads(json.dumps(base[i % len(base)])) for i in range(20000)]
        lines, first = inspect.getsourcelines(template_module.Template.render_batch)
        call_line = first + next(i for i, x in enumerate(lines) if "_native.render_batch(" in x)
        main, seen, stop = threading.get_ident(), [], threading.Event()

        def watch():   # where the calling thread is, each time this thread runs
            while not stop.is_set():
                f = sys._current_frames().get(main)
                seen.append(f is not None and f.f_code is template_module.Template.render_batch.__code__
                            and f.f_lineno == call_line)

        helper = threading.Thread(target=watch)
        helper.start()
        try:
            got = t.render_batch(rows, threads=2)
        finally:
            stop.set()
            helper.join()
        self.assertEqual([as_outcome(x) for x in got[:len(base)]], [outcome(lambda: t.render(**r)) for r in base])
        self.assertTrue(any(seen), "no other thread ran during the native call")

    @unittest.skipIf(template_module._native is None, "_speedups not built or disabled")
    def test_rows_list_changing_size_during_the_call(self):
        """A thread that appends to the list of rows while the calling
        thread is inside the native call (it can only run between two
        windows): render_batch raises RuntimeError."""
        import inspect
        t = chatfmt.compile("{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}")
        rows = [{"messages": [{"role": "user", "content": "row %d" % i}]} for i in range(50000)]
        lines, first = inspect.getsourcelines(template_module.Template.render_batch)
        call_line = first + next(i for i, x in enumerate(lines) if "_native.render_batch(" in x)
        main, appended, stop = threading.get_ident(), [], threading.Event()

        def append_once():
            while not stop.is_set() and not appended:
                f = sys._current_frames().get(main)
                if f is not None and f.f_code is template_module.Template.render_batch.__code__ \
                        and f.f_lineno == call_line:
                    rows.append({"messages": []})
                    appended.append(True)

        helper = threading.Thread(target=append_once)
        helper.start()
        try:
            with self.assertRaisesRegex(RuntimeError, "changed size"):
                t.render_batch(rows, threads=2)
        finally:
            stop.set()
            helper.join()
        self.assertTrue(appended)
        rows.pop()
        self.assertEqual(t.render_batch(rows[:3]), [t.render(**r) for r in rows[:3]])

    def raised(self, call):
        try:
            call()
        except Exception as e:  # noqa: BLE001
            return e
        self.fail("no exception")

    def test_many_python_threads_at_once(self):
        t = chatfmt.compile(read(os.path.join(SHARED, "seeds", "glm45.jinja")))
        rows = [ctx for _, ctx in conversations()] * 20
        want = [as_outcome(x) for x in t.render_batch(rows, threads=1)]
        results = [None] * 4

        def run(i):
            results[i] = [as_outcome(x) for x in t.render_batch(rows, threads=2)]

        threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        self.assertEqual(results, [want] * 4)


class Pickling(unittest.TestCase):
    def check_round_trip(self, t):
        t2 = pickle.loads(pickle.dumps(t))
        self.assertIs(pickle.loads(pickle.dumps(t)), t2)   # compiled once per process
        self.assertEqual((t2.name, t2.kind, t2.source), (t.name, t.kind, t.source))
        for _, ctx in conversations():
            self.assertEqual(outcome(lambda: t2.render(**ctx)), outcome(lambda: t.render(**ctx)))
        return t2

    def test_every_builtin(self):
        for name in chatfmt.builtin_names():
            with self.subTest(builtin=name):
                self.check_round_trip(chatfmt.compile(name))

    def test_tokenizer_config_and_gguf(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "tokenizer_config.json")
            with open(path, "w") as f:
                json.dump({"bos_token": "<s>", "eos_token": {"content": "</s>"}, "chat_template": [
                    {"name": "default", "template": "{{ bos_token }}{{ messages | length }}{{ eos_token }}"},
                    {"name": "tool_use", "template": "{{ bos_token }}T{{ tools | length }}"}]}, f)
            t = self.check_round_trip(chatfmt.compile(path, limits={"max_steps": 10 ** 6}, now="2024-01-02T03:04:05"))
            self.assertEqual(t.render([], tools=[{}, {}]), "<s>T2")
            # a template picked by chat_template= text keeps its source's special tokens
            picked = t.select("[{{ bos_token }}{{ eos_token }}]")
            self.assertEqual(self.check_round_trip(picked).render([]), "[<s></s>]")
            subprocess.run([sys.executable, os.path.join(REPO, "tests", "make_gguf.py"), d], check=True,
                           capture_output=True)
            g = self.check_round_trip(chatfmt.compile(os.path.join(d, "ok_v3.gguf")))
            self.assertEqual(g.kind, "gguf")
            blob = pickle.dumps([t, g])
        # another process, the files gone: the same renders
        code = ("import pickle, sys; sys.path.insert(0, sys.argv[1]); import chatfmt; "
                "t, g = pickle.loads(sys.stdin.buffer.read()); "
                "print(t.render([{'role': 'user', 'content': 'x'}]), t.render([], tools=[{}]), g.render([]), sep='|')")
        out = subprocess.run([sys.executable, "-c", code, os.path.join(REPO, "python")], input=blob,
                             capture_output=True, check=True).stdout.decode()
        t2, g2 = pickle.loads(blob)
        self.assertEqual(out, f"{t2.render([{'role': 'user', 'content': 'x'}])}|{t2.render([], tools=[{}])}|"
                              f"{g2.render([])}\n")


def cli_jsonl(template, path, *args):
    r = subprocess.run([BIN, "render", template, "--jsonl", path, *args], capture_output=True)
    if r.returncode:
        raise AssertionError(r.stderr.decode())
    return r.stdout


class FormatJsonl(unittest.TestCase):
    def rows_file(self, d):
        lines = [json.dumps(ctx, ensure_ascii=i % 2 == 0).encode() for i, (_, ctx) in enumerate(conversations())]
        lines += [b"", b"{not json", b"[1, 2]", b'{"messages": [{"role": "user", "content": "caf\xc3\xa9"}]}\r',
                  b'{"messages": [{"role": "user", "content": "\xff"}]}', b'{"messages": []}  ',
                  json.dumps({"messages": [{"role": "user", "content": "t"}], "tools": [{"type": "function",
                              "function": {"name": "f", "parameters": {}}}]}).encode()]
        path = os.path.join(d, "rows.jsonl")
        with open(path, "wb") as f:
            f.write(b"\n".join(lines * 7))   # the last line without a newline
        return path

    def test_same_bytes_as_the_cli(self):
        with tempfile.TemporaryDirectory() as d:
            rows = self.rows_file(d)
            out = os.path.join(d, "out.jsonl")
            cases = [((), {}), (("--spans",), {"spans": True}), (("--raw",), {"raw": True}),
                     (("-D", "enable_thinking=false", "-D", 'bos_token="<B>"'),
                      {"define": {"enable_thinking": False, "bos_token": "<B>"}}),
                     (("--add-generation-prompt", "--threads", "1"), {"add_generation_prompt": True, "threads": 1}),
                     (("--polyfill",), {"polyfill": True})]
            for name, _ in templates("seeds"):
                seed = os.path.join(SHARED, "seeds", name)
                for args, kwargs in cases:
                    with self.subTest(template=name, args=args):
                        want = cli_jsonl(seed, rows, *args)
                        stats = chatfmt.format_jsonl(seed, rows, out, **kwargs)
                        with open(out, "rb") as f:
                            self.assertEqual(f.read(), want)
                        self.assertEqual(stats.rows, want.count(b"\n"))
                        self.assertEqual(stats.errors, want.count(b'{"error": '))
                        first = want.split(b"\n").index(next(x for x in want.split(b"\n") if x.startswith(b'{"error"')))
                        self.assertEqual(stats.first_error_line, first + 1)
                        if kwargs == {}:   # the ctypes path (no _speedups) writes the same bytes
                            saved = dataset_module._native
                            dataset_module._native = None
                            try:
                                chatfmt.format_jsonl(seed, rows, out)
                            finally:
                                dataset_module._native = saved
                            with open(out, "rb") as f:
                                self.assertEqual(f.read(), want)

    def test_tool_use_template_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "tokenizer_config.json")
            with open(path, "w") as f:
                json.dump({"bos_token": "<s>", "chat_template": [
                    {"name": "default", "template": "D{{ bos_token }}{{ messages | length }}"},
                    {"name": "tool_use", "template": "{{ tools | length }}{% if %}"}]}, f)
            rows = self.rows_file(d)
            out = os.path.join(d, "out.jsonl")
            chatfmt.format_jsonl(path, rows, out, threads=2)
            with open(out, "rb") as f:
                self.assertEqual(f.read(), cli_jsonl(path, rows))


@unittest.skipIf(template_module._native is None, "_speedups not built or disabled")
class NativeOnly(unittest.TestCase):
    def test_render_batch_is_one_native_call(self):
        self.assertTrue(hasattr(template_module._native, "render_batch"))
        self.assertTrue(hasattr(template_module._native, "format_rows"))

    def test_batch_figures_account_for_every_row_and_thread(self):
        """batch_stats (the bench's per-thread figures): a measured call has
        a record per thread it asked for, the threads' rendered rows add up
        to the batch (rows repeated or distinct, some failing, some walked
        under the GIL in a second pass), the texts copied by the threads
        are at most the rows, and the results are render()'s; off again,
        a call is not measured (the last measured call's figures stay)."""
        native = template_module._native
        rows = [ctx for _, ctx in conversations()]
        rows += [json.loads(json.dumps(r)) for r in rows] + [{"messages": [{"role": "user", "content": "\ud800"}]}]
        rows = rows * 40
        t = chatfmt.compile(read(os.path.join(SHARED, "seeds", "glm45.jinja")))
        want = [outcome(lambda: t.render(**r)) for r in rows]
        native.batch_stats(True)
        try:
            for threads in (1, 2, 3):
                got = t.render_batch(rows, threads=threads)
                figures = native.batch_stats(True)
                self.assertEqual([as_outcome(x) for x in got], want)
                per = figures["per_thread"]
                self.assertEqual((figures["threads"], len(per)), (threads, threads))
                unread = sum(1 for r in rows if "\ud800" in json.dumps(r, ensure_ascii=False))
                # every row once, and each row walked under the GIL once more in the second pass
                self.assertEqual(sum(t["rows"] for t in per), len(rows) + unread)
                self.assertLessEqual(sum(t["copies"] for t in per), len(rows))
                self.assertGreater(sum(t["copies"] for t in per), 0)
                self.assertGreater(per[0]["cpu_ns"], 0)
                self.assertGreater(figures["windows"], 1)
        finally:
            native.batch_stats(False)
        t.render_batch(rows[:10], threads=2)
        self.assertEqual(native.batch_stats(False)["per_thread"], per)

    def test_texts_written_around_the_cache(self):
        """A call whose texts outgrow the last-level cache writes them with
        streaming stores (whole lines, from a staged piece of widened text
        at a time); stream_texts_above(0) takes that path for every text
        of any size. The texts of every str kind, of lengths around the
        vector blocks, the 64-byte lines and the staged pieces (1 KiB of
        UTF-8), with other characters at and around the pieces' edges, on
        1 to 3 threads: each is Template.render's."""
        native = template_module._native
        t = chatfmt.compile("{{ messages[0].content }}|{{ messages | length }}")

        rows = []
        lengths = list(range(0, 200)) + [255, 256, 257, 1000, 1023, 1024, 1025, 2047, 2048, 2049, 4100, 9000, 40000]
        for c in (None, "\u00e9", "\u0100", "\u4e2d", "\U0001F600"):
            for n in lengths:
                text = ascii_text(n, n)
                if c is not None:
                    for at in {n // 3, n // 2, 1020, 1021, 1022, 1023, 1024, 2046, 2047, 2048, n - 1}:
                        if 0 <= at < len(text):
                            text = text[:at] + c + text[at + 1:]
                rows.append([{"role": "user", "content": text}])
                rows.append([{"role": "user", "content": "\u00ff" + text}])
        want = [t.render(r) for r in rows]
        before = native.stream_texts_above(0)
        try:
            for threads in (1, 2, 3):
                with self.subTest(threads=threads):
                    got = t.render_batch(rows, threads=threads)
                    self.assertEqual([i for i, (g, w) in enumerate(zip(got, want)) if g != w], [])   # (no long diff)
                    self.assertTrue(all(type(x) is str for x in got))
        finally:
            native.stream_texts_above(before)
        self.assertEqual(t.render_batch(rows[:50]), want[:50])

    def test_texts_written_into_strs_made_before_their_rows(self):
        """A row object that comes again has its str made before it renders,
        in the form of its last output (premade_strs), and the rendering
        thread writes the text straight into it; an output of another form
        leaves that str unused and takes the usual way (premade_miss(1)
        takes every one for the wrong form; premade_miss(2) makes every one
        ASCII, as long as its output in UTF-8: one expected ASCII is tested
        as it is copied, and one that is not leaves it). Outputs of every str kind and of
        lengths around the vector blocks, the 64-byte lines and the small
        objects' limit, errors and declined rows among them, written in
        the cache or around it, on 1 to 3 threads, each way: every result
        is Template.render's, in its place; no text goes into a str made
        for it when every one is taken for the wrong form, most do when
        none is (placed: what the calling thread's drain finds, whatever
        the threads' timing; how many copies are queued depends on it)."""
        native = template_module._native
        t = chatfmt.compile("{% for m in messages %}{% if m.content == 'boom' %}{{ raise_exception('boom') }}"
                            "{% endif %}{{ m.content }}{% endfor %}{{ messages | length }}")   # (a number: scanned)
        pool = []
        for c in ("", "\u00e9", "\u0100", "\U0001F600"):
            for n in (0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 200, 480, 500, 520, 1023, 1024, 1025, 4100, 9000):
                text = "".join(chr(33 + (n + 7 * i) % 94) for i in range(n))
                if c and n:
                    text = text[:n // 2] + c + text[n // 2 + 1:]
                pool.append([{"role": "user", "content": text}])
        pool += [[{"role": "user", "content": "boom"}], {"messages": [{"role": "user", "content": "s"}], "odd": {1}}]
        rows = [pool[(i * 7) % len(pool)] for i in range(4000)]
        want = [outcome(lambda: t.render(**r) if isinstance(r, dict) else t.render(r)) for r in rows]
        before_stream, before_miss = native.stream_texts_above(-1), native.premade_miss(0)
        placed = {}
        native.batch_stats(True)
        try:
            for stream in (None, 0):
                for miss in (0, 1, 2):
                    native.stream_texts_above(-1 if stream is None else stream)
                    native.premade_miss(miss)
                    for threads in (1, 2, 3):
                        with self.subTest(stream=stream, miss=miss, threads=threads):
                            got = t.render_batch(rows, threads=threads)
                            figures = native.batch_stats(True)
                            self.assertEqual([i for i, (g, w) in enumerate(zip(got, want)) if as_outcome(g) != w], [])
                            self.assertTrue(all(type(x) is str for x in got if not isinstance(x, BaseException)))
                            placed[miss, stream, threads] = figures["placed"]
        finally:
            native.batch_stats(False)
            native.premade_miss(before_miss)
            native.stream_texts_above(before_stream)
        for (miss, stream, threads), n in placed.items():
            if miss == 1:
                self.assertEqual(n, 0, (stream, threads))
            elif miss == 0:
                self.assertGreater(n, len(rows) // 2, (stream, threads))

    def test_texts_not_ascii_written_into_strs_made_before_their_rows(self):
        """An output that is not ASCII, of a row object that comes again, is
        written into the str made for it in one pass that measures and
        checks it as it goes (no scan first): one character of each str
        kind, alone or with a second of another kind, at every offset of an
        ASCII text and of its 32- and 128-byte blocks; with the strs made
        right, a form wider than the output (premade_miss(3): found wrong
        only at the end, or for a character too wide for it) and a
        character short (4: the write stops at the str's end), on 1 and 2
        threads: every result is Template.render's, in its canonical kind."""
        native = template_module._native
        t = chatfmt.compile("{{ messages[0].content }}|{{ messages | length }}")

        pool = []
        for c in OTHER_CHARACTERS:
            for before in list(range(0, 140)) + [191, 255, 256, 257, 1000]:
                for after in (0, 1, 31, 32, 33, 130):
                    text = ascii_text(before, 0) + c + ascii_text(after, 1)
                    pool.append([{"role": "user", "content": text}])
                pool.append([{"role": "user", "content": ascii_text(before, 2) + "\u00e9" + ascii_text(40, 3) + c}])
        pool.append([{"role": "user", "content": "plain"}])
        # each 4 times, a few hundred rows apart (as many as a call's repeated rows keep their outputs' forms)
        rows = [r for j in range(0, len(pool), 300) for _ in range(4) for r in pool[j:j + 300]]
        want = {id(r): t.render(r) for r in pool}
        before_miss = native.premade_miss(0)
        try:
            for miss in (0, 3, 4):
                native.premade_miss(miss)
                for threads in (1, 2):
                    with self.subTest(miss=miss, threads=threads):
                        got = t.render_batch(rows, threads=threads)
                        self.assertEqual([i for i, (g, r) in enumerate(zip(got, rows)) if g != want[id(r)]], [])
                        self.assertTrue(all(type(x) is str for x in got))
        finally:
            native.premade_miss(before_miss)

    def test_render_buffers_given_back_to_the_thread_that_rendered_them(self):
        """Rows that are separate objects leave their outputs in their row
        slots' render buffers until the slot's next row, whose thread gives
        the buffer back: into its own cache, or, when another thread
        rendered it, through that thread's stack (give_back_mode: 0, every
        one into the cache of the thread that gives it back; 2, every one
        through a stack, its own thread's too). Texts of every str kind and
        of many lengths, in {% generation %} blocks, over many windows, on 1
        to 3 threads, each way: every result is Template.render's; none
        goes through a stack on one thread or in mode 0, and in mode 2 on
        more threads most do."""
        native = template_module._native
        t = chatfmt.compile("{% for m in messages %}{% generation %}{{ m.content }}{% endgeneration %}{% endfor %}")
        rows = []
        for i in range(3000):
            text = "".join(chr(33 + (i + 5 * k) % 94) for k in range(i % 61 * 37))
            text += ("", "\u00e9", "\u0100", "\U0001F600")[i % 4] * (i % 3)
            rows.append([{"role": "user", "content": text}])
        want = [t.render(messages=r) for r in rows]
        before = native.give_back_mode(1)
        self.assertEqual(before, 1)
        native.batch_stats(True)
        try:
            for mode in (0, 1, 2):
                native.give_back_mode(mode)
                for threads in (1, 2, 3):
                    with self.subTest(mode=mode, threads=threads):
                        got = t.render_batch(rows, threads=threads)
                        given_back = sum(f["given_back"] for f in native.batch_stats(True)["per_thread"])
                        self.assertEqual([i for i, (g, w) in enumerate(zip(got, want)) if g != w], [])
                        if threads == 1 or mode == 0:
                            self.assertEqual(given_back, 0)
                        elif mode == 2:
                            self.assertGreater(given_back, len(rows) // 2)
        finally:
            native.batch_stats(False)
            native.give_back_mode(before)
        with self.assertRaises(ValueError):
            native.give_back_mode(3)

    def test_rows_claimed_several_at_a_time(self):
        """A batch thread claims claim_rows rows at a time (2 by default):
        with 1, 3 and 7, on 2 and 3 threads, rows repeated and distinct,
        some failing: every result is Template.render's, in its place."""
        native = template_module._native
        t = chatfmt.compile(read(os.path.join(SHARED, "seeds", "reasoning-qwen25.jinja")))
        rows = [ctx for _, ctx in conversations()]
        rows = (rows + [json.loads(json.dumps(r)) for r in rows]) * 30
        want = [outcome(lambda: t.render(**r)) for r in rows]
        self.assertTrue(any(w[0] == "error" for w in want))
        before = native.claim_rows(2)
        self.assertEqual(before, 2)
        try:
            for claim in (1, 3, 7):
                native.claim_rows(claim)
                for threads in (2, 3):
                    with self.subTest(claim=claim, threads=threads):
                        self.assertEqual([as_outcome(x) for x in t.render_batch(rows, threads=threads)], want)
        finally:
            native.claim_rows(before)
        for bad in (0, 65):
            with self.assertRaises(ValueError):
                native.claim_rows(bad)

    def test_outputs_said_ascii_are_ascii(self):
        """The library says which outputs it knows are ASCII (cf_result.nchars
        == len: the template's text and strings read as ASCII, their sums
        and captures), and render_batch and render make those str without
        a scan: a wrong claim would give a corrupt str. With claims checked
        (known_ascii_check: each scanned all the same, a wrong one counted
        and not believed), over the seeds and the corpus x the shared
        conversations, on 1 and 2 threads and one by one: no claim is
        wrong, and most ASCII outputs are claimed (a claim lost everywhere
        fails too)."""
        native = template_module._native
        rows = [ctx for _, ctx in conversations()]
        claims = ascii_outputs = 0
        for subdir in ("seeds", "corpus/templates"):
            for name, text in templates(subdir):
                try:
                    t = chatfmt.compile(text)
                except chatfmt.TemplateError:
                    continue
                native.known_ascii_check(True)
                try:
                    out = t.render_batch(rows, threads=1) + t.render_batch(rows, threads=2)
                    for r in rows:
                        out.append(outcome(lambda: t.render(**r))[1])
                finally:
                    said, wrong = native.known_ascii_check(False)
                self.assertEqual(wrong, 0, f"{name}: {wrong} outputs said ASCII are not")
                claims += said
                ascii_outputs += sum(1 for o in out if type(o) is str and o.isascii())
        self.assertLessEqual(claims, ascii_outputs)
        self.assertGreater(claims, ascii_outputs // 2)
        print(f"\noutputs said ASCII: {claims} of {ascii_outputs} ASCII outputs", end=" ")


if __name__ == "__main__":
    unittest.main()
