#!/usr/bin/env python3
"""Writes tests/unit/chains.jsonl: if/elif chains whose tests share a left
operand `name.key|filter` (Command-A's `message.role|lower == 'system' ...
elif message.role|lower == 'user' ...`), which chatfmt evaluates once per run
of the chain when the name holds a dict (src/engine/parser.c: mark_if_chain;
interp.c: IfMemo). Each row checks that doing so changes nothing Jinja2 shows:

- chains-role-NNN: the usual chain in a loop over messages of every kind of
  role value (mixed case, missing, None, a number, a list, markup-like text),
  with and/or/not around the tests, != tests, elif-only sharing.
- chains-mutable-NNN: the name holds a namespace that a macro called from
  one test changes before the next test reads it (nothing may be kept).
- chains-nested-NNN: a macro whose chain calls the macro itself from a test
  (each run keeps its own value), chains inside chains' branches, the name
  rebound between two runs of one chain, a chain in a {% block %} and in a
  call block's caller.
- chains-error-NNN: a test that raises after the shared operand was kept,
  a filter that raises on the shared operand, autoescape around a chain.
- chains-guard-NNN: chains whose first test starts with the shared operand,
  which chatfmt evaluates first and then passes over the tests its value
  rules out (parser.c: mark_chain_guards; interp.c: chain_dispatch): `and`
  rests with side effects (a macro changing a namespace, a raise) that run
  only when the operand matches, unguarded tests between guarded ones (not,
  !=, another operand), more constants than a guard lists, an operand that
  is not a str (int, None, a list) or whose name is not a dict, autoescape,
  a first test that does not start with the operand (no dispatch), nested
  guarded chains, empty and repeated constants, markup operands.
- chains-memo-NNN: guarded chains over many items whose operand repeats, so
  that the pure filter's remembered result also carries which tests the
  value leaves to run (interp.c: chain_candidates_run): two chains sharing
  the operand and filter with different constants, in turn on the same
  values; more distinct values than the memo holds; an unguarded test with
  a side effect between guarded ones; a raise in an `and` rest on a repeat;
  a chain of more than 32 tests (walked as before); values that stop being
  strs or dicts part way; filters whose result is a new str each time.
- chains-decided-NNN: repeated operands whose remembered filter result also
  carries the branch the value alone decides (the first test it leaves holds
  by its guard, or it leaves none: interp_chain.c: chain_branch), next to
  values it must not decide for: an `and` rest that raises or reads the loop,
  an unguarded test first, two chains on one operand deciding differently,
  values that stop being strs or names that stop holding dicts part way,
  autoescape, a decided branch with break/continue as its body's last
  statement, and the else branch decided with and without an else body;
  the same decided by a known key (role, read in place: interp_chain.c,
  chain_pick) in dicts big enough to be hashed, a top-level name, a loop
  variable set over in the body, a macro parameter, under autoescape.
- chains-equal-NNN: `m.r == 'const'` on strs of the lengths compared as two
  words (4 to 8 bytes), equal but for one byte anywhere, and on other types;
  the same test as the parser marks it (CMP_ATTR_STR) on names that hold no
  dict, a namespace, keys no dict is known to hold, markup, autoescape.
- chains-filtered-NNN: one test `operand|pure_filter == 'str'` whose operand
  is not name.key (safety_mode|upper == 'STRICT', messages[0]['role']|lower ==
  'system': interp_chain.c, cond_equality_filtered's last case) on strs that
  case-map to the constant or not (ASCII and not), undefined, None, ints,
  lists, markup, under autoescape, names set by {% set %}, a macro argument
  shadowing a top-level name, a subscript out of range (raises), != tests.
- chains-tail-NNN: a chain that is its body's last statement, whose branch
  then runs in the body's place (interp.c: exec_body): break and continue in
  its branches, a chain last in a branch of a chain last, last in a macro,
  a call block's caller and a block, sets in a branch read after it.

No expected output is stored: tests/run_tests.sh renders every row with the
reference and with chatfmt and compares. Add rows at the END of a list so
ids cited in tests/KNOWN_DIFFERENCES.md stay stable. Regenerate with:
    python3 tests/gen_chains_table.py
"""
from unit_table import raw_rows, write_table

CHAIN = ("{% for m in ms %}"
         "{% if m.role|lower == 'system' and not loop.first %}S"
         "{% elif m.role|lower == 'user' %}U"
         "{% elif m.role|lower == 'assistant' or m.role|lower == 'chatbot' %}A"
         "{% elif m.role|lower == 'tool' and m.id not in seen %}T"
         "{% else %}?{% endif %}{% endfor %}")

