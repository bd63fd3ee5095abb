#!/usr/bin/env python3
"""Random Jinja2 template + context generator for differential testing.

usage: randgen.py SEED N [--start K]   -> N raw-mode batch cases on stdout

Each case is generated from its own random stream seeded with "SEED:I", so
case I of a seed is the same whatever N or --start are (handy to reproduce one
failing case: `randgen.py 7 1 --start 412`).

Templates are built from a typed grammar over a random chat-like context
(messages, tools, strings with unicode/quotes/newlines, ints, floats, None,
bools, lists, dicts). They use every statement (if/elif/else, for with filter,
else, unpacking, recursive, loop.*, break/continue, set in all forms,
namespaces, macros with defaults and caller, call/filter/generation/with/raw/autoescape
blocks, comments), whitespace control on every tag, filters, tests and
str/dict methods. Most cases render; a few are meant to fail (syntax errors,
undefined attributes, type errors, sandbox violations, raise_exception).
Sizes are bounded so every case renders in milliseconds.
"""
import argparse
import json
import random
import sys

from randgen_scope import make_scope_case

# ---- random data ---------------------------------------------------------------

WORDS = ["hello", "world", "Paris", "tool", "call", "x", "ab", "The quick", "user", "data",
         "ÉCOLE", "straße", "naïve", "中文", "日本語", "😀", "İstanbul", "ǅ", "Ωmega", "ﬁne",
         "a\nb", "tab\there", "it's", 'say "hi"', "back\\slash", "  padded  ", "", " ", "<tag>",
         "&amp;", "100%", "1,2,3", "CamelCase", "snake_case", "UPPER", "lower", "mIxEd", "a b c",
         "\u200b", "\xa0nbsp", "line1\r\nline2", "42", "3.14", "None", "true"]
ROLES = ["system", "user", "assistant", "tool"]
KEYS = ["name", "id", "type", "value", "role", "content", "lang", "score"]
STRIP_ARGS = ["x", " ", "ab", "\n"]
JOINERS = [", ", "", "|", "\n"]
SEPARATORS = [" ", ",", "a", "\n"]


def rand_str(r):
    parts = [r.choice(WORDS) for _ in range(r.randint(1, 3))]
    return r.choice([" ", "", "-", "\n"]).join(parts)


def rand_scalar(r):
    kind = r.randrange(7)
    if kind == 0:
        return r.randint(-20, 100)
    if kind == 1:
        return r.choice([0.5, -1.25, 3.0, 1e-7, 2.5e10, 0.1, 1 / 3, -0.0, 1e16, 123.456])
    if kind == 2:
        return r.choice([True, False])
    if kind == 3:
        return None
    if kind == 4:
        return r.choice([2 ** 64 + 1, -(2 ** 70)])
    return rand_str(r)


def rand_message(r):
    m = {"role": r.choice(ROLES), "content": rand_str(r)}
    if r.random() < 0.1:
        m["content"] = [{"type": "text", "text": rand_str(r)}]
    if m["role"] == "assistant" and r.random() < 0.4:
        m["tool_calls"] = [{"id": f"call_{k}", "type": "function",
                            "function": {"name": r.choice(["get_weather", "search", "f"]),
                                         "arguments": {r.choice(KEYS): rand_scalar(r) for _ in range(r.randint(0, 2))}}}
                           for k in range(r.randint(1, 2))]
    if m["role"] == "assistant" and r.random() < 0.3:
        m["reasoning_content"] = rand_str(r)
    return m


def rand_tree(r, depth):
    return [{"name": rand_str(r), "children": rand_tree(r, depth - 1) if depth > 0 and r.random() < 0.6 else []}
            for _ in range(r.randint(1, 2))]


def rand_context(r):
    ctx = {
        "messages": [rand_message(r) for _ in range(r.randint(1, 5))],
        "name": rand_str(r),
        "title": r.choice(WORDS),
        "count": r.randint(-3, 12),
        "ratio": r.choice([0.5, 2.25, -1.5, 1e-5, 3.0, 7.125, 1e21]),
        "flag": r.choice([True, False]),
        "nothing": None,
        "nums": [r.randint(-5, 20) for _ in range(r.randint(0, 5))],
        "words": [r.choice(WORDS) for _ in range(r.randint(0, 5))],
        "mixed": [rand_scalar(r) for _ in range(r.randint(0, 4))],
        "meta": {k: rand_scalar(r) for k in r.sample(KEYS, r.randint(0, 4))},
        "pairs": [[r.choice(KEYS), r.randint(0, 9)] for _ in range(r.randint(0, 3))],
        "tree": rand_tree(r, 2),
        "add_generation_prompt": r.choice([True, False]),
    }
    if r.random() < 0.5:
        ctx["tools"] = [{"type": "function", "function": {"name": "get_weather", "description": rand_str(r),
                                                          "parameters": {"type": "object", "properties": {
                                                              "city": {"type": "string"}}}}}]
    return ctx


# Types of the context variables, as the expression grammar sees them.
CONTEXT_TYPES = {
    "messages": "list:msg", "name": "str", "title": "str", "count": "int", "ratio": "float",
    "flag": "bool", "nothing": "none", "nums": "list:int", "words": "list:str", "mixed": "list:any",
    "meta": "dict", "pairs": "list:pair", "add_generation_prompt": "bool",
}

SCALAR_TYPES = ["str", "int", "float", "bool"]
NAMED_OBJECTS = ("macro", "namespace")      # bound names that are not plain values
ALL_TYPES = SCALAR_TYPES + ["none", "list:str", "list:int", "list:any", "dict", "msg"]


