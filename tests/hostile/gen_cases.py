#!/usr/bin/env python3
"""gen_cases.py OUTDIR — write the hostile-input suite and its manifest.

Every case is a `chatfmt` command on inputs written into OUTDIR (the big ones
are generated here, not committed). OUTDIR/manifest.jsonl has one line per
case:
  {"name": ..., "argv": [...], "exit": [0, 1], "expect": REGEX or null,
   "needs": "parse" or null, "oracle": {"template": PATH, "context": {...}} or null}
argv is relative to the chatfmt binary ("render", FILE, ...). When the exit
status is 1 the error (stderr) must match `expect`: a LimitError must name
its limit and the option that raises it. tests/hostile/run_hostile.py runs
them and checks time and memory as well.

Where the expectations come from: the limit cases state the contract of
issue 5 (which limit stops them); the invalid UTF-8 positions are Python's
own (bytes.decode here); the syntax and sandbox cases carry an "oracle"
entry instead, and the runner requires the outcome the reference renderer
gives (success, or the same error type) when it is available.
"""
import json
import re
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

CHAT = {"messages": [{"role": "user", "content": "hi"}], "add_generation_prompt": True}
DEEP = 100000   # nesting levels of the deep cases


def limit(option):
    """stderr of a LimitError raised by `option` (e.g. "max-steps")."""
    return r"LimitError: .*raise it with --%s" % option