ROLES = [
    {"role": "System"}, {"role": "system"}, {"role": "USER"}, {"role": "Assistant"}, {"role": "chatbot"},
    {"role": "tool", "id": 1}, {"role": "tool", "id": 2}, {"role": "other"}, {}, {"role": None},
    {"role": 7}, {"role": ["User"]}, {"role": "<b>User</b>"}, {"role": ""}, {"role": "ÜSER"},
]

ROLE_ROWS = [
    (CHAIN, {"ms": ROLES, "seen": [2]}),
    ("{% for m in ms %}{% if m.role|upper != 'USER' and m.role|upper != 'SYSTEM' %}x"
     "{% elif m.role|upper == 'USER' %}u{% else %}s{% endif %}{% endfor %}", {"ms": ROLES}),
    ("{% for m in ms %}{% if loop.index0 > 3 %}late"
     "{% elif m.role|trim == 'user' %}u{% elif m.role|trim == 'tool' %}t{% endif %}{% endfor %}",
     {"ms": [{"role": " user "}, {"role": "tool\n"}, {"role": "x"}, {"role": "user"}, {"role": "tool"}, {"role": "user"}]}),
    ("{% for m in ms %}{% if not (m.role|lower == 'a') and m.role|lower != 'b' %}1"
     "{% elif m.role|lower == 'b' or (m.role|lower == 'a' and m.n|string == '2') %}2{% else %}3{% endif %}{% endfor %}",
     {"ms": [{"role": "A", "n": 2}, {"role": "A", "n": 3}, {"role": "B"}, {"role": "c"}]}),
    ("{% for m in ms %}{% if m.role|lower == other %}same{% elif m.role|lower == other|lower %}ci"
     "{% else %}no{% endif %}{% endfor %}", {"ms": [{"role": "X"}, {"role": "x"}, {"role": "y"}], "other": "X"}),
    ("{% for m in ms %}{% if m.role|string == '7' %}seven{% elif m.role|string == 'None' %}none"
     "{% elif m.role|string == \"['User']\" %}list{% else %}{{ m.role|string }}{% endif %};{% endfor %}", {"ms": ROLES}),
    ("{% if m.role|lower == 'a' %}a{% elif m.role|lower == '' %}empty{% else %}other{% endif %}", {"m": {}}),
    ("{% if m.role|lower == 'a' %}a{% elif m.role|lower == '' %}empty{% else %}other{% endif %}", {}),
    ("{% for m in ms %}{% if m.role|title == 'User' %}U{% elif m.role|title == 'Tool' %}T{% endif %}{% endfor %}",
     {"ms": [{"role": "user"}, {"role": "TOOL"}, {"role": "uSER"}]}),
    ("{% for m in ms %}{% if m['role']|lower == 'user' %}U{% elif m.role|lower == 'user' %}u"
     "{% elif m.role|lower == 'tool' %}T{% endif %}{% endfor %}", {"ms": [{"role": "User"}, {"role": "tool"}]}),
]

MUTABLE_ROWS = [
    ("{% set ns = namespace(role='A') %}{% macro flip() %}{% set ns.role = 'B' %}{% endmacro %}"
     "{% if ns.role|lower == 'x' or flip() %}1{% elif ns.role|lower == 'b' %}2{% else %}3{% endif %}", {}),
    ("{% set ns = namespace(role='A') %}{% macro flip() %}{% set ns.role = 'B' %}{% endmacro %}"
     "{% for i in range(3) %}{% if ns.role|lower == 'a' and flip() %}1{% elif ns.role|lower == 'b' %}2"
     "{% set ns.role = 'A' %}{% else %}3{% endif %}{% endfor %}", {}),
    ("{% macro k(m) %}{% if m.role|lower == 'a' %}{% set m = {'role': 'b'} %}{% endif %}{{ m.role }}{% endmacro %}"
     "{% if m.role|lower == 'z' or k(m) == 'q' %}1{% elif m.role|lower == 'a' %}2{% endif %}", {"m": {"role": "A"}}),
]

