"""transformers' apply_chat_template signature (chatfmt.apply_chat_template,
Template.render) and chatfmt.patch, checked against the reference path: the
stand-in tokenizer (standin_tokenizer.py: transformers' call interface, and
its apply_chat_template on the reference renderer, Python Jinja2)."""
import inspect
import os
import re
import unittest

from support import REPO, SHARED, chatfmt, conversations, hf_render, read, templates

if hf_render is not None:
    from standin_tokenizer import StandInTokenizer, numpy, reference_spans

SPECIAL = {"bos_token": "<s>", "eos_token": "</s>", "pad_token": "<pad>", "unk_token": "<unk>"}


def generation_templates():
    """Every seed and corpus template with {% generation %} blocks."""
    found = [(n, t) for n, t in templates("seeds") + templates("corpus/templates")
             if re.search(r"\{%-?\s*generation\s*-?%\}", t)]
    assert found, "no template with generation blocks in shared/"
    return found


def outcome(call):
    try:
        return "ok", call()
    except Exception as e:  # noqa: BLE001 - the exception class is the outcome
        return "error", type(e).__name__


def plain(x):
    """An encoding as plain lists, for comparing."""
    if hasattr(x, "tolist"):
        return x.tolist()
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    return x


@unittest.skipIf(hf_render is None, "reference renderer unavailable")
class Signature(unittest.TestCase):
    def test_parameters_are_transformers_in_order(self):
        """chatfmt.apply_chat_template(template, ...) and Template.render take
        transformers' parameters in transformers' order (the stand-in's
        signature is transformers' documented one), plus tokenizer=."""
        want = list(inspect.signature(StandInTokenizer.apply_chat_template).parameters)[1:]
        want.remove("kwargs")
        got = list(inspect.signature(chatfmt.template._apply_general).parameters)
        self.assertEqual(got[0], "template")
        self.assertEqual(got[1:len(want) + 1], want)
        self.assertEqual(got[len(want) + 1:], ["tokenizer", "kwargs"])
        self.assertEqual(list(inspect.signature(chatfmt.Template._render_general).parameters)[1:], got[1:])

    def test_readme_table_lists_every_parameter(self):
        """python/README.md's table has one row per parameter, in order."""
        text = read(os.path.join(REPO, "python", "README.md"))
        rows = re.findall(r"^\| `((?:\*\*)?\w+)`", text, re.M)
        params = list(inspect.signature(chatfmt.template._apply_general).parameters)
        self.assertEqual(rows, params[1:-1] + ["**kwargs"])

    def test_options_never_reach_the_template(self):
        """Only **kwargs reach the template: a template printing the option
        names prints nothing, as in transformers."""
        names = ["tokenize", "padding", "truncation", "max_length", "return_tensors", "return_dict",
                 "return_assistant_tokens_mask", "tokenizer_kwargs", "chat_template", "tokenizer", "conversation"]
        text = "{{ messages | length }}" + "".join("[{{ %s }}]" % n for n in names) + "{{ extra }}"
        msgs = [{"role": "user", "content": "hi"}]
        tok = StandInTokenizer(text, SPECIAL)
        want = tok.apply_chat_template(msgs, tokenize=False, extra="E")
        self.assertEqual(want, "1" + "[]" * len(names) + "E")
        self.assertEqual(chatfmt.apply_chat_template(text, msgs, extra="E", tokenize=False, return_dict=False,
                                                     chat_template=None, padding=False), want)
        got = chatfmt.apply_chat_template(text, msgs, extra="E", return_dict=True)
        self.assertEqual(got, {"text": want, "assistant_spans": []})
        ids = chatfmt.apply_chat_template(text, msgs, extra="E", tokenize=True, tokenizer=tok, padding=True,
                                          truncation=True, max_length=64, tokenizer_kwargs={})
        self.assertEqual(ids, tok.apply_chat_template(msgs, extra="E", return_dict=False, padding=True,
                                                      truncation=True, max_length=64))

    def test_tokenize_without_tokenizer_says_how(self):
        with self.assertRaises(ValueError) as cm:
            chatfmt.apply_chat_template("glm45", [{"role": "user", "content": "hi"}], tokenize=True)
        self.assertIn("tokenizer=", str(cm.exception))

    def test_options_that_do_not_go_together(self):
        msgs = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
        for kwargs in ({"continue_final_message": True, "add_generation_prompt": True},
                       {"continue_final_message": True, "return_assistant_tokens_mask": True, "return_dict": True},
                       {"return_assistant_tokens_mask": True}):
            with self.subTest(kwargs=kwargs), self.assertRaises(ValueError):
                chatfmt.apply_chat_template("glm45", msgs, **kwargs)

    def test_continue_final_message_as_the_reference(self):
        tok = StandInTokenizer(read(os.path.join(SHARED, "seeds", "glm45.jinja")), SPECIAL)
        msgs = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Once upon"}]
        want = tok.apply_chat_template(msgs, tokenize=False, continue_final_message=True)
        self.assertEqual(chatfmt.apply_chat_template(tok.chat_template, msgs, continue_final_message=True,
                                                     **SPECIAL), want)

    def test_chat_template_picks_a_named_template_or_text(self):
        import json
        import tempfile
        named = {"default": "D{{ messages | length }}{{ bos_token }}", "rag": "R{{ bos_token }}",
                 "tool_use": "T{{ tools | length }}"}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "tokenizer_config.json")
            with open(path, "w") as f:
                json.dump({"bos_token": "<s>", "chat_template": [{"name": k, "template": v} for k, v in named.items()]}, f)
            tok = StandInTokenizer(named, {"bos_token": "<s>"})
            msgs = [{"role": "user", "content": "hi"}]
            for chat_template, tools in ((None, None), ("rag", None), (None, [{"type": "function"}]),
                                         ("X{{ bos_token }}{{ messages[0].content }}", None)):
                with self.subTest(chat_template=chat_template, tools=tools):
                    want = tok.apply_chat_template(msgs, tools=tools, chat_template=chat_template, tokenize=False)
                    got = chatfmt.apply_chat_template(path, msgs, tools=tools, chat_template=chat_template)
                    self.assertEqual(got, want)