class Suite:
    def __init__(self, outdir):
        self.dir = outdir
        self.cases = []
        os.makedirs(outdir, exist_ok=True)
        self.ctx = self.file("ctx.json", json.dumps(CHAT))

    def file(self, name, data):
        path = os.path.join(self.dir, name)
        with open(path, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
        return path

    def add(self, name, argv, expect=None, exit=(0, 1), needs=None, oracle=None):
        self.cases.append({"name": name, "argv": argv, "exit": list(exit), "expect": expect, "needs": needs,
                           "oracle": oracle})

    def render(self, name, template, expect=None, exit=(0, 1), context=None, args=()):
        """Render `template` (str or bytes) with the chat context (or `context`)."""
        tpl = self.file(name + ".jinja", template)
        ctx = self.ctx if context is None else self.file(name + ".json", context)
        self.add(name, ["render", *args, tpl, ctx], expect, exit)

    def like_reference(self, name, template):
        """A small case whose outcome is the reference renderer's (see the runner)."""
        tpl = self.file(name + ".jinja", template)
        self.add(name, ["render", tpl, self.ctx], None, (0, 1), oracle={"template": tpl, "context": CHAT})

    def write_manifest(self):
        with open(os.path.join(self.dir, "manifest.jsonl"), "w") as f:
            for c in self.cases:
                f.write(json.dumps(c) + "\n")


def utf8_error(data):
    """The error Python's UTF-8 decoder gives for `data`, with its byte offset."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        return r"UnicodeDecodeError: .*byte 0x%02x in position %d" % (data[e.start], e.start)
    raise ValueError("valid UTF-8: %r" % data)


def sizes(s):
    """Single strings and lists beyond max_string / max_items."""
    s.render("str_repeat_1e10", "{{ 'a' * 10**10 }}", limit("max-string"), exit=[1])
    s.render("list_repeat_1e9", "{{ [1] * 10**9 }}", limit("max-items"), exit=[1])
    s.render("percent_width", "{{ '%999999999s' % 1 }}", limit("max-string"), exit=[1])
    s.render("percent_star_width", "{{ '%*s' % (10**9, 'a') }}", limit("max-string"), exit=[1])
    s.render("percent_precision", "{{ '%.999999999f' % 1.0 }}", limit("max-string"), exit=[1])
    s.render("format_width", "{{ '{:>999999999}'.format(1) }}", limit("max-string"), exit=[1])
    s.render("format_precision", "{{ '{:.999999999f}'.format(1.0) }}", limit("max-string"), exit=[1])
    s.render("format_repeat_field", "{{ '{0}{0}{0}{0}{0}{0}{0}{0}'.format('a' * 10**7) }}", limit("max-string"), exit=[1])
    # str methods that pad: a crash before put_repeated stopped copying from a moving buffer
    for m in ("center", "ljust", "rjust", "zfill"):
        s.render("method_%s_1e9" % m, "{{ 'a'.%s(10**9) }}" % m, limit("max-string"), exit=[1])
    s.render("filter_center_1e9", "{{ 'a'|center(10**9) }}", limit("max-string"), exit=[1])
    s.render("expandtabs_1e9", "{{ 'a\\tb'.expandtabs(10**9) }}", limit("max-string"), exit=[1])
    s.render("indent_1e9", "{{ 'a\\nb'|indent(10**9) }}", limit("max-string"), exit=[1])
    s.render("replace_empty_blowup", "{{ ('ab' * 10**6).replace('', 'x' * 100) }}", limit("max-string"), exit=[1])
    s.render("lipsum_1e9", "{{ lipsum(10**9) }}", limit("max-string"), exit=[1])
    s.render("tojson_indent_1e9", "{{ {'a': 1}|tojson(indent=10**9) }}", limit("max-string"), exit=[1])
    s.render("split_to_items", "{{ ('a' * 10**7).split('a')|length }}", limit("max-(items|memory)"), exit=[1])
    s.render("wordwrap_to_items", "{{ ('x' * 10**7)|wordwrap(1)|length }}", limit("max-(items|memory)"), exit=[1])
    s.render("int_power_huge", "{{ 2**(2**24) }}", limit("max-string"), exit=[1])


def work(s):
    """Loops and recursion: the step budget, range, recursion depth, memory, output."""
    s.render("range_1e9", "{% for i in range(10**9) %}{% endfor %}",
             r"OverflowError: Range too big\. The sandbox blocks ranges larger than MAX_RANGE \(100000\)\.", exit=[1])
    s.render("range_step_0", "{{ range(0, 10, 0)|list }}", r"ValueError: range\(\) arg 3 must not be zero", exit=[1])
    # each inner range is a list of 100000 (1.6 MB), so memory may end it first
    s.render("nested_loop_1e10", "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
             limit("max-(steps|memory)"), exit=[1])
    s.render("nested_loop_output",
             "{% for i in range(100000) %}{% for j in range(100000) %}{{ i }}{% endfor %}{% endfor %}",
             limit("max-(steps|output)"), exit=[1])
    s.render("string_doubling",
             "{% set ns = namespace(s='a') %}{% for i in range(100) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}"
             "{{ ns.s|length }}", limit("max-string"), exit=[1])
    s.render("list_doubling",
             "{% set ns = namespace(l=[1]) %}{% for i in range(100) %}{% set ns.l = ns.l + ns.l %}{% endfor %}",
             limit("max-items"), exit=[1])
    # quadratic in Python (each sum copies the list); a sum here writes into
    # the room the sum before it left (operators.c's seq_concat): it renders
    s.render("list_append_quadratic",
             "{% set ns = namespace(l=[]) %}{% for i in range(100000) %}{% set ns.l = ns.l + [i] %}{% endfor %}"
             "{{ ns.l|length }}", None, exit=[0])
    s.like_reference("list_append_shared_tail",
                     "{% set ns = namespace(l=[]) %}{% for i in range(300) %}{% set ns.l = ns.l + [i] %}"
                     "{% set x = ns.l + ['a'] %}{% set y = ns.l + ['b'] %}{{ x[-1] }}{{ y[-1] }}{% endfor %}{{ ns.l }}")
    # the same for dicts: a dict() writes into the room the dict() before it
    # left (globals.c's g_dict), unless it replaces a key, which copies
    s.render("dict_copy_quadratic",
             "{% set ns = namespace(d={}) %}{% for i in range(100000) %}"
             "{% set ns.d = dict(ns.d, **{i|string: i}) %}{% endfor %}", None, exit=[0])
    s.render("dict_copy_replacing_quadratic",
             "{% set ns = namespace(d={}) %}{% for i in range(100000) %}"
             "{% set ns.d = dict(ns.d, **{i|string: i, '0': i}) %}{% endfor %}",
             limit("max-(steps|memory)"), exit=[1])
    s.render("sum_lists_quadratic", "{{ ([[1]] * 100000)|sum(start=[])|length }}",
             limit("max-(steps|memory|items)"), exit=[1])
    s.render("sort_4m", "{{ (range(100000)|list * 40)|sort|length }}", limit("max-(steps|memory)"), exit=[1])
    s.render("int_squaring", "{% set ns = namespace(x=2) %}{% for i in range(100) %}{% set ns.x = ns.x * ns.x %}"
             "{% endfor %}{{ ns.x > 0 }}", limit("max-(steps|string)"), exit=[1])
    s.render("memory_flood", "{% for i in range(100000) %}{% set x = 'a' * 10**7 %}{% endfor %}",
             limit("max-(memory|steps)"), exit=[1])
    s.render("output_flood", "{% for i in range(100000) %}{{ 'a' * 100000 }}{% endfor %}", limit("max-output"), exit=[1])
    s.render("text_output_flood", "{% for i in range(100000) %}" + "x" * 1000 + "{% endfor %}", limit("max-(output|steps)"), exit=[1])
    s.render("macro_recursion", "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", limit("max-recursion"), exit=[1])
    s.render("macro_fanout_2e40",
             "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}",
             limit("max-(steps|memory)"), exit=[1])
    s.render("loop_recursion", "{% for x in [1] recursive %}{{ loop([1]) }}{% endfor %}", limit("max-recursion"), exit=[1])
    s.render("loop_recursion_fanout", "{% for x in [1, 2] recursive %}{{ loop([1, 2]) }}{% endfor %}",
             limit("max-recursion"), exit=[1])
    s.render("caller_recursion",
             "{% macro f() %}{{ caller() }}{% endmacro %}{% macro g() %}{% call f() %}{{ g() }}{% endcall %}{% endmacro %}"
             "{{ g() }}", limit("max-recursion"), exit=[1])
    s.render("call_block_recursion",
             "{% macro f(n) %}{% call f(n + 1) %}x{% endcall %}{% endmacro %}{{ f(0) }}", None, exit=[1])
    # one recursion level holding a deep expression: the C stack guard, not the level count, stops it
    s.render("recursion_deep_expression",
             "{% macro f(n) %}{% if n < 490 %}{{ " + "not " * 450 + " f(n + 1) }}{% endif %}{% endmacro %}{{ f(0) }}",
             limit("max-recursion"), exit=[1])
    # (text after each inner block: a branch that is its body's last statement runs without
    # recursion, so the blocks would take no C stack)
    s.render("recursion_deep_blocks",
             "{% macro f(n) %}" + "{% if true %}" * 450 + "{% if n < 490 %}{{ f(n + 1) }}{% endif %}" +
             "{% endif %}." * 450 + "{% endmacro %}{{ f(0) }}", limit("max-recursion"), exit=[1])
    # the same blocks as last statements: run in place, no stack per block, rendered
    s.render("deep_tail_blocks",
             "{% macro f(n) %}" + "{% if true %}" * 450 + "{% if n < 20 %}{{ f(n + 1) }}{% endif %}" +
             "{% endif %}" * 450 + "{% endmacro %}{{ f(0) }}", None, exit=[0])
    s.render("cycler_many", "{% set c = cycler(*range(100000)) %}{% for i in range(100000) %}{{ c.next() }}{% endfor %}",
             None, exit=[0])


def repeated(s):
    """An O(n) filter or method on a big value, called again and again: the step budget (the
    operand's size is charged) or memory stops the loop, whatever the filter costs a byte."""
    big = "{% set s = 'ab ' * 5000000 %}{% for i in range(1000) %}{% set y = s"
    for name, call in [("urlize", "|urlize"), ("title_method", ".title()"), ("title_filter", "|title"),
                       ("capitalize", "|capitalize"), ("upper", ".upper()"), ("reverse", "|reverse"),
                       ("count", ".count('b')"), ("find", ".find('zzz')"), ("wordcount", "|wordcount"),
                       ("split", ".split('a')|length"), ("escape", "|escape"), ("tojson", "|tojson"),
                       ("indent", "|indent"), ("wordwrap", "|wordwrap(80)"), ("slice_unicode", "[1:-1]"),
                       ("length", "|length"), ("strip", ".strip()")]:
        # (one split('a') there makes 5,000,001 pieces: max_items may stop it before it builds them)
        allowed = "max-(steps|memory|items)" if name == "split" else "max-(steps|memory)"
        s.render("repeated_" + name, big + call + " %}{% endfor %}", limit(allowed), exit=[1])
    s.render("repeated_striptags_entities",
             "{% set s = '&amp;' * 3000000 %}{% for i in range(1000) %}{% set y = s|striptags %}{% endfor %}",
             limit("max-(steps|memory)"), exit=[1])
    s.render("repeated_upper_unicode",
             "{% set s = '\u00e9b ' * 4000000 %}{% for i in range(1000) %}{% set y = s.upper() %}{% endfor %}",
             limit("max-(steps|memory)"), exit=[1])
    lst = "{% set l = range(100000)|list %}{% for i in range(1000) %}{% set y = "
    for name, expr in [("join", "l|join(',')"), ("list_tojson", "l|tojson"), ("pprint", "l|pprint"),
                       ("unique", "l|unique|list"), ("map", "l|map('string')|list"), ("select", "l|select('odd')|list"),
                       ("sum", "l|sum"), ("max", "l|max"), ("contains", "99999 in l"), ("groupby", "l|groupby('real')|list"),
                       ("batch", "l|batch(3)|list"), ("list_string", "l|string")]:
        s.render("repeated_list_" + name, lst + expr + " %}{% endfor %}", limit("max-(steps|memory)"), exit=[1])


def nesting(s):
    """100000 levels of everything that nests, and left-deep chains."""
    n = DEEP
    deep = limit("max-parse-depth")
    s.render("deep_parens", "{{ " + "(" * n + "1" + ")" * n + " }}", deep, exit=[1])
    s.render("deep_lists", "{{ " + "[" * n + "]" * n + " }}", deep, exit=[1])
    s.render("deep_dicts", "{{ " + "{'a': " * n + "1" + "}" * n + " }}", deep, exit=[1])
    s.render("deep_ifs", "{% if true %}" * n + "x" + "{% endif %}" * n, deep, exit=[1])
    s.render("deep_fors", "{% for x in [1] %}" * n + "x" + "{% endfor %}" * n, deep, exit=[1])
    s.render("deep_macros", "{% macro m() %}" * n + "x" + "{% endmacro %}" * n, deep, exit=[1])
    s.render("deep_call_blocks", "{% macro m() %}{{ caller() }}{% endmacro %}" + "{% call m() %}" * n + "x" +
             "{% endcall %}" * n, deep, exit=[1])
    s.render("deep_filter_blocks", "{% filter upper %}" * n + "x" + "{% endfilter %}" * n, deep, exit=[1])
    s.render("deep_set_blocks", "{% set x %}" * n + "x" + "{% endset %}" * n, deep, exit=[1])
    s.render("deep_with", "{% with %}" * n + "x" + "{% endwith %}" * n, deep, exit=[1])
    s.render("deep_not", "{{ " + "not " * n + "1 }}", deep, exit=[1])
    s.render("deep_unary_minus", "{{ " + "-" * n + "1 }}", deep, exit=[1])
    s.render("deep_condexpr", "{{ " + "1 if 1 else " * n + "1 }}", deep, exit=[1])
    # left-deep chains the parser reads in a loop: each link nests the tree one level
    s.render("chain_attr", "{{ a" + ".b" * n + " }}", deep, exit=[1])
    s.render("chain_subscript", "{{ x" + "[0]" * n + " }}", deep, exit=[1])
    s.render("chain_call", "{{ f" + "()" * n + " }}", deep, exit=[1])
    s.render("chain_filter", "{{ 1" + "|abs" * n + " }}", deep, exit=[1])
    s.render("chain_test", "{{ 1" + " is number" * 2 + " }}", r"TemplateSyntaxError", exit=[1])
    # dotted filter/test names (`is a.b.c`) are one name: read in linear time and memory
    s.render("chain_dotted_test", "{{ 1 is a" + ".b" * n + " }}", r"No test named", exit=[1])
    s.render("chain_dotted_filter", "{{ 1|a" + ".b" * n + " }}", r"No filter named", exit=[1])
    s.render("chain_add", "{{ 1" + " + 1" * n + " }}", deep, exit=[1])
    s.render("chain_mul", "{{ 1" + " * 1" * n + " }}", deep, exit=[1])
    s.render("chain_pow", "{{ 1" + " ** 1" * n + " }}", deep, exit=[1])
    s.render("chain_and", "{{ 1" + " and 1" * n + " }}", deep, exit=[1])
    s.render("chain_or", "{{ 0" + " or 0" * n + " }}", deep, exit=[1])
    s.render("chain_concat", "{{ 'a'" + " ~ 'a'" * n + " }}", None, exit=[0, 1])
    s.render("chain_compare", "{{ 1" + " < 2" * n + " }}", None, exit=[0, 1])
    # an elif chain is one level of nesting, a flat list of branches: 100000 of
    # them render, within every bound (Python's compiler gives up: MemoryError)
    s.render("chain_elif", "{% if false %}" + "{% elif false %}" * n + "{% else %}ok{% endif %}", None, exit=[0])
    # values nested deeper than Python's recursion limit: refused as RecursionError would
    s.render("deep_value_repr",
             "{% set ns = namespace(x=[]) %}{% for i in range(100000) %}{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x }}",
             r"RuntimeError: maximum recursion depth", exit=[1])
    s.render("deep_value_tojson",
             "{% set ns = namespace(x={}) %}{% for i in range(100000) %}{% set ns.x = {'a': ns.x} %}{% endfor %}"
             "{{ ns.x|tojson }}", None, exit=[1])


def syntax(s):
    """Unterminated everything, NUL bytes, invalid UTF-8."""
    for name, text in [("var", "{{"), ("block", "{%"), ("comment", "{#"), ("string", "{{ 'abc"),
                       ("dstring", '{{ "abc'), ("raw", "{% raw %}abc"), ("if", "{% if x %}"),
                       ("for", "{% for x in y %}"), ("macro", "{% macro m() %}"), ("call", "{% call m() %}"),
                       ("set_block", "{% set x %}"), ("filter_block", "{% filter upper %}"),
                       ("paren", "{{ ("), ("list", "{{ [1,"), ("dict", "{{ {"), ("subscript", "{{ x["),
                       ("args", "{{ f(1,"), ("var_tail", "text {{ x "), ("block_tail", "text {% if"),
                       ("nested", "{% for x in y %}{% if x %}{{ x"), ("comment_tail", "a {# b {{ c }}")]:
        s.like_reference("unterminated_" + name, text)
    s.render("nul_in_text", b"ab\0cd{{ 'x\0y' }}\0", None, exit=[0])
    s.render("nul_in_context", "{{ messages[0].content|length }}", None, exit=[0],
             context='{"messages": [{"role": "user", "content": "a\\u0000b"}]}')
    for name, data in [("invalid_start", b"ab\xffcd"), ("truncated_at_end", b"abc\xe4\xb8"),
                       ("overlong", b"{{ 1 }}\xc0\x80"), ("surrogate", b"x\xed\xa0\x80"),
                       ("in_tag", b"{{ '\xfe' }}"), ("beyond_unicode", b"\xf4\x90\x80\x80")]:
        s.render("utf8_template_" + name, data, utf8_error(data), exit=[1])
    bad_context = b'{"messages":[{"role":"user","content":"h\xffi"}]}'
    s.render("utf8_context", "{{ messages }}", utf8_error(bad_context), exit=[1], context=bad_context)
    s.render("utf8_context_escape_surrogate", "{{ messages }}", r"JSONDecodeError", exit=[1],
             context='{"messages":[{"role":"user","content":"\\ud800"}]}')


def sandbox(s):
    """Jinja2's immutable sandbox: mutation and private attributes, as the reference."""
    for name, text in [("list_append", "{{ messages.append(1) }}"), ("list_pop", "{{ messages.pop() }}"),
                       ("dict_update", "{{ {}.update({'a': 1}) }}"),
                       ("dict_setdefault", "{{ messages[0].setdefault('x', 1) }}"),
                       ("dunder_len", "{{ (messages|first).__len__() }}"),
                       ("format_dunder", "{{ '{0.__class__.__mro__}'.format(1) }}"),
                       ("format_index", "{{ '{0[0]}'.format(messages) }}"),
                       ("class", "{{ ''.__class__ }}"), ("subclasses", "{{ {}.__class__.__subclasses__() }}"),
                       ("init_globals", "{{ cycler.__init__.__globals__ }}"), ("range_globals", "{{ range.__globals__ }}"),
                       ("private", "{{ messages[0]._private }}"), ("attr_filter", "{{ messages|attr('__class__') }}"),
                       ("namespace_init", "{{ namespace.__init__ }}"),
                       ("loop_private", "{% for x in [1] %}{{ loop._after }}{% endfor %}"),
                       ("str_mod_mapping", "{{ '%(a)s' % {'a': 1} }}"),
                       ("mutate_via_set", "{% set x = messages %}{{ x.clear() }}")]:
        s.like_reference("sandbox_" + name, text)


def files(s):
    """Big and hostile files: templates, JSON, GGUF."""
    s.render("template_20mb_text", "x" * (20 << 20), None, exit=[0, 1])
    s.render("template_20mb_tags", "{{ x }}" * ((20 << 20) // 7), None, exit=[0, 1])
    s.render("template_20mb_one_string", "{{ '" + "a" * (20 << 20) + "' }}", limit("max-string"), exit=[1])
    s.render("template_20mb_comment", "{# " + "a" * (20 << 20) + " #}ok", None, exit=[0, 1])
    deep = "[" * (1 << 20) + "]" * (1 << 20)
    s.render("json_1mb_deep_array", "{{ messages }}", limit("max-json-depth"), exit=[1],
             context='{"messages": ' + deep + '}')
    s.render("json_1mb_deep_object", "{{ messages }}", limit("max-json-depth"), exit=[1],
             context='{"a":' * (1 << 20) + '1' + '}' * (1 << 20))
    tools = s.file("deep_tools.json", deep)
    s.add("json_1mb_deep_tools", ["render", "--tools", tools, s.file("tools.jinja", "{{ tools }}"), s.ctx],
          limit("max-json-depth"), exit=[1])
    s.add("json_deep_define", ["render", "-D", "x=" + "[" * 5000 + "]" * 5000, s.file("define.jinja", "{{ x }}"), s.ctx],
          limit("max-json-depth"), exit=[1])
    s.render("json_truncated", "{{ messages }}", r"JSONDecodeError", exit=[1], context='{"messages": [1, 2')
    s.render("json_huge_number", "{{ messages }}", None, exit=[0, 1], context='{"messages": 1' + "0" * 100000 + '}')
    s.render("json_many_keys", "{{ messages|length }}", None, exit=[0, 1],
             context='{"messages": {' + ",".join('"k%d": %d' % (i, i) for i in range(200000)) + '}}')
    config = s.file("tokenizer_config_deep.json", '{"chat_template": "hi", "x": ' + deep + '}')
    s.add("tokenizer_config_1mb_deep", ["render", config, s.ctx], limit("max-json-depth"), exit=[1])
    s.add("tokenizer_config_20mb_template",
          ["render", s.file("tokenizer_config_big.json", json.dumps({"chat_template": "{{ bos_token }}" * ((20 << 20) // 15),
                                                                      "bos_token": "x"})), s.ctx],
          limit("max-string"), exit=[1])
    # no "default" among them: transformers' ValueError lists sorted(names),
    # cut where an error message ends (cf_error.message holds 1023 bytes)
    for name, names in [("tokenizer_config_300k_named_templates", ["n%d" % i for i in range(300000)]),
                        ("tokenizer_config_300k_repeated_names",
                         ["it's", "b\\"] * 2 + ["a"] * 5000 + ["n%d" % (i % 1000) for i in range(295000)])]:
        listing = [{"name": n, "template": "x"} for n in names]
        message = ("ValueError: This model has multiple chat templates with no default specified! Please either "
                   "pass a chat template or the name of the template you wish to use to the `chat_template` "
                   "argument. Available template names are %s." % sorted(set(names)))
        s.add(name, ["render", s.file(name + ".json", json.dumps({"chat_template": listing})), s.ctx],
              "^chatfmt: error: " + re.escape(message[:len("ValueError: ") + 1023]), exit=[1])
    gguf = os.path.join(s.dir, "gguf")
    subprocess.run([sys.executable, os.path.join(ROOT, "tests", "make_gguf.py"), gguf], check=True,
                   stdout=subprocess.DEVNULL)
    for name, expect in [("huge_string", r"FormatError: .*4611686018427387904 bytes"),
                         ("huge_array", r"FormatError: .*4611686018427387904"),
                         ("huge_kv_count", r"FormatError"), ("huge_key", r"FormatError"),
                         ("truncated_header", r"FormatError"), ("deep_nesting", r"FormatError")]:
        s.add("gguf_" + name, ["render", os.path.join(gguf, name + ".gguf"), s.ctx], expect, exit=[1])


def replies(s):
    """Replies: (needs `chatfmt parse`, guarded on `parse --help`)."""
    s.add("reply_200k_tool_call_openings",
          ["parse", "--template", "toolcall-qwen3", s.file("reply_openings.txt", "<tool_call>" * 200000)],
          None, exit=[0], needs="parse")
    s.add("reply_200k_openings_stream",
          ["parse", "--stream", "--template", "toolcall-qwen3", os.path.join(s.dir, "reply_openings.txt")],
          None, exit=[0], needs="parse")
    s.add("reply_200k_glm_openings",
          ["parse", "--format", "glm45", s.file("reply_glm.txt", "<tool_call>f<arg_key>" * 200000)],
          None, exit=[0], needs="parse")
    s.add("reply_200k_command_a_openings",
          ["parse", "--format", "command-a", s.file("reply_cmda.txt", "<|START_ACTION|>[{" * 200000)],
          None, exit=[0], needs="parse")
    s.add("reply_deep_json_arguments",
          ["parse", "--format", "hermes",
           s.file("reply_deep.txt", '<tool_call>{"name": "f", "arguments": ' + "[" * 1000000 + "]" * 1000000 + "}</tool_call>")],
          None, exit=[0, 1], needs="parse")
    s.add("reply_invalid_utf8",
          ["parse", "--format", "hermes", s.file("reply_utf8.txt", b"<think>\xff\xe4\xb8</think>ok \xf0\x9f")],
          None, exit=[0], needs="parse")
    s.add("reply_20mb", ["parse", "--format", "hermes", s.file("reply_big.txt", "word " * (4 << 20))],
          None, exit=[0, 1], needs="parse")


def settings(s):
    """Every limit has a CLI option: lowered it stops a small render, raised it lets a big one through."""
    for option, value, template in [
            ("max-steps", "100", "{% for i in range(1000) %}{% endfor %}"),
            ("max-recursion", "10", "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(50) }}"),
            ("max-parse-depth", "20", "{{ " + "(" * 30 + "1" + ")" * 30 + " }}"),
            ("max-output", "100", "{{ 'x' * 1000 }}"),
            ("max-string", "100", "{% set x = 'a' * 1000 %}"),
            ("max-items", "100", "{% set x = range(1000)|list %}"),
            ("max-memory", "1000000", "{% for i in range(100) %}{% set x = 'a' * 100000 %}{% endfor %}"),
            ("max-range", "100", "{{ range(1000)|length }}")]:
        name = "option_" + option.replace("-", "_")
        s.render(name + "_default", template, None, exit=[0])
        # (the range error is Jinja2's own message, with the lowered limit in it)
        stopped = r"MAX_RANGE \(%s\)" % value if option == "max-range" else r"--%s" % option
        s.render(name + "_lowered", template, stopped, exit=[1], args=["--" + option, value])
    deep = '{"messages": ' + "[" * 600 + "]" * 600 + '}'
    s.render("option_max_json_depth_default", "{{ messages|length }}", limit("max-json-depth"), exit=[1], context=deep)
    s.render("option_max_json_depth_raised", "{{ messages|length }}", None, exit=[0], context=deep,
             args=["--max-json-depth", "1000"])
    s.render("option_max_json_bytes_lowered", "{{ messages|length }}", limit("max-json-bytes"), exit=[1],
             args=["--max-json-bytes", "20"])
    s.render("option_max_recursion_raised",
             "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(700) }}", None, exit=[0],
             args=["--max-recursion", "1000"])
    s.render("option_max_range_raised", "{{ range(200000)|length }}", None, exit=[0], args=["--max-range", "300000"])


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    s = Suite(sys.argv[1])
    for group in (sizes, work, repeated, nesting, syntax, sandbox, files, replies, settings):
        group(s)
    s.write_manifest()
    print("%d cases in %s" % (len(s.cases), os.path.join(s.dir, "manifest.jsonl")))


if __name__ == "__main__":
    main()