NESTED_ROWS = [
    ("{% macro f(m, d) %}{% if m.k|lower == 'a' and (d < 3 and f(m.child, d + 1) != 'zz') %}A{{ f(m.child, d + 1) }}"
     "{% elif m.k|lower == 'b' and (d < 3 and f(m.child, d + 1) != 'zz') %}B{{ f(m.child, d + 1) }}"
     "{% elif m.k|lower == 'c' %}C{% else %}-{% endif %}{% endmacro %}{{ f(x, 0) }}",
     {"x": {"k": "A", "child": {"k": "B", "child": {"k": "C", "child": {"k": "A"}}}}}),
    ("{% for m in ms %}{% if m.r|lower == 'a' %}{% for c in m.cs %}{% if c.r|lower == 'x' %}x"
     "{% elif c.r|lower == 'y' %}y{% endif %}{% endfor %}{% elif m.r|lower == 'b' %}b{% endif %}|{% endfor %}",
     {"ms": [{"r": "A", "cs": [{"r": "X"}, {"r": "Y"}, {"r": "z"}]}, {"r": "B"}, {"r": "c"}]}),
    ("{% set m = a %}{% for i in range(2) %}{% if m.r|lower == 'a' %}A{% set m = b %}"
     "{% elif m.r|lower == 'b' %}B{% endif %}{% endfor %}{% if m.r|lower == 'a' %}a{% elif m.r|lower == 'b' %}b{% endif %}",
     {"a": {"r": "A"}, "b": {"r": "B"}}),
    ("{% block body %}{% for m in ms %}{% if m.r|lower == 'a' %}A{% elif m.r|lower == 'b' %}B{% endif %}"
     "{% endfor %}{% endblock %}", {"ms": [{"r": "a"}, {"r": "B"}]}),
    ("{% macro w() %}[{{ caller({'r': 'B'}) }}]{% endmacro %}{% call(m) w() %}{% if m.r|lower == 'a' %}A"
     "{% elif m.r|lower == 'b' %}B{% endif %}{% endcall %}", {}),
    ("{% for m in ms %}{% if m.r|lower == 'a' %}{{ 'A' if m.r|lower == 'a' else '?' }}"
     "{% elif m.r|lower == 'b' %}{{ 'B' if m.r|lower != 'a' }}{% endif %}{% endfor %}", {"ms": [{"r": "A"}, {"r": "b"}]}),
]

ERROR_ROWS = [
    ("{% if m.r|lower == 'x' %}x{% elif m.r|lower == (1 / 0) %}y{% endif %}", {"m": {"r": "A"}}),
    ("{% if m.r|lower == 'x' %}x{% elif m.r|lower == 'a' and m.r.nope.deeper %}y{% else %}z{% endif %}",
     {"m": {"r": "A"}}),
    ("{% if m.r|int == 1 %}x{% elif m.r|int == 0 %}y{% endif %}", {"m": {"r": "A"}}),
    ("{% autoescape true %}{% for m in ms %}{% if m.r|string == '<a>' %}raw{% elif m.r|string == '&lt;a&gt;' %}esc"
     "{% else %}{{ m.r|string }}{% endif %}{% endfor %}{% endautoescape %}", {"ms": [{"r": "<a>"}, {"r": "b"}]}),
    ("{% if m.r|lower == 'a' %}a{% elif m.r|lower == 'b' %}b{% endif %}", {"m": "not a dict"}),
    ("{% if m.r|lower == 'a' %}a{% elif m.r|lower == 'b' %}b{% endif %}", {"m": [1, 2]}),
]

GUARD_MS = {"ms": [{"r": "A"}, {"r": "b"}, {"r": "C"}, {"r": "d"}, {"r": ""}, {}, {"r": None}, {"r": 3},
                   {"r": ["a"]}, {"r": "B "}, {"r": "Ä"}, {"r": "a", "x": 1}]}
NINE = " or ".join("m.r|lower == '%s'" % c for c in "abcdefghi")