@unittest.skipIf(hf_render is None, "reference renderer unavailable")
class Tokenize(unittest.TestCase):
    def test_batch_in_batch_out(self):
        seed = read(os.path.join(SHARED, "seeds", "toolcall-qwen3.jinja"))
        tok = StandInTokenizer(seed, SPECIAL)
        convs = [ctx["messages"] for _, ctx in conversations()[:6]]
        want = tok.apply_chat_template(convs, tokenize=False, add_generation_prompt=True)
        self.assertIsInstance(want, list)
        self.assertEqual(chatfmt.apply_chat_template(seed, convs, add_generation_prompt=True, **SPECIAL), want)
        self.assertEqual(chatfmt.compile(seed).render(convs, add_generation_prompt=True, **SPECIAL), want)
        for kwargs in ({"padding": True}, {"padding": "max_length", "max_length": 900, "truncation": True},
                       {"padding": True, "truncation": True, "max_length": 40}):
            with self.subTest(kwargs=kwargs):
                want = tok.apply_chat_template(convs, **kwargs)
                got = chatfmt.apply_chat_template(seed, convs, tokenize=True, return_dict=True, tokenizer=tok,
                                                  **kwargs, **SPECIAL)
                self.assertEqual(plain(got), plain(want))
                self.assertEqual(chatfmt.apply_chat_template(seed, convs, tokenize=True, tokenizer=tok, **kwargs,
                                                             **SPECIAL), want["input_ids"])

    def test_assistant_masks_equal_the_references(self):
        """For every template with generation blocks x every conversation:
        chatfmt's masks (its spans through the tokenizer's offsets) equal
        transformers' (the reference's generation indices through
        char_to_token), also truncated, padded, and through offsets only."""
        checked = marked = 0
        tok = StandInTokenizer(None, SPECIAL)
        offsets_only = StandInTokenizer(None, SPECIAL, plain_output=True)
        for tname, text in generation_templates():
            tok.chat_template = offsets_only.chat_template = text
            for cname, ctx in conversations():
                if ctx.get("continue_final_message"):
                    continue
                args = {k: v for k, v in ctx.items() if k != "messages"}
                ref = outcome(lambda: tok.apply_chat_template(ctx["messages"], return_assistant_tokens_mask=True,
                                                              **args))
                for variant, extra in (("whole", {}), ("truncated", {"truncation": True, "max_length": 60})):
                    with self.subTest(case=f"{tname}|{cname}|{variant}"):
                        want = outcome(lambda: tok.apply_chat_template(
                            ctx["messages"], return_assistant_tokens_mask=True, **extra, **args))
                        got = outcome(lambda: chatfmt.apply_chat_template(
                            text, ctx["messages"], tokenize=True, return_dict=True, return_assistant_tokens_mask=True,
                            tokenizer=tok, **extra, **dict(SPECIAL, **args)))
                        self.assertEqual(got[0], want[0], got)
                        if want[0] == "ok":
                            self.assertEqual(plain(got[1]), plain(want[1]))
                            via = chatfmt.apply_chat_template(
                                text, ctx["messages"], tokenize=True, return_dict=True,
                                return_assistant_tokens_mask=True, tokenizer=offsets_only, **extra, **dict(SPECIAL, **args))
                            self.assertEqual(via["assistant_masks"], want[1]["assistant_masks"])
                            self.assertNotIn("offset_mapping", via)
                            checked += 1
                if ref[0] == "ok":
                    marked += sum(ref[1]["assistant_masks"])
        print(f"\nassistant masks: {checked} cases equal the reference's, {marked} assistant tokens")
        self.assertGreater(checked, 20)
        self.assertGreater(marked, 100)   # the masks are not all zeros

    def test_spans_are_the_reference_generation_indices(self):
        for tname, text in generation_templates():
            for cname, ctx in conversations():
                if ctx.get("continue_final_message"):
                    continue
                with self.subTest(case=f"{tname}|{cname}"):
                    want = outcome(lambda: reference_spans(text, dict(ctx, **SPECIAL)))
                    got = outcome(lambda: chatfmt.apply_chat_template(text, return_dict=True, **dict(SPECIAL, **ctx)))
                    self.assertEqual(got[0], want[0])
                    if want[0] == "ok":
                        self.assertEqual((got[1]["text"], [tuple(s) for s in got[1]["assistant_spans"]]),
                                         (want[1][0], [tuple(s) for s in want[1][1]]))

    @unittest.skipIf(hf_render is not None and numpy is None, "numpy not installed (return_tensors='np')")
    def test_return_tensors_np(self):
        text = generation_templates()[0][1]
        tok = StandInTokenizer(text, SPECIAL)
        convs = [ctx["messages"] for _, ctx in conversations() if not ctx.get("continue_final_message")][:4]
        want = tok.apply_chat_template(convs, return_assistant_tokens_mask=True, padding=True, return_tensors="np")
        got = chatfmt.apply_chat_template(text, convs, tokenize=True, return_dict=True, padding=True,
                                          return_assistant_tokens_mask=True, return_tensors="np", tokenizer=tok,
                                          **SPECIAL)
        self.assertEqual(type(got["assistant_masks"]), numpy.ndarray)
        self.assertEqual(plain(got), plain(want))