def elem_type(t):
    if t.startswith("list:"):
        return t[5:]
    return "str" if t in ("str", "dict") else "any"


def literal(s, r):
    """A Jinja string literal for s, with a random quote style and escapes."""
    q = r.choice(["'", '"'])
    out = []
    for ch in s:
        if ch in ("\\", q):
            out.append("\\" + ch)
        elif ch == "\n" and r.random() < 0.5:
            out.append("\\n")
        elif ord(ch) > 127 and r.random() < 0.3:
            out.append("\\u%04x" % ord(ch) if ord(ch) < 0x10000 else "\\U%08x" % ord(ch))
        else:
            out.append(ch)
    return q + "".join(out) + q


# ---- the generator -----------------------------------------------------------------

class Gen:
    def __init__(self, r):
        self.r = r
        self.scopes = [dict(CONTEXT_TYPES)]
        self.loops = []          # element types of the enclosing loops (innermost last)
        self.breakable = False   # may {% break %} / {% continue %} appear here
        self.macros = {}         # name -> [(param, type, default)]; visibility via scopes
        self.namespaces = {}     # name -> {attr: type}; visibility via scopes
        self.counter = 0
        self.budget = 40         # statements left for this template

    # -- helpers
    def chance(self, p):
        return self.r.random() < p

    def pick(self, seq):
        return self.r.choice(seq)

    def fresh(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def vars_of(self, t):
        """Names in scope whose type is t ("any": every plain value)."""
        found = {}
        for scope in self.scopes:
            found.update(scope)
        return sorted(n for n, vt in found.items() if vt == t or (t == "any" and vt not in NAMED_OBJECTS))

    def bind(self, name, t):
        self.scopes[-1][name] = t

    def one_of(self, strings):
        return literal(self.pick(strings), self.r)

    # -- expressions, by type
    def expr(self, t, depth=3):
        if t == "any":
            names = self.vars_of("any")
            if names and self.chance(0.3):
                return self.pick(names)
            t = self.pick(ALL_TYPES)
        names = self.vars_of(t)
        if names and self.chance(0.45 if depth > 0 else 0.8):
            return self.pick(names)
        if depth <= 0 or self.chance(0.2):
            return self.lit(t)
        maker = getattr(self, "e_" + t.replace(":", "_"), None)
        if maker is None:
            return self.lit(t)
        # Compound operands are parenthesized so their type is what we meant;
        # a few productions mix operators bare to exercise precedence.
        return f"({maker(depth - 1)})"

    def atom(self, t):
        """A variable or literal of type t: safe as an operand without parentheses."""
        names = self.vars_of(t)
        return self.pick(names) if names and self.chance(0.6) else self.lit(t if t != "any" else self.pick(ALL_TYPES))

    def lit(self, t):
        r = self.r
        if t == "str":
            return literal(rand_str(r) if self.chance(0.5) else self.pick(WORDS), r)
        if t == "int":
            return str(self.pick([0, 1, 2, 3, 5, 7, 10, -1, -4, 42, 100]))
        if t == "float":
            return self.pick(["0.5", "1.0", "2.5", "-0.0", "1e-7", "3.25e10", "0.1", "1_000.5", "1e22", "100.0"])
        if t == "bool":
            return self.pick(["true", "false", "True", "False"])
        if t == "none":
            return self.pick(["none", "None"])
        if t.startswith("list:"):
            e = elem_type(t)
            e = self.pick(ALL_TYPES[:5]) if e in ("any", "pair") else e
            if e == "msg":
                return "[" + ", ".join(self.lit("msg") for _ in range(self.r.randint(1, 3))) + "]"
            items = [self.lit(e) for _ in range(self.r.randint(0, 4))]
            if items and self.chance(0.15):
                return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
            return "[" + ", ".join(items) + "]"
        if t == "msg":
            return "{'role': %s, 'content': %s}" % (literal(self.pick(ROLES), r), self.lit("str"))
        if t == "dict":
            keys = r.sample(KEYS, r.randint(0, 3))
            return "{" + ", ".join(f"{literal(k, r)}: {self.lit(self.pick(SCALAR_TYPES))}" for k in keys) + "}"
        return "none"

    def e_str(self, d):
        x = lambda: self.expr("str", d)  # noqa: E731
        a = lambda: self.expr("any", d)  # noqa: E731
        choices = [
            lambda: f"{a()} ~ {a()}",
            lambda: f"{self.atom('any')} ~ {self.atom('str')}|upper",
            lambda: f"{self.atom('str')} ~ {self.atom('int')} ~ {self.atom('any')}",
            lambda: f"{x()}|{self.pick(['upper', 'lower', 'title', 'capitalize', 'trim', 'string', 'e', 'reverse'])}",
            lambda: f"{x()}.{self.pick(['upper', 'lower', 'strip', 'lstrip', 'rstrip', 'title', 'capitalize', 'swapcase'])}()",
            lambda: f"{x()}.strip({self.one_of(STRIP_ARGS)})",
            lambda: f"{x()}.replace({self.lit('str')}, {self.lit('str')})",
            lambda: f"{x()}|replace({literal(self.pick(['a', 'e', ' ', 'é']), self.r)}, {self.lit('str')})",
            lambda: f"{x()}[{self.slice()}]",
            lambda: f"{self.expr(self.pick(['list:str', 'list:int']), d)}|join({self.one_of(JOINERS)})",
            lambda: f"{a()}|tojson",
            lambda: f"{a()}|tojson(indent={self.pick([2, 4])})",
            lambda: f"{self.expr('dict', d)}|tojson(sort_keys=true)",
            lambda: f"{a()}|string",
            lambda: f"'%s|%s' % ({a()}, {a()})",
            lambda: f"'%d/%5.2f' % ({self.expr('int', d)}, {self.expr('float', d)})",
            lambda: f"'{{}}:{{}}'.format({a()}, {x()})",
            lambda: f"{self.expr('msg', d)}.role",
            lambda: f"{self.expr('msg', d)}['content']",
            lambda: f"{self.expr('msg', d)}.get('reasoning_content', {self.lit('str')})",
            lambda: f"{x()} if {self.expr('bool', d)} else {x()}",
            lambda: f"{x()}|indent({self.pick([2, 4])}{self.pick(['', ', true', ', first=true'])})",
            lambda: f"{x()}|center({self.pick([5, 12])})",
            lambda: f"{x()}|truncate({self.pick([5, 9, 20])})",
            lambda: f"{x()}.split({self.lit('str')})|join('+')",
            lambda: f"{x()} * {self.pick([0, 1, 2, 3])}",
            lambda: f"{x()}|first",
            lambda: f"{x()}|last",
            lambda: f"{x()}|wordwrap(10)",
            lambda: f"{a()}|default({self.lit('str')})",
            lambda: f"{x()}.zfill(6)",
            lambda: f"{x()}.ljust(8, '.')",
            lambda: f"{self.expr('dict', d)}.get({self.lit('str')}, {x()})",
            lambda: f"{x()}|striptags",
            lambda: f"{x()}|urlencode",
            lambda: f"{self.expr('list:str', d)}|first|default('')",
            lambda: f"{x()}.title().split()|join(' ')",
            lambda: f"{x()}|{self.pick(['escape', 'forceescape', 'safe'])}{self.pick(['', '|string', ' ~ ' + repr('<&>')])}",
            lambda: f"{self.expr(self.pick(['int', 'float']), d)}|filesizeformat{self.pick(['', '(true)'])}",
            lambda: f"{x()}|urlize{self.pick(['', '(10)', '(nofollow=true)'])}",
            lambda: f"'%s-%s'|format({a()}, {x()})", lambda: f"{a()}|pprint",
            lambda: f"{self.expr('dict', d)}|xmlattr{self.pick(['', '(false)'])}",
            lambda: f"{self.expr('msg', d)}|attr({self.pick(['role', 'content', 'nope'])!r})|string",
            lambda: f"{self.expr('dict', d)}|items|list|string", lambda: f"{a()}|d({x()})",
            lambda: f"{x()}.{self.pick(['partition', 'rpartition'])}({self.one_of(SEPARATORS)})|join('/')",
            lambda: f"{x()}.{self.pick(['removeprefix', 'removesuffix'])}({self.lit('str')})",
            lambda: f"{x()}.{self.pick(['casefold', 'expandtabs', 'lstrip', 'swapcase'])}()",
            lambda: f"{x()}.rsplit({self.one_of(SEPARATORS)}, {self.pick([0, 1, -1])})|join('+')",
            lambda: f"{x()}.splitlines({self.pick(['true', 'false'])})|join('/')",
            lambda: f"{x()}.center({self.pick([7, 12])}, {literal(self.pick(['*', '-']), self.r)})",
            lambda: f"{x()}|truncate({self.pick([4, 8])}, {self.pick(['true', 'false'])}, {literal(self.pick(['…', '!']), self.r)}, {self.pick([0, 2])})",
            lambda: f"{x()}|wordwrap({self.pick([3, 6])}, {self.pick(['true', 'false'])}, {literal(self.pick(['|', chr(10)]), self.r)})",
            lambda: f"{x()}|indent({self.pick([1, 3])}, first={self.pick(['true', 'false'])}, blank={self.pick(['true', 'false'])})",
            lambda: f"{self.expr('dict', d)}|dictsort(by={literal(self.pick(['key', 'value']), self.r)}, reverse={self.pick(['true', 'false'])})|string",
            lambda: f"{self.expr('list:msg', d)}|groupby('role', default='none')|map(attribute='list')|map('length')|join(',')",
            lambda: f"{self.expr('list:msg', d)}|map(attribute='name', default={self.lit('str')})|join(',')",
            lambda: f"{self.expr('list:any', d)}|batch({self.pick([2, 3])}, {self.lit('str')})|list|string",
            lambda: f"{self.expr('list:any', d)}|slice({self.pick([2, 3])}, {self.lit('str')})|list|string",
            lambda: f"{self.expr('list:str', d)}|unique(case_sensitive={self.pick(['true', 'false'])})|join(',')",
            lambda: f"{self.expr('dict', d)}.items()|string", lambda: f"{self.expr('dict', d)}.values()|list|string",
            lambda: f"{self.expr('dict', d)}.copy()|string", lambda: f"{self.expr('list:any', d)}.copy()|string",
            lambda: f"{self.expr('str', d)}|int(-1, {self.pick([2, 16, 0])})|string",
        ]
        if self.vars_of("macro"):
            choices.append(lambda: self.macro_call(d))
        if self.loops:
            choices.append(lambda: f"loop.cycle({self.lit('str')}, {self.lit('str')})")
        choices += self.namespace_attrs("str")
        return self.pick(choices)()

    def e_int(self, d):
        i = lambda: self.expr("int", d)  # noqa: E731
        choices = [
            lambda: f"{i()} + {i()}", lambda: f"{i()} - {i()}", lambda: f"{i()} * {self.pick(['2', '3', '-1'])}",
            lambda: f"{i()} // {self.pick(['2', '3', '-2', '7'])}", lambda: f"{i()} % {self.pick(['2', '3', '-3', '5'])}",
            lambda: f"{self.pick(['2', '3', '-2', '10'])} ** {self.pick(['0', '1', '2', '3'])}",
            lambda: f"{self.expr(self.pick(['str', 'list:int', 'list:str', 'dict', 'list:msg']), d)}|length",
            lambda: f"{self.expr('list:int', d)}|sum", lambda: f"{self.expr('list:int', d)}|max|default(0)",
            lambda: f"{self.expr('list:int', d)}|min|default(-1)",
            lambda: f"{self.expr('str', d)}|int", lambda: f"{self.expr('float', d)}|int",
            lambda: f"{self.expr('float', d)}|round|int", lambda: f"{self.expr('str', d)}.count({self.lit('str')})",
            lambda: f"{self.expr('str', d)}.find({self.lit('str')})", lambda: f"{self.expr('str', d)}|wordcount",
            lambda: f"-{i()}", lambda: f"{i()}|abs", lambda: f"({i()})",
            lambda: f"{self.expr('list:int', d)}|count", lambda: f"{i()} if {self.expr('bool', d)} else {i()}",
            lambda: f"{self.atom('int')} + {self.atom('int')} * {self.atom('int')} - {self.atom('int')}",
            lambda: f"-{self.pick(['2', '3', 'count'])} ** 2", lambda: f"{self.atom('int')} // 2 * 2 + {self.atom('int')} % 3",
            lambda: f"{self.atom('list:int')}|length + 1", lambda: f"({i()}).bit_length()",
        ]
        if self.loops:
            choices += [lambda: f"loop.{self.pick(['index', 'index0', 'revindex', 'revindex0', 'length', 'depth'])}"] * 3
        choices += self.namespace_attrs("int")
        return self.pick(choices)()

    def e_float(self, d):
        n = lambda: self.expr(self.pick(["int", "float"]), d)  # noqa: E731
        return self.pick([
            lambda: f"{n()} / {self.pick(['2', '4', '3', '-8', '0.5'])}", lambda: f"{n()} * {self.expr('float', d)}",
            lambda: f"{n()} + 0.5", lambda: f"{self.expr('str', d)}|float", lambda: f"{n()}|float",
            lambda: f"{self.expr('float', d)}|round({self.pick([0, 1, 2])})",
            lambda: f"{self.expr('float', d)}|round(1, {literal(self.pick(['floor', 'ceil', 'common']), self.r)})",
            lambda: f"{self.expr('float', d)} - {n()}", lambda: f"{self.expr('float', d)} // 1",
            lambda: f"{self.expr('float', d)} % 2", lambda: f"{self.expr('list:int', d)}|sum(start=0.5)",
        ])()

    def e_bool(self, d):
        a = lambda: self.expr("any", d)  # noqa: E731
        same = self.pick(["int", "str", "float"])
        choices = [
            lambda: f"{self.expr(same, d)} {self.pick(['==', '!=', '<', '<=', '>', '>='])} {self.expr(same, d)}",
            lambda: f"{a()} == {a()}", lambda: f"{a()} is defined", lambda: f"{a()} is not none",
            lambda: f"{a()} is {self.pick(['string', 'number', 'integer', 'float', 'mapping', 'iterable', 'sequence', 'boolean', 'none', 'callable'])}",
            lambda: f"{self.expr('str', d)} in {self.expr(self.pick(['str', 'list:str', 'dict']), d)}",
            lambda: f"{self.expr('int', d)} not in {self.expr('list:int', d)}",
            lambda: f"not {self.expr('bool', d)}", lambda: f"{self.expr('bool', d)} and {a()}",
            lambda: f"{self.expr('bool', d)} or {self.expr('bool', d)}",
            lambda: f"{self.expr('str', d)}.startswith({self.lit('str')})",
            lambda: f"{self.expr('str', d)}.endswith({self.lit('str')})",
            lambda: f"{self.expr('int', d)} is {self.pick(['odd', 'even', 'divisibleby 3', 'divisibleby(2)'])}",
            lambda: f"{self.expr('str', d)} is {self.pick(['lower', 'upper'])}",
            lambda: f"{self.expr('list:any', d)}|length > {self.pick([0, 1, 2])}",
            lambda: f"{a()} is sameas {self.pick(['true', 'false', 'none'])}",
            lambda: f"{self.expr('msg', d)}.tool_calls is defined",
            lambda: f"{self.expr('msg', d)}.role == {literal(self.pick(ROLES), self.r)}",
            lambda: f"{self.expr('str', d)}.isdigit()",
            lambda: f"({self.expr('int', d)} > 0) == {self.expr('bool', d)}",
            lambda: f"{self.expr('int', d)} < {self.expr('int', d)} < {self.expr('int', d)}",
            lambda: f"not {self.atom('int')} == {self.atom('int')}",
            lambda: f"{self.atom('bool')} and not {self.atom('bool')} or {self.atom('bool')}",
            lambda: f"{self.atom('str')} in {self.atom('str')} ~ {self.atom('str')}",
            lambda: f"{self.expr(same, d)} is {self.pick(['eq', 'ne', 'lt', 'le', 'gt', 'ge', 'greaterthan', 'lessthan', '==', '<'])} {self.expr(same, d)}",
            lambda: f"{self.expr('str', d)} is in {self.expr(self.pick(['str', 'list:str', 'dict']), d)}",
            lambda: f"{a()} is {self.pick(['undefined', 'escaped', 'true', 'false'])}",
            lambda: f"{literal(self.pick(['upper', 'nope', 'odd', 'tojson']), self.r)} is {self.pick(['filter', 'test'])}",
            lambda: f"{self.expr('str', d)}|e is escaped",
        ]
        if self.loops:
            choices += [lambda: f"loop.{self.pick(['first', 'last'])}", lambda: "loop.previtem is defined",
                        lambda: f"loop.changed({self.pick(['1', 'loop.index // 2'])})"]
        return self.pick(choices)()

    def e_none(self, d):
        return self.pick(["none", f"{self.expr('dict', d)}.get('nope')", f"{self.expr('msg', d)}.get('missing')"])

    def e_list_str(self, d):
        return self.pick([
            lambda: f"{self.expr('list:str', d)}|sort", lambda: f"{self.expr('list:str', d)}|sort(reverse=true)",
            lambda: f"{self.expr('list:str', d)}|unique|list", lambda: f"{self.expr('list:str', d)}|reverse|list",
            lambda: f"{self.expr('list:str', d)}[{self.slice()}]", lambda: f"{self.expr('list:str', d)} + {self.expr('list:str', d)}",
            lambda: f"{self.expr('str', d)}.split({self.pick(['', self.one_of(SEPARATORS)])})",
            lambda: f"{self.expr('str', d)}|list", lambda: f"{self.expr('list:msg', d)}|map(attribute='role')|list",
            lambda: f"{self.expr('list:str', d)}|map('upper')|list", lambda: f"{self.expr('dict', d)}.keys()|list",
            lambda: f"{self.expr('list:int', d)}|map('string')|list", lambda: f"{self.expr('dict', d)}|list",
            lambda: f"{self.expr('list:str', d)}|select('lower')|list", lambda: f"{self.expr('str', d)}.splitlines()",
            lambda: f"{self.expr('list:str', d)}|reject('equalto', {self.lit('str')})|list",
        ])()

    def e_list_int(self, d):
        return self.pick([
            lambda: f"range({self.pick(['3', '0', '1, 5', '10, 0, -3', '-2, 2'])})|list",
            lambda: f"{self.expr('list:int', d)}|sort", lambda: f"{self.expr('list:int', d)}|select('odd')|list",
            lambda: f"{self.expr('list:int', d)}|reject('even')|list", lambda: f"{self.expr('list:int', d)}|unique|list",
            lambda: f"{self.expr('list:int', d)}[{self.slice()}]", lambda: f"{self.expr('list:int', d)} + [{self.expr('int', d)}]",
            lambda: f"{self.expr('list:int', d)}|map('abs')|list", lambda: f"{self.expr('list:int', d)}|select('gt', 2)|list",
            lambda: f"{self.expr('list:str', d)}|map('length')|list", lambda: f"{self.expr('list:int', d)} * 2",
        ])()

    def e_list_any(self, d):
        return self.pick([
            lambda: "[" + ", ".join(self.expr("any", d) for _ in range(self.r.randint(0, 3))) + "]",
            lambda: f"{self.expr('dict', d)}.items()|list", lambda: f"{self.expr('dict', d)}|dictsort",
            lambda: f"{self.expr('list:any', d)}|batch(2)|list", lambda: f"{self.expr('list:int', d)}|slice(2)|list",
            lambda: f"{self.expr('dict', d)}.values()|list", lambda: f"{self.expr('list:any', d)}[::-1]",
            lambda: f"{self.expr('list:msg', d)}|selectattr('role', 'equalto', {literal(self.pick(ROLES), self.r)})|list",
            lambda: f"{self.expr('list:msg', d)}|rejectattr('tool_calls', 'defined')|map(attribute='content')|list",
            lambda: f"{self.expr('list:msg', d)}|groupby('role')|map(attribute='grouper')|list",
            lambda: f"{self.expr('list:any', d)}|map('string')|list",
            lambda: f"range({self.pick(['3', '0', '1, 5', '10, 0, -3', '-2, 2'])})",
            lambda: f"range({self.pick(['6', '2, 9', '10, 0, -2'])})[{self.slice()}]",
        ])()

    def e_dict(self, d):
        return self.pick([
            lambda: "{" + ", ".join(f"{literal(k, self.r)}: {self.expr('any', d)}" for k in self.r.sample(KEYS, self.r.randint(0, 3))) + "}",
            lambda: f"dict({', '.join(f'{k}={self.expr(self.pick(SCALAR_TYPES), d)}' for k in self.r.sample(KEYS, self.r.randint(0, 2)))})",
            lambda: f"{self.expr('msg', d)}", lambda: f"{self.expr('list:msg', d)}[0] if {self.expr('list:msg', d)} else {{}}",
        ])()

    def e_msg(self, d):
        return self.pick([lambda: f"{self.expr('list:msg', d)}[{self.pick(['0', '-1'])}]", lambda: self.lit("msg")])()

    def e_list_msg(self, d):
        return self.pick([lambda: f"{self.expr('list:msg', d)}[1:]", lambda: f"{self.expr('list:msg', d)}|reverse|list",
                          lambda: f"{self.expr('list:msg', d)}|selectattr('content')|list",
                          lambda: f"{self.expr('list:msg', d)}|sort(attribute='role')"])()

    def namespace_attrs(self, t):
        """Productions reading a visible namespace attribute of type t."""
        return [lambda n=name, k=k: f"{n}.{k}" for name in self.vars_of("namespace")
                for k, at in self.namespaces[name].items() if at == t]

    def slice(self):
        parts = [self.pick(["", "1", "-1", "2", "0", "-3"]), self.pick(["", "3", "-1", "10"])]
        if self.chance(0.3):
            parts.append(self.pick(["-1", "2", "-2"]))
        return ":".join(parts)

    def macro_call(self, d):
        """A call of a defined macro: required arguments, then maybe some defaulted ones."""
        name = self.pick(self.vars_of("macro"))
        params = self.macros[name]
        args = []
        for k, (pname, ptype, default) in enumerate(params):
            if default is not None and self.chance(0.5):
                continue
            value = self.expr(ptype, d)
            keyword = default is not None and (self.chance(0.5) or len(args) < k)
            args.append(f"{pname}={value}" if keyword else value)
            if keyword:
                break               # keep it simple: no positional after a keyword
        return f"{name}({', '.join(args)})"

    # -- tags with random whitespace control
    def tag(self, body):
        left = self.pick(["{%", "{%", "{%-", "{%+"])
        right = self.pick(["%}", "%}", "-%}", "+%}"])
        return f"{left} {body} {right}"

    def out(self, e):
        return f"{self.pick(['{{', '{{', '{{-'])} {e} {self.pick(['}}', '}}', '-}}'])}"

    def gap(self):
        """Text between statements: exercises trim_blocks / lstrip_blocks."""
        return self.pick(["", "", "\n", "\n  ", "  ", "\n\t", " ", "\n\n"])

    # -- statements
    def block(self, depth, count=None):
        parts = []
        for _ in range(count if count is not None else self.r.randint(1, 4)):
            if self.budget <= 0:
                break
            self.budget -= 1
            parts.append(self.gap() + self.stmt(depth))
        return "".join(parts) + self.gap()

    def stmt(self, depth):
        weights = [("text", 3), ("print", 6), ("if", 3), ("for", 3), ("set", 3), ("ns", 1), ("macro", 1),
                   ("filter", 1), ("comment", 1), ("with", 1), ("raw", 0.5), ("generation", 0.5),
                   ("chat", 0.7), ("recursive", 0.4), ("autoescape", 0.4)]
        if depth <= 0:
            weights = weights[:2] + [("set", 2)]
        if self.breakable:
            weights.append(("loopctl", 1))
        if self.loops:
            weights.append(("loopattr", 2))
        kinds, ws = zip(*weights)
        kind = self.r.choices(kinds, ws)[0]
        return getattr(self, "s_" + kind)(depth - 1)

    def s_text(self, d):
        return rand_str(self.r).replace("{", "(").replace("}", ")").replace("#", "")

    def s_print(self, d):
        return self.out(self.expr("any", 3))

    def s_if(self, d):
        s = self.tag(f"if {self.expr('bool', 2)}") + self.scoped(d)
        for _ in range(self.r.choice([0, 0, 1, 2])):
            s += self.tag(f"elif {self.expr('bool', 2)}") + self.scoped(d)
        if self.chance(0.5):
            s += self.tag("else") + self.scoped(d)
        return s + self.tag("endif")

    def scoped(self, d, bindings=None, loop=None, breakable=None):
        """A nested block with its own variables. loop: element type when the block is a
        for body; breakable: False inside bodies Jinja compiles as functions (macro,
        call, generation) or buffers (set, filter), where break/continue misbehave."""
        self.scopes.append(dict(bindings or {}))
        saved = self.breakable
        if loop is not None:
            self.loops.append(loop)
            self.breakable = True
        if breakable is not None:
            self.breakable = breakable
        body = self.block(d)
        if loop is not None:
            self.loops.pop()
        self.breakable = saved
        self.scopes.pop()
        return body

    def s_for(self, d):
        r = self.r
        form = r.randrange(5)
        if form == 0:
            k, v = self.fresh("k"), self.fresh("v")
            head, binds, et = f"{k}, {v} in {self.expr('dict', 1)}.items()", {k: "str", v: "any"}, "any"
        elif form == 1:
            a, b = self.fresh("a"), self.fresh("b")
            head, binds, et = f"{a}, {b} in pairs", {a: "str", b: "int"}, "pair"
        else:
            lt = self.pick(["list:int", "list:str", "list:msg", "list:any", "str", "dict"])
            x = self.fresh("x")
            et = elem_type(lt)
            head, binds = f"{x} in {self.expr(lt, 2)}", {x: et}
            if self.chance(0.3):
                self.scopes.append(dict(binds))
                head += f" if {self.expr('bool', 1)}"
                self.scopes.pop()
        s = self.tag(f"for {head}") + self.scoped(d, binds, et)
        if self.chance(0.25):       # the else body sits outside this loop
            s += self.tag("else") + self.scoped(d)
        return s + self.tag("endfor")

    def s_loopctl(self, d):
        return self.tag(f"if {self.expr('bool', 1)}") + self.tag(self.pick(["break", "continue"])) + self.tag("endif")

    def s_loopattr(self, d):
        return self.out(self.pick([
            "loop.index", "loop.index0", "loop.revindex", "loop.revindex0", "loop.first", "loop.last",
            "loop.length", "loop.depth", "loop.depth0", "loop.previtem", "loop.nextitem",
            "loop.cycle('odd', 'even')", "loop.changed(loop.index // 2)", "loop.index ~ '/' ~ loop.length"]))

    def s_recursive(self, d):
        item = self.fresh("node")
        body = (self.out(f"loop.depth ~ ':' ~ {item}.name") + self.gap() +
                self.tag(f"if {item}.children") + "[" + self.out(f"loop({item}.children)") + "]" + self.tag("endif"))
        return self.tag(f"for {item} in tree recursive") + body + self.tag("endfor")

    def s_set(self, d):
        form = self.r.randrange(5)
        name = self.fresh("v")
        if form == 0:
            b = self.fresh("v")
            t1, t2 = self.pick(ALL_TYPES[:5]), self.pick(ALL_TYPES[:5])
            s = self.tag(f"set {name}, {b} = {self.expr(t1, 2)}, {self.expr(t2, 2)}")
            self.bind(name, t1)
            self.bind(b, t2)
            return s
        if form == 1:
            body = self.scoped(max(d, 0), breakable=False)
            flt = self.pick(["", " | upper", " | trim", " | replace('a', 'A')"])
            self.bind(name, "str")
            return self.tag(f"set {name}{flt}") + body + self.tag("endset")
        t = self.pick(ALL_TYPES)
        s = self.tag(f"set {name} = {self.expr(t, 3)}")
        self.bind(name, t)
        return s

    def s_ns(self, d):
        name = self.fresh("ns")
        attrs = {"count": "int", "text": "str", "found": "bool"}
        s = self.tag(f"set {name} = namespace(count=0, text='', found=false)")
        self.namespaces[name] = attrs
        self.bind(name, "namespace")
        x = self.fresh("x")
        lt = self.pick(["list:int", "list:str", "list:msg", "list:any"])
        iterable = self.expr(lt, 1)
        self.scopes.append({x: elem_type(lt)})
        self.loops.append(elem_type(lt))
        upd = self.pick([f"{name}.count = {name}.count + 1", f"{name}.text = {name}.text ~ {self.expr('str', 1)}",
                         f"{name}.found = {self.expr('bool', 1)}"])
        loop = self.tag(f"for {x} in {iterable}") + self.gap() + self.tag(f"set {upd}") + self.gap() + self.tag("endfor")
        self.loops.pop()
        self.scopes.pop()
        return s + self.gap() + loop + self.gap() + self.out(f"{name}.{self.pick(list(attrs))}")

    def s_macro(self, d):
        name = self.fresh("m")
        params = []                     # (name, type, default literal or None)
        first_default = self.r.randint(0, 3)
        for k in range(self.r.randint(0, 3)):
            ptype = self.pick(SCALAR_TYPES)
            params.append((f"p{k}", ptype, self.lit(ptype) if k >= first_default else None))
        saved_loops, self.loops = self.loops, []     # loop.* is not visible in a macro body
        body = self.scoped(max(d, 0), {p: t for p, t, _ in params}, breakable=False)
        uses_caller = self.chance(0.3)
        if uses_caller:
            body += self.out("caller()")
        if self.chance(0.2):
            body += self.out("varargs ~ kwargs")
        self.loops = saved_loops
        signature = ", ".join(p if dflt is None else f"{p}={dflt}" for p, _, dflt in params)
        s = self.tag(f"macro {name}({signature})") + body + self.tag("endmacro")
        self.macros[name] = params
        self.bind(name, "macro")
        call = self.macro_call(1)
        if uses_caller:
            return s + self.gap() + self.tag(f"call {call}") + self.scoped(0, breakable=False) + self.tag("endcall")
        return s + self.gap() + self.out(call)

    def s_filter(self, d):
        f = self.pick(["upper", "lower", "trim", "title", "replace('o', '0')", "indent(2)", "trim|capitalize", "center(30)"])
        return self.tag(f"filter {f}") + self.scoped(d, breakable=False) + self.tag("endfilter")

    def s_comment(self, d):
        return self.pick(["{#", "{#-"]) + " " + self.s_text(d) + " " + self.pick(["#}", "-#}"])

    def s_with(self, d):
        name = self.fresh("w")
        t = self.pick(ALL_TYPES)
        return self.tag(f"with {name} = {self.expr(t, 2)}") + self.scoped(d, {name: t}) + self.tag("endwith")

    def s_autoescape(self, d):
        # a constant or a value known only at run time (Jinja2 treats them differently)
        value = self.pick(["true", "false", "True", self.expr("bool", 1)])
        return self.tag(f"autoescape {value}") + self.scoped(d) + self.tag("endautoescape")

    def s_raw(self, d):
        # Only `-` modifiers: Jinja does not recognise `{% raw +%}` as a raw block.
        return (self.pick(["{% raw %}", "{%- raw %}", "{% raw -%}"]) +
                self.pick(["{{ not_rendered }}", "{% if x %}", " {# c #} ", "plain"]) +
                self.pick(["{% endraw %}", "{%- endraw %}", "{% endraw -%}"]))

    def s_generation(self, d):
        return self.tag("generation") + self.scoped(d, breakable=False) + self.tag("endgeneration")

    def s_chat(self, d):
        """A message loop shaped like real chat templates."""
        m = self.fresh("message")
        binds = {m: "msg"}
        self.scopes.append(binds)
        self.loops.append("msg")
        tc = self.fresh("tc")
        body = (self.tag(f"if {m}['role'] == 'system'") + "<|system|>" + self.out(f"{m}['content']") +
                self.tag(f"elif {m}.role == 'assistant'") + "<|assistant|>" +
                self.out(f"{m}.content if {m}.content is string else {m}.content|map(attribute='text')|join") +
                self.gap() + self.tag(f"if {m}.tool_calls is defined and {m}.tool_calls") +
                self.tag(f"for {tc} in {m}.tool_calls") +
                self.out(f"{tc}.function.name ~ ' ' ~ {tc}.function.arguments|tojson") +
                self.tag("endfor") + self.tag("endif") +
                self.tag("else") + "<|" + self.out(f"{m}.role") + "|>" + self.out(f"{m}.content") +
                self.tag("endif") + self.pick(["\n", "<|end|>\n", ""]))
        self.loops.pop()
        self.scopes.pop()
        src = self.pick(["messages", "messages[1:]", "messages|selectattr('role', 'ne', 'tool')"])
        tail = self.tag("if add_generation_prompt") + "<|assistant|>\n" + self.tag("endif")
        return self.tag(f"for {m} in {src}") + body + self.tag("endfor") + tail

    # -- deliberate failures
    def breakage(self, text):
        r = self.r
        kind = r.randrange(8)
        if kind == 0 and len(text) > 4:          # truncate: usually an unclosed tag or block
            return text[: r.randrange(1, len(text))]
        if kind == 1:
            return text + self.tag(self.pick(["endif", "endfor", "else", "endmacro"]))
        if kind == 2:
            return text + self.out(f"raise_exception({self.lit('str')})")
        if kind == 3:
            return self.out(f"{self.pick(['nothing', 'undefined_var', 'meta.nope'])}.{self.pick(['x', 'role'])}.y") + text
        if kind == 4:
            return text + self.out(f"{self.pick(['nums', 'words'])}.append(1)")
        if kind == 5:
            return text + self.out(f"{self.expr('int', 1)} // 0")
        if kind == 6:
            return text + self.out(f"{self.expr('str', 1)} + {self.expr('int', 1)}")
        cut = r.randrange(len(text) + 1)         # a stray delimiter
        return text[:cut] + self.pick(["{{", "{%", "}}", "{{ (", "{% if %}"]) + text[cut:]


# Jinja2's sequence filters give one-shot generators (reverse of a list: an
# iterator): a template that reads one twice sees it used up, in part after
# `in`, first or a loop's break (and the loop's look-ahead).
GENERATOR_MAKERS = {
    "list:str": ["unique", "map('upper')", "select", "reject", "reverse", "batch(2)", "slice(2)",
                 "map('length')|select", "reject('equalto', 'x')"],
    "list:int": ["unique", "select('odd')", "reject('even')", "reverse", "map('abs')", "batch(3, 0)", "slice(3)",
                 "map('string')|select"],
    "list:msg": ["selectattr('role', 'equalto', 'user')", "rejectattr('content')", "map(attribute='role')",
                 "reverse", "unique(attribute='role')", "batch(2)"],
    "list:any": ["reverse", "select", "batch(2)", "reject('none')", "map('string')"],
}


def generator_reuse(g):
    """`set G = xs|FILTER` then two or three reads of G."""
    r = g.r
    gen = g.fresh("gen_")
    lt = g.pick(sorted(GENERATOR_MAKERS))
    made = g.tag(f"set {gen} = {g.expr(lt, 1)}|{g.pick(GENERATOR_MAKERS[lt])}")
    item = g.expr(elem_type(lt), 1)
    x = g.fresh("gx")
    reads = [f"{{{{ {gen}|list }}}}", f"{{{{ {gen}|join(',') }}}}", f"{{{{ {gen}|first }}}}",
             f"{{{{ {item} in {gen} }}}}", f"{{{{ {gen} is iterable }}}}", f"{{{{ {gen}|count }}}}",
             f"{{{{ {gen}|min }}}}", f"{{{{ {gen}|unique|list }}}}", f"{{{{ {gen}|sort|list }}}}",
             f"{{{{ {gen}|last }}}}", f"{{{{ {gen}|map('string')|list }}}}",
             f"{{% for {x} in {gen} %}}{{{{ {x} }}}}{{% if loop.index > {r.randint(0, 2)} %}}{{% break %}}{{% endif %}}{{% endfor %}}",
             f"{{% for {x} in {gen} %}}{{{{ loop.last }}}}{{{{ {x} }}}}{{% break %}}{{% endfor %}}",
             f"{{% for {x} in {gen} if {x} %}}{{{{ {x} }}}}{{% break %}}{{% else %}}none{{% endfor %}}",
             f"{{% for {x} in {gen} %}}{{{{ {x} }}}}{{% endfor %}}"]
    return made + "".join(g.pick(reads) + "|" for _ in range(r.randint(2, 3)))


def make_case(seed, index):
    r = random.Random(f"{seed}:{index}")
    if index % 4:   # three cases in four: where names live (randgen_scope.py)
        text, context = make_scope_case(r)
        return {"id": f"rand-{seed}-{index}", "template_text": text, "context": context, "raw": True}
    context = rand_context(r)
    g = Gen(r)
    text = g.block(4, r.randint(2, 7))
    if r.random() < 0.08:
        text = g.breakage(text)
    if r.random() < 0.2:
        text += "\n"
    gr = random.Random(f"{seed}:{index}:generator")   # (its own stream: the rest of the case is unchanged)
    if gr.random() < 0.5:
        text = generator_reuse(Gen(gr)) + text
    return {"id": f"rand-{seed}-{index}", "template_text": text, "context": context, "raw": True}


def main():
    ap = argparse.ArgumentParser(description="random template + context cases (raw-mode batch JSONL)")
    ap.add_argument("seed")
    ap.add_argument("n", type=int)
    ap.add_argument("--start", type=int, default=0, help="index of the first case")
    args = ap.parse_args()
    for i in range(args.start, args.start + args.n):
        sys.stdout.write(json.dumps(make_case(args.seed, i), ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