GUARD_ROWS = [
    # guarded tests only, an `and` rest, an `or` of constants, an else
    ("{% for m in ms %}{% if m.r|lower == 'a' and m.x %}A1{% elif m.r|lower == 'a' %}A"
     "{% elif m.r|lower == 'b' or m.r|lower == 'c' %}BC{% elif m.r|lower == '' %}E{% else %}?{% endif %}{% endfor %}",
     GUARD_MS),
    # the `and` rest has a side effect: it runs only for the operand's matches
    ("{% set ns = namespace(n=0) %}{% macro bump() %}{% set ns.n = ns.n + 1 %}{% endmacro %}"
     "{% for m in ms %}{% if m.r|lower == 'a' and bump() %}A{% elif m.r|lower == 'b' and bump() == '' %}B"
     "{% elif m.r|lower == 'c' %}C{{ ns.n }}{% endif %}{% endfor %}{{ ns.n }}", GUARD_MS),
    # unguarded tests between guarded ones: not, !=, another operand, a call
    ("{% set ns = namespace(n=0) %}{% macro bump() %}{% set ns.n = ns.n + 1 %}{{ ns.n }}{% endmacro %}"
     "{% for m in ms %}{% if m.r|lower == 'z' %}Z{% elif not m.r|lower == 'a' and bump() == '99' %}N"
     "{% elif m.r|lower != 'b' and m.r|lower != 'c' %}ne{% elif m.x|lower == 'b' %}x"
     "{% elif m.r|lower == 'c' %}C{% else %}b{% endif %};{% endfor %}{{ ns.n }}", GUARD_MS),
    # more constants than a guard lists (no guard), and an exact or of them
    ("{% for m in ms %}{% if m.r|lower == 'q' %}q{% elif " + NINE + " %}nine{% else %}-{% endif %}{% endfor %}",
     GUARD_MS),
    # the operand not a str: an int, None, a list (|first), and a name that is no dict
    ("{% for m in ms %}{% if m.r|length == 1 %}one{% elif m.r|length == 0 %}zero{% else %}n{% endif %}{% endfor %}",
     GUARD_MS),
    ("{% for m in ms %}{% if m.r|first == 'a' %}a{% elif m.r|first == 'B' %}B{% else %}-{% endif %}{% endfor %}",
     {"ms": [{"r": "abc"}, {"r": ["a"]}, {"r": "Bx"}, {"r": []}]}),
    ("{% for m in ms %}{% if m.r|lower == 'a' %}a{% elif m.r|lower == '' %}empty{% else %}-{% endif %}{% endfor %}",
     {"ms": ["a", 1, None, [1], {"r": "A"}]}),
    # autoescape: the tests as they are
    ("{% autoescape true %}{% for m in ms %}{% if m.r|lower == '<a>' %}raw{% elif m.r|lower == 'b' or m.r|lower == 'c' %}"
     "bc{% else %}{{ m.r }}{% endif %}{% endfor %}{% endautoescape %}", {"ms": [{"r": "<A>"}, {"r": "C"}, {"r": "x&"}]}),
    # a first test not starting with the operand (no dispatch); != first
    ("{% for m in ms %}{% if loop.first and m.r|lower == 'a' %}first{% elif m.r|lower == 'a' %}a"
     "{% elif m.r|lower == 'b' %}b{% endif %}{% endfor %}", GUARD_MS),
    ("{% for m in ms %}{% if m.r|lower != 'a' and m.r|lower == 'b' %}b{% elif m.r|lower == 'a' %}a{% endif %}{% endfor %}",
     GUARD_MS),
    # nested guarded chains, repeated constants, a raise in an `and` rest
    ("{% for m in ms %}{% if m.r|lower == 'a' or m.r|lower == 'a' %}{% for c in m.cs %}{% if c.r|upper == 'X' %}x"
     "{% elif c.r|upper == 'Y' and m.r|lower == 'a' %}y{% endif %}{% endfor %}{% elif m.r|lower == 'b' %}b"
     "{% endif %}|{% endfor %}", {"ms": [{"r": "A", "cs": [{"r": "x"}, {"r": "y"}, {"r": "z"}]}, {"r": "b"}]}),
    ("{% for m in ms %}{% if m.r|lower == 'a' %}a{% elif m.r|lower == 'b' and (1 / 0) %}b{% endif %}{% endfor %}",
     {"ms": [{"r": "a"}, {"r": "c"}, {"r": "B"}]}),
    ("{% for m in ms %}{% if m.r|lower == 'a' %}a{% elif m.r|lower == 'b' and (1 / 0) %}b{% else %}-{% endif %}{% endfor %}",
     {"ms": [{"r": "a"}, {"r": "c"}]}),
    # markup operands and constants
    ("{% for m in ms %}{% if m.r|safe == 'a' %}a{% elif m.r|safe == '<b>' %}b{% else %}-{% endif %}{% endfor %}",
     {"ms": [{"r": "a"}, {"r": "<b>"}, {"r": "c"}]}),
    ("{% for m in ms %}{% if m.r|string == 'a' %}a{% elif m.r|string == 'None' or m.r|string == '3' %}n"
     "{% else %}-{% endif %}{% endfor %}", GUARD_MS),
    # in a chat-mode template, the shape Command-A has
    ("{% for message in messages %}{% if message.role|lower == 'system' and not (loop.first and pre) %}S"
     "{{ message.content }}{% elif message.role|lower == 'user' %}U{{ message.content }}"
     "{% elif message.role|lower == 'assistant' or message.role|lower == 'chatbot' %}A{{ message.content }}"
     "{% endif %}{% endfor %}", {"pre": True, "ms": [], "messages": [
         {"role": "system", "content": "s"}, {"role": "User", "content": "u"}, {"role": "CHATBOT", "content": "c"},
         {"role": "system", "content": "s2"}, {"role": "tool", "content": "t"}]}),
]