@unittest.skipIf(hf_render is None, "reference renderer unavailable")
class Patch(unittest.TestCase):
    def cases(self):
        # $CHATFMT_QUICK (python_test.sh's second pass, on the ctypes path): the seeds only
        corpus = [] if os.environ.get("CHATFMT_QUICK") else templates("corpus/templates")
        for tname, text in templates("seeds") + corpus:
            for cname, ctx in conversations():
                yield f"{tname}|{cname}", text, ctx

    def test_patched_equals_unpatched(self):
        """Seeds and corpus x conversations: the patched tokenizer gives the
        unpatched one's text and ids, byte for byte, or its very error."""
        same = fallback = errors = 0
        for case, text, ctx in self.cases():
            tok = StandInTokenizer(text, SPECIAL)
            args = {k: v for k, v in ctx.items() if k != "messages"}
            want_text = outcome(lambda: tok.apply_chat_template(ctx["messages"], tokenize=False, **args))
            # the original's encoding is the tokenizer's on that text (as test_batch_in_batch_out checks)
            want_ids = ("ok", plain(tok(want_text[1], add_special_tokens=False))) if want_text[0] == "ok" else want_text
            chatfmt.patch(tok)
            calls = tok.calls
            with self.subTest(case=case):
                self.assertEqual(outcome(lambda: tok.apply_chat_template(ctx["messages"], tokenize=False, **args)),
                                 want_text)
                self.assertEqual(outcome(lambda: plain(tok.apply_chat_template(ctx["messages"], **args))), want_ids)
                # the original answers only where the reference fails (its own exception)
                self.assertEqual(tok.calls > calls, want_text[0] == "error")
            fallback += tok.calls > calls
            same += want_text[0] == "ok"
            errors += want_text[0] == "error"
            chatfmt.unpatch(tok)
            self.assertNotIn("apply_chat_template", vars(tok))
        print(f"\npatch: {same} renders identical to the reference path (text and ids), {fallback} of {errors} "
              "failing ones answered by the original")
        self.assertGreater(same, 50)

    def test_falls_back_where_it_must(self):
        text = read(os.path.join(SHARED, "seeds", "toolcall-qwen3.jinja"))
        tok = chatfmt.patch(StandInTokenizer(text, SPECIAL))
        msgs = [{"role": "user", "content": "hi"}]

        def get_weather(city: str):
            """Weather of a city."""

        for name, call, original in (
            ("tools as functions", lambda t: t.apply_chat_template(msgs, tools=[get_weather], tokenize=False), True),
            ("render error", lambda t: t.apply_chat_template(msgs, tokenize=False, chat_template="{{ 1 / 0 }}"), True),
            ("cfm with agp", lambda t: t.apply_chat_template(msgs, continue_final_message=True,
                                                             add_generation_prompt=True), True),
            ("messages keyword", lambda t: t.apply_chat_template(msgs, messages=msgs, tokenize=False), True),
            ("plain render", lambda t: t.apply_chat_template(msgs, tokenize=False), False),
            ("ids", lambda t: t.apply_chat_template(msgs), False),
        ):
            with self.subTest(case=name):
                before = tok.calls
                got = outcome(lambda: call(tok))
                self.assertEqual(tok.calls > before, original)
                chatfmt.unpatch(tok)
                self.assertEqual(got, outcome(lambda: call(tok)))
                chatfmt.patch(tok)
        err = outcome(lambda: tok.apply_chat_template(msgs, tokenize=False, chat_template="{{ 1 / 0 }}"))
        self.assertEqual(err, ("error", "ZeroDivisionError"))   # Python's own, raised by the original

    def test_keywords_over_special_tokens_and_state_read_per_call(self):
        """The patched call's variables: the tokenizer's special tokens with
        the call's keyword variables over them, its chat_template and special
        tokens as they are at the call (on the C path too, when built)."""
        text = ("{{ bos_token }}|{{ eos_token }}|{{ extra }}|{{ continue_final_message }}|"
                "{% for m in messages %}{{ m.content }}{% endfor %}|{{ add_generation_prompt }}")
        tok = StandInTokenizer(text, SPECIAL)
        msgs = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "he"}]
        calls = [lambda t: t.apply_chat_template(msgs, tokenize=False),
                 lambda t: t.apply_chat_template(msgs, tokenize=False, bos_token="B", extra="E"),
                 lambda t: t.apply_chat_template(msgs, tokenize=False, extra=[1, (2, 3)], eos_token=None),
                 lambda t: t.apply_chat_template(msgs, tokenize=False, continue_final_message=True),
                 lambda t: t.apply_chat_template(msgs, None, None, tokenize=False, add_generation_prompt=False)]
        want = [outcome(lambda: call(tok)) for call in calls]
        chatfmt.patch(tok)
        if chatfmt.template._native is not None:   # the usual call is answered in C
            self.assertEqual(type(tok.apply_chat_template).__name__, "PatchedApplyChatTemplate")
        before = tok.calls
        self.assertEqual([outcome(lambda: call(tok)) for call in calls], want)
        self.assertEqual(tok.calls, before)   # none went to the original
        tok.chat_template = "{{ bos_token }}{{ messages[0].content }}"
        tok._special["bos_token"] = "<S2>"
        got = tok.apply_chat_template(msgs, tokenize=False)
        chatfmt.unpatch(tok)
        self.assertEqual(got, tok.apply_chat_template(msgs, tokenize=False))
        self.assertEqual(got, "<S2>hi")

    def test_signature_and_unpatch(self):
        tok = StandInTokenizer("{{ messages | length }}", SPECIAL)
        own = tok.apply_chat_template
        chatfmt.patch(tok)
        self.assertEqual(inspect.signature(tok.apply_chat_template), inspect.signature(own))
        self.assertIs(chatfmt.patch(tok), tok)   # twice is once
        self.assertEqual(tok.apply_chat_template([{"role": "user", "content": "x"}], tokenize=False), "1")
        chatfmt.unpatch(tok)
        self.assertEqual(tok.apply_chat_template.__func__, StandInTokenizer.apply_chat_template)


if __name__ == "__main__":
    unittest.main()