REPEAT_MS = {"ms": [{"r": r} for r in ["User", "assistant", "User", "tool", "assistant", "User", "system", "tool",
                                         "User", "assistant", "other", "User", "system", "assistant"]]}
MANY_MS = {"ms": [{"r": chr(ord("a") + i % 20)} for i in range(60)]}
FORTY = "".join("{%% elif m.r|lower == 'x%d' %%}%d" % (i, i) for i in range(38))

MEMO_ROWS = [
    # two chains on the same operand and filter, different constants, in turn on repeated values
    ("{% for m in ms %}{% if m.r|lower == 'user' %}U{% elif m.r|lower == 'assistant' %}A{% else %}-{% endif %}"
     "{% if m.r|lower == 'tool' %}t{% elif m.r|lower == 'system' or m.r|lower == 'user' %}su"
     "{% elif m.r|lower == 'assistant' %}a{% endif %};{% endfor %}", REPEAT_MS),
    # more distinct values than the filter memo holds, each repeated
    ("{% for m in ms %}{% if m.r|lower == 'a' %}A{% elif m.r|lower == 'e' or m.r|lower == 'q' %}EQ"
     "{% elif m.r|lower == 't' %}T{% else %}{{ m.r }}{% endif %}{% endfor %}", MANY_MS),
    # an unguarded test with a side effect between guarded ones, on repeats
    ("{% set ns = namespace(n=0) %}{% macro bump() %}{% set ns.n = ns.n + 1 %}{{ ns.n }}{% endmacro %}"
     "{% for m in ms %}{% if m.r|lower == 'system' %}S{% elif bump() == '0' %}never"
     "{% elif m.r|lower == 'user' and bump() %}U{% elif m.r|lower == 'assistant' %}A{% endif %}{% endfor %}{{ ns.n }}",
     REPEAT_MS),
    # a raise in an `and` rest, reached on the value's second time only
    ("{% for m in ms %}{% if m.r|lower == 'user' and loop.index0 > 3 and (1 / 0) %}U"
     "{% elif m.r|lower == 'user' %}u{% elif m.r|lower == 'tool' %}t{% endif %}{% endfor %}", REPEAT_MS),
    # more than 32 tests: walked one by one, as before
    ("{% for m in ms %}{% if m.r|lower == 'user' %}U" + FORTY + "{% elif m.r|lower == 'tool' %}T"
     "{% elif m.r|lower == 'assistant' %}A{% else %}-{% endif %}{% endfor %}", REPEAT_MS),
    # values that stop being strs (and items that are no dicts) part way
    ("{% for m in ms %}{% if m.r|lower == 'a' %}a{% elif m.r|lower == 'none' %}n{% elif m.r|lower == '3' %}3"
     "{% else %}-{% endif %}{% endfor %}",
     {"ms": [{"r": "A"}, {"r": "A"}, {"r": None}, {"r": "a"}, {"r": 3}, "A", {"r": "A"}, {"r": ["a"]}, {"r": "A"}]}),
    # a filter whose result is a new str each time (trim, title), and one that keeps its operand (upper of upper)
    ("{% for m in ms %}{% if m.r|trim == 'user' %}U{% elif m.r|trim == 'tool' %}T{% else %}-{% endif %}"
     "{% if m.r|title == 'User' %}u{% elif m.r|title == 'Assistant' or m.r|title == 'Tool' %}x{% endif %}"
     "{% if m.r|upper == 'USER' %}!{% elif m.r|upper == 'SYSTEM' %}?{% endif %};{% endfor %}",
     {"ms": [{"r": " user "}, {"r": " user "}, {"r": "tool"}, {"r": "TOOL"}, {"r": "tool"}, {"r": "USER"},
             {"r": "system"}, {"r": "assistant"}, {"r": "USER"}]}),
    # a chain whose every test is guarded and none matches, on repeats (the else after all the tests)
    ("{% for m in ms %}{% if m.r|lower == 'p' %}p{% elif m.r|lower == 'q' %}q{% elif m.r|lower == 'r' %}r"
     "{% else %}[{{ m.r }}]{% endif %}{% endfor %}", REPEAT_MS),
]


TAIL_ROWS = [
    ("{% for m in ms %}{% if m.r|lower == 'user' %}{% continue %}{% elif m.r|lower == 'other' %}{% break %}"
     "{% else %}{{ m.r }},{% endif %}{% endfor %}|{% for m in ms %}{% if m.r|lower == 'tool' %}{% break %}"
     "{% elif m.r|lower == 'user' %}u{% endif %}{% else %}all{% endfor %}", REPEAT_MS),
    ("{% for m in ms %}{% if m.r|lower == 'user' %}U{% if m.r|upper == 'USER' %}{% if m.r|lower == 'user' %}!"
     "{% elif m.r|lower == 'x' %}?{% endif %}{% elif m.r|upper == 'X' %}x{% endif %}{% elif m.r|lower == 'tool' %}T"
     "{% endif %}{% endfor %}", REPEAT_MS),
    ("{% macro f(m) %}{% if m.r|lower == 'user' %}U{{ caller() if caller is defined else '' }}"
     "{% elif m.r|lower == 'tool' %}T{% endif %}{% endmacro %}{% for m in ms %}{{ f(m) }}{% endfor %}"
     "{% call f({'r': 'USER'}) %}c{% if ms[0].r|lower == 'user' %}1{% elif ms[0].r|lower == 'x' %}2{% endif %}{% endcall %}"
     "{% block b %}{% for m in ms %}{% if m.r|lower == 'system' %}S{% elif m.r|lower == 'user' %}u{% endif %}"
     "{% endfor %}{% endblock %}", REPEAT_MS),
    ("{% set ns = namespace(n=0) %}{% for m in ms %}{% if m.r|lower == 'user' %}{% set x = 1 %}"
     "{% set ns.n = ns.n + 1 %}{% elif m.r|lower == 'tool' %}{% set x = 2 %}{% endif %}{% endfor %}"
     "{{ x is defined }}{{ ns.n }}{% if ms[1].r|lower == 'assistant' %}{% set y = 3 %}{% elif ms[1].r|lower == 'x' %}"
     "{% set y = 4 %}{% endif %}{{ y }}", REPEAT_MS),
    ("{% for m in ms %}{% if m.r|lower == 'user' %}{% elif m.r|lower == 'tool' %}{% else %}{% endif %}{% endfor %}."
     "{% for m in ms %}{% if m.r|lower == 'tool' and (1 / 0) %}T{% elif m.r|lower == 'user' %}U{% endif %}{% endfor %}",
     REPEAT_MS),
]


DECIDED_MS = {"ms": [{"r": r, "i": i} for i, r in enumerate(
    ["User", "tool", "User", "User", "x", "tool", "User", "x", "TOOL", "x", "assistant", "User", "tool", "x",
     "assistant", "User"])]}

DECIDED_ROWS = [
    # decided repeats (user: holds by its guard; x: none left, the else) between an `and` rest
    # that reads the loop (tool) and one that raises late (assistant, its third time)
    ("{% for m in ms %}{% if m.r|lower == 'tool' and loop.index0 > 6 %}T{{ loop.index0 }}"
     "{% elif m.r|lower == 'user' %}u{% elif m.r|lower == 'tool' %}t{% elif m.r|lower == 'assistant' %}a"
     "{% else %}[{{ m.r }}]{% endif %}{% endfor %}", DECIDED_MS),
    ("{% for m in ms %}{% if m.r|lower == 'assistant' and m.i > 12 and (1 / 0) %}A"
     "{% elif m.r|lower == 'user' %}u{% elif m.r|lower == 'assistant' %}a{% endif %}{% endfor %}", DECIDED_MS),
    # an unguarded test first among those left: never decided, run every time
    ("{% for m in ms %}{% if m.r|lower == 'q' %}q{% elif m.i is odd %}o{{ m.i }}{% elif m.r|lower == 'user' %}u"
     "{% elif m.r|lower == 'x' %}x{% endif %}{% endfor %}", DECIDED_MS),
    # two chains on one operand and filter, in turn: one decides user, the other runs an `and` for it
    ("{% for m in ms %}{% if m.r|lower == 'user' %}U{% elif m.r|lower == 'tool' %}T{% endif %}"
     "{% if m.r|lower == 'user' and m.i > 5 %}!{% elif m.r|lower == 'x' %}X{% else %}-{% endif %};{% endfor %}",
     DECIDED_MS),
    # values that stop being strs, items that stop being dicts, part way
    ("{% for m in ms %}{% if m.r|lower == 'a' %}a{% elif m.r|lower == 'b' %}b{% else %}-{% endif %}{% endfor %}",
     {"ms": [{"r": "A"}, {"r": "A"}, {"r": "A"}, {"r": 3}, {"r": "A"}, "A", {"r": "A"}, {"r": None},
             {"r": "B"}, {"r": "B"}, ["A"], {"r": "B"}, {"r": "A"}]}),
    # autoescape: no memo, the tests as they are
    ("{% autoescape true %}{% for m in ms %}{% if m.r|lower == 'user' %}<{{ m.r }}>{% elif m.r|lower == 'x' %}&"
     "{% endif %}{% endfor %}{% endautoescape %}|{% for m in ms %}{% if m.r|lower == 'user' %}u"
     "{% elif m.r|lower == 'x' %}x{% endif %}{% endfor %}", DECIDED_MS),
    # a decided branch with loop controls, the chain last in its body
    ("{% for m in ms %}{% if m.r|lower == 'user' %}{% continue %}{% elif m.r|lower == 'assistant' %}{% break %}"
     "{% else %}{{ m.i }},{% endif %}{% endfor %}|{% for m in ms %}{% if m.r|lower == 'x' %}{% elif m.r|lower == 'z' %}"
     "z{% endif %}{% endfor %}|{% for m in ms %}{% if m.r|lower == 'x' %}x{% elif m.r|lower == 'z' %}z{% else %}"
     "{% endif %}{% endfor %}", DECIDED_MS),
    # decided by a known key (role) read in place: dicts big enough to be hashed, a top-level
    # name, a loop variable set over in the body, a macro parameter, autoescape around it
    ("{% for m in ms %}{% if m.role|lower == 'user' %}u{% elif m.role|lower == 'tool' %}t{% else %}-{% endif %}"
     "{% endfor %}", {"ms": [{"role": "User"}, {"role": "user"}, {"role": "TOOL"},
                            dict({"role": "user"}, **{"k%d" % i: i for i in range(12)}),
                            dict({"role": "tool"}, **{"k%d" % i: i for i in range(12)}), {"role": "user"},
                            {"content": "x"}, {"role": "tool"}]}),
    ("{% for x in [1, 2, 3] %}{% if m.role|lower == 'user' %}u{% elif m.role|lower == 'tool' %}t{% endif %}"
     "{% endfor %}", {"m": {"role": "USER"}}),
    ("{% for m in ms %}{% if m.role|lower == 'user' %}u{% elif m.role|lower == 'tool' %}t{% endif %}"
     "{% set m = {'role': 'tool'} %}{% if m.role|lower == 'user' %}U{% elif m.role|lower == 'tool' %}T{% endif %};"
     "{% endfor %}", {"ms": [{"role": "user"}, {"role": "user"}, {"role": "tool"}]}),
    ("{% macro c(m) %}{% if m.role|lower == 'user' %}u{% elif m.role|lower == 'tool' %}t{% else %}-{% endif %}"
     "{% endmacro %}{% for m in ms %}{{ c(m) }}{{ c(m) }}{% endfor %}",
     {"ms": [{"role": "user"}, {"role": "Tool"}, {"role": "x"}, {"role": "user"}]}),
    ("{% for m in ms %}{% if m.role|lower == 'user' %}u{% elif m.role|lower == 'tool' %}t{% endif %}{% endfor %}"
     "{% autoescape true %}{% for m in ms %}{% if m.role|lower == 'user' %}<{% elif m.role|lower == 'tool' %}&"
     "{% endif %}{% endfor %}{% endautoescape %}", {"ms": [{"role": "user"}, {"role": "user"}, {"role": "tool"}]}),
]


# m.role == 'user' compares two strs of 4 to 8 bytes as two words (interp_chain.c:
# str_equality): values equal but for one byte at each place, of each length, both
# operators, multibyte text, a str against a constant of another length or type.
EQUAL_VALUES = ["user", "usEr", "useR", "User", "users", "tool", "tooL", "system", "systen", "xystem",
                "assistan", "assistant", "abcdefgh", "abcdefgX", "Xbcdefgh", "abcdXfgh", "étéé", "été", "😀😀", "", "u"]
EQUAL_ROWS = [
    ("{% for m in ms %}{{ m.r == 'user' }}{{ m.r != 'useR' }}{{ m.r == 'system' }}{{ m.r == 'abcdefgh' }}"
     "{{ m.r == 'assistan' }}{{ m.r != 'étéé' }}{{ m.r == '😀😀' }}{% if m.r == 'tool' %}T{% elif m.r == 'users' %}S"
     "{% elif m.r != 'abcdXfgh' %}-{% endif %};{% endfor %}", {"ms": [{"r": v} for v in EQUAL_VALUES]}),
    ("{% for m in ms %}{{ m.r == 'user' }}{{ m.r != 'user' }}{% if m.r == 'user' %}u{% endif %};{% endfor %}",
     {"ms": [{"r": 1}, {"r": None}, {"r": ["user"]}, {}, {"r": "user"}, {"r": True}]}),
    # name.key == 'str' read in place (CMP_ATTR_STR) where it must step aside: names holding no dict,
    # a namespace, keys no dict is known to hold (looked up, then from the cache), markup, a top-level name
    ("{% for m in ms %}{{ m.r == 'user' }}{% if m.r != 'user' %}n{% endif %}{{ m.zq_key == 'z' }}"
     "{% if m.zq_key == 'z' %}Z{% endif %};{% endfor %}",
     {"ms": ["user", ["user"], 3, {"r": "user", "zq_key": "z"}, {"zq_key": 1}, {"r": "user"}]}),
    ("{% set ns = namespace(r='user') %}{{ ns.r == 'user' }}{% set ns.r = 'x' %}{{ ns.r != 'user' }}"
     "{% set m = {'r': 'user'|safe, 'q': '<b>'|safe} %}{{ m.r == 'user' }}{{ m.q == '<b>' }}{{ m.q != '&lt;b&gt;' }}"
     "{% if top.r == 'user' %}T{% endif %}{{ top.zq_key == 'user' }}{{ top.zq_key == 'user' }}",
     {"top": {"r": "user", "zq_key": "user"}}),
    ("{{ nothing.r == 'user' }}", {}),   # raises
    ("{% for m in ms %}{% if m.r == 'user' %}u{% elif m.r == 'tool' %}t{% else %}-{% endif %}{% endfor %}"
     "{% autoescape true %}{% for m in ms %}{{ m.r == '<x>' }}{% endfor %}{% endautoescape %}",
     {"ms": [{"r": "user"}, {"r": "tool"}, {"r": "<x>"}, "tool", None]}),
]


FILTERED_ROWS = [
    ("{{ 'y' if s|upper == 'STRICT' else 'n' }}{% if s|upper != 'STRICT' %}!{% endif %}{% if s|lower == 'strict' %}l{% endif %}",
     {"s": v}) for v in ("strict", "Strict", "STRICT", "stricter", "", "stra\u00dfe", "\u017ftrict", 7, None, ["strict"],
                         {"a": 1})
] + [
    ("{{ s|upper == 'STRICT' }}", {}),
    ("{% set s = 'strict' %}{{ s|upper == 'STRICT' }}{% set s = 'x' %}{{ s|upper == 'STRICT' }}", {"s": "strict"}),
    ("{% macro m(safety_mode) %}{{ safety_mode|upper == 'STRICT' }}{% endmacro %}{{ m('strict') }}{{ m('no') }}"
     "{{ safety_mode|upper == 'STRICT' }}", {"safety_mode": "no"}),
    ("{% set safety_mode = safety_mode if safety_mode is not undefined else 'CONTEXTUAL' %}"
     "{% if safety_mode|upper == 'STRICT' %}S{% else %}C{% endif %}", {}),
    ("{% set safety_mode = safety_mode if safety_mode is not undefined else 'CONTEXTUAL' %}"
     "{% if safety_mode|upper == 'STRICT' %}S{% else %}C{% endif %}", {"safety_mode": "strict"}),
    ("{{ (s|safe)|upper == 'STRICT' }}{{ (s|safe)|lower == '<b>' }}", {"s": "<b>"}),
    ("{% autoescape true %}{{ s|upper == '<B>' }}{{ s|lower == '<b>' }}{% endautoescape %}", {"s": "<b>"}),
    ("{% for i in range(3) %}{% if messages and messages[0]['role']|lower == 'system' %}S{% else %}-{% endif %}"
     "{% endfor %}{% for m in messages %}{{ m['role']|lower == 'system' }}{% endfor %}",
     {"messages": [{"role": "System"}, {"role": "user"}]}),
    ("{% if messages and messages[0]['role']|lower == 'system' %}S{% else %}-{% endif %}",
     {"messages": [{"role": "user"}]}),
    ("{% if messages and messages[0]['role']|lower == 'system' %}S{% else %}-{% endif %}",
     {"messages": [{"content": "x"}]}),
    ("{% if messages and messages[0]['role']|lower == 'system' %}S{% else %}-{% endif %}", {"messages": ["system"]}),
    ("{{ messages[3]['role']|lower == 'system' }}", {"messages": [{"role": "system"}]}),   # raises
    ("{{ (a + b)|lower == 'xy' }}{{ (a ~ 1)|upper == 'X1' }}{{ a|trim == 'x' }}", {"a": " x ", "b": "Y"}),
]


GROUPS = (("role", ROLE_ROWS), ("mutable", MUTABLE_ROWS), ("nested", NESTED_ROWS),
          ("error", ERROR_ROWS), ("guard", GUARD_ROWS),
          ("memo", MEMO_ROWS), ("tail", TAIL_ROWS), ("decided", DECIDED_ROWS),
          ("equal", EQUAL_ROWS), ("filtered", FILTERED_ROWS))


def main():
    write_table("chains", raw_rows("chains", GROUPS))


if __name__ == "__main__":
    main()
