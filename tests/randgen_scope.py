"""Random templates that stress where names live (tests/randgen.py draws from here).

A small pool of names (a, b, c, d, and the namespace ns) is read and written
everywhere, with no regard to order or type: at the top level and inside
loop bodies and their else, macros and their defaults, call blocks,
block sets, filter blocks, with, generation, autoescape and {% block %}
bodies, nested in each other (loops inside captures inside macros). So a
name is often read before the set that makes it (at every nesting level),
by a frame nested in the one that sets it, or after a frame that set it
locally. Targets are names or tuples wherever a target can stand (set,
block set, for, with). Expressions compare and compute over every pair of
value types, Undefined included, so many cases fail on purpose, with the
error Python raises.

Each name may be in the context or not (then it is Undefined until set),
with a value of any type. Templates are small (a handful of statements), so
the reference compiles them fast.
"""

POOL = ["a", "b", "c", "d"]

# Values a pool name may start with in the context: every type the operators meet.
VALUES = [0, 1, 2, -3, 7, 2.5, -1.25, 0.5, 1e-3, -0.0, True, False, None, "", "x", "ab", "Ünï", "3",
          [], [1, 2], ["x", "y"], [[1, 2], [3, 4]], {}, {"k": 1}, {"a": "b", "c": 1}]
NUMBERS = ["0", "1", "2", "-1", "3", "2.5", "-0.5", "0.5", "1e3", "true"]

LITERALS = ["0", "1", "2", "-1", "3", "2.5", "-0.5", "0.5", "1e3", "true", "false", "none", "''", "'x'", "'ab'",
            "'é'", "[]", "[1, 2]", "['p', 'q']", "(1, 2)", "{}", "{'k': 1}", "[(1, 2), (3, 4)]", "'12'"]
ARITH = ["+", "-", "*", "/", "//", "%", "**", "~"]
COMPARE = ["==", "!=", "<", "<=", ">", ">=", "in", "not in"]
SAFE_FILTERS = ["string", "length", "default('dflt')", "d(0)", "list", "first", "upper", "int", "float",
                "abs", "tojson", "count", "join(',')", "sort", "reverse|list", "trim"]
TESTS = ["defined", "undefined", "none", "number", "string", "mapping", "iterable", "sequence", "integer",
         "float", "boolean", "true", "false", "odd", "even", "callable"]


class ScopeGen:
    def __init__(self, r):
        self.r = r
        self.budget = r.randint(3, 9)   # statements in the template
        self.macros = {}                # macro name -> (required, all) parameter counts
        self.blocks = 0                 # {% block %} names used (each name once)
        self.loops = 0                  # enclosing for bodies (loop.* and break are valid)
        self.in_macro = 0               # enclosing macro bodies (caller/varargs)
        self.has_ns = False             # the template starts with {% set ns = namespace(...) %}

    def chance(self, p):
        return self.r.random() < p

    def pick(self, seq):
        return self.r.choice(seq)

    # -- context: each pool name present or not, of any type
    def context(self):
        ctx = {n: self.pick(VALUES) for n in POOL if self.chance(0.6)}
        ctx["xs"] = self.r.sample([1, 2, 3, 4, -1], self.r.randint(0, 3))
        ctx["s"] = self.pick(["", "ab", "hi there"])
        ctx["n"] = self.r.randint(0, 3)
        return ctx

    # -- expressions
    def name(self):
        ns = "ns.v" if self.has_ns or self.chance(0.1) else "n"
        return self.pick(POOL + POOL + [ns, "xs", "s", "n", "loop.index" if self.loops else "n"])

    def atom(self):
        k = self.r.random()
        if k < 0.6:
            return self.name()
        return self.pick(LITERALS)

    def number(self):
        return self.pick(POOL + ["n", "loop.index" if self.loops else "n"]) if self.chance(0.5) else self.pick(NUMBERS)

    def expr(self, depth=2):
        r = self.r.random()
        if depth <= 0 or r < 0.3:
            return self.atom()
        if r < 0.45:   # arithmetic: over any pair of types, or over names and numbers
            if self.chance(0.4):
                return f"{self.expr(depth - 1)} {self.pick(ARITH)} {self.expr(depth - 1)}"
            return f"{self.number()} {self.pick(ARITH)} {self.number()}"
        if r < 0.6:    # comparisons, chained sometimes
            e = f"{self.expr(depth - 1)} {self.pick(COMPARE)} {self.expr(depth - 1)}"
            if self.chance(0.3):
                e += f" {self.pick(COMPARE[:6])} {self.atom()}"
            return e
        if r < 0.68:
            return f"({self.expr(depth - 1)})|{self.pick(SAFE_FILTERS)}"
        if r < 0.76:
            return f"{self.atom()} is {self.pick(['', 'not '])}{self.pick(TESTS)}"
        if r < 0.82:
            return f"({self.expr(depth - 1)} if {self.expr(depth - 1)} else {self.expr(depth - 1)})"
        if r < 0.87:
            return f"{self.pick(['not ', '-', '+'])}{self.atom()}"
        if r < 0.92:
            return f"{self.atom()} {self.pick(['and', 'or'])} {self.atom()}"
        if r < 0.96 and self.macros:
            return self.macro_call()
        return f"({self.expr(depth - 1)}, {self.atom()})"   # a tuple

    def safe(self):
        """An expression that fails only when a name is Undefined where that matters."""
        return self.pick([
            lambda: self.name(), lambda: f"{self.name()} is defined", lambda: f"{self.name()}|default('-')",
            lambda: f"{self.name()} ~ '|'", lambda: f"[{self.name()}, {self.name()}]|string",
            lambda: f"{self.name()}|string|length",
        ])()

    def call_args(self, lo=0, hi=2):
        return ", ".join(self.atom() for _ in range(self.r.randint(lo, hi)))

    def macro_call(self):
        name = self.pick(sorted(self.macros))
        required, total = self.macros[name]
        extra = 1 if self.chance(0.1) else 0   # (one too many, now and then)
        return f"{name}({self.call_args(required, total + extra)})"

    # -- targets
    def target(self):
        k = self.r.random()
        if k < 0.6:
            return self.pick(POOL)
        if k < 0.9:
            return ", ".join(self.r.sample(POOL, 2))
        if k < 0.95 and self.has_ns:
            return f"{self.pick(POOL)}, ns.v"
        return f"({self.pick(POOL)}, {self.pick(POOL)}), {self.pick(POOL)}"

    def value_for(self, target):
        n = target.count(",") + 1
        if n == 1 or self.chance(0.1):
            return self.expr()
        if target.startswith("("):
            return self.pick(["((1, 2), 3)", f"({self.atom()}, {self.atom()}), {self.atom()}", "[[s, n], xs]"])
        return self.pick([", ".join(self.atom() for _ in range(n)), ", ".join(self.atom() for _ in range(n)),
                          "[s, n]", f"{self.pick(POOL)}, {self.pick(POOL)}", "'pq'", "(1, 2) if xs else (3, 4)",
                          "xs[:2] if xs|length >= 2 else (0, 0)"])

    # -- statements
    def tag(self, body):
        return self.pick(["{% ", "{% ", "{%- "]) + body + self.pick([" %}", " %}", " -%}"])

    def out(self, e):
        return "{{ " + e + " }}"

    def body(self, depth):
        parts = []
        for _ in range(self.r.randint(1, 3)):
            if self.budget <= 0:
                break
            self.budget -= 1
            parts.append(self.stmt(depth))
        return "".join(parts)

    def stmt(self, depth):
        kinds = [("print", 5), ("print_safe", 4), ("set", 5), ("text", 1)]
        if depth > 0:
            kinds += [("if", 2), ("for", 3), ("macro", 2), ("set_block", 2), ("filter", 1.5), ("with", 1),
                      ("call", 1), ("generation", 0.5), ("autoescape", 0.3), ("block", 0.3), ("ns", 1)]
        if self.loops:
            kinds.append(("loopctl", 0.3))
        names, weights = zip(*kinds)
        return getattr(self, "s_" + self.r.choices(names, weights)[0])(depth - 1)

    def s_text(self, d):
        return self.pick(["|", " ", "\n", "<x>", "."])

    def s_print(self, d):
        return self.out(self.expr())

    def s_print_safe(self, d):
        return self.out(self.safe())

    def s_set(self, d):
        t = self.target()
        if t.count(",") == 0 and self.chance(0.3):   # read-then-write of the same name
            return self.tag(f"set {t} = {t} {self.pick(ARITH)} {self.atom()}")
        return self.tag(f"set {t} = {self.value_for(t)}")

    def s_ns(self, d):
        if self.chance(0.3):
            return self.tag(f"set ns = namespace(v={self.atom()})")
        return self.tag(f"set ns.v = {self.expr(1)}")

    def s_if(self, d):
        s = self.tag(f"if {self.expr(1)}") + self.body(d)
        if self.chance(0.3):
            s += self.tag(f"elif {self.expr(1)}") + self.body(d)
        if self.chance(0.4):
            s += self.tag("else") + self.body(d)
        return s + self.tag("endif")

    def s_for(self, d):
        t = self.pick(["x", "x", self.pick(POOL), ", ".join(self.r.sample(POOL, 2)), "x, y"])
        if "," in t:
            it = self.pick(["[(1, 2), (3, 4)]", "{'k': 1, 'j': 2}.items()", "[[a, b], [c, d]]", "[s, 'pq']",
                            self.pick(POOL)])
        else:
            it = self.pick(["xs", "s", "[1, 'a']", "range(n)", self.pick(POOL), "[a, b]", "[c, ns.v]" if self.has_ns else "xs"])
        head = f"for {t} in {it}"
        if self.chance(0.2):
            head += f" if {self.expr(1)}"
        self.loops += 1
        s = self.tag(head) + self.body(d)
        self.loops -= 1
        if self.chance(0.25):
            saved, self.loops = self.loops, 0   # (the else body is outside the loop)
            s += self.tag("else") + self.body(d)
            self.loops = saved
        return s + self.tag("endfor")

    def s_loopctl(self, d):
        return self.tag(f"if {self.expr(1)}") + self.tag(self.pick(["break", "continue"])) + self.tag("endif")

    def s_macro(self, d):
        name = f"m{len(self.macros)}"
        params = self.r.sample(["p", "q", "a", "b"], self.r.randint(0, 2))
        required = self.r.randint(0, len(params))
        sig = ", ".join(p if k < required else f"{p}={self.atom()}" for k, p in enumerate(params))
        saved, self.loops = self.loops, 0
        self.in_macro += 1
        body = self.body(d)
        if self.chance(0.2):
            body += self.out("caller()" if self.chance(0.5) else "varargs|length")
        self.in_macro -= 1
        self.loops = saved
        s = self.tag(f"macro {name}({sig})") + body + self.tag("endmacro")
        self.macros[name] = (required, len(params))
        if self.chance(0.7):
            s += self.out(self.macro_call())
        return s

    def s_call(self, d):
        if not self.macros:
            return self.s_macro(d)
        args = self.pick(["", "(x)", "(a, b)"])
        saved, self.loops = self.loops, 0
        body = self.body(d)
        self.loops = saved
        return self.tag(f"call{args} {self.macro_call()}") + body + self.tag("endcall")

    def s_set_block(self, d):
        t = self.pick(POOL + [", ".join(self.r.sample(POOL, 2))])
        flt = self.pick(["", "", " | upper", " | trim", f" | replace('1', {self.atom()})"])
        saved, self.loops = self.loops, 0     # (break inside a capture: Jinja2 misbehaves)
        body = self.body(d)
        self.loops = saved
        s = self.tag(f"set {t}{flt}") + body + self.tag("endset")
        if self.chance(0.5):
            s += self.out(t.split(",")[0])
        return s

    def s_filter(self, d):
        f = self.pick(["upper", "trim", "replace('a', 'b')", f"replace('1', {self.pick(POOL)})", "center(9)"])
        saved, self.loops = self.loops, 0
        body = self.body(d)
        self.loops = saved
        return self.tag(f"filter {f}") + body + self.tag("endfilter")

    def s_with(self, d):
        k = self.r.random()
        if k < 0.5:
            head = f"with {self.pick(POOL)} = {self.expr(1)}"
        elif k < 0.8:
            x, y = self.r.sample(POOL, 2)
            head = f"with {x} = {self.atom()}, {y} = {self.pick(POOL)}"
        else:
            head = "with"
        return self.tag(head) + self.body(d) + self.tag("endwith")

    def s_generation(self, d):
        saved, self.loops = self.loops, 0
        body = self.body(d)
        self.loops = saved
        return self.tag("generation") + body + self.tag("endgeneration")

    def s_autoescape(self, d):
        return self.tag(f"autoescape {self.pick(['true', 'false'])}") + self.body(d) + self.tag("endautoescape")

    def s_block(self, d):
        self.blocks += 1
        saved, self.loops = self.loops, 0
        body = self.body(d)
        self.loops = saved
        scoped = " scoped" if self.chance(0.5) else ""
        return self.tag(f"block b{self.blocks}{scoped}") + body + self.tag("endblock")

    def template(self):
        parts = []
        if self.chance(0.6):   # (else ns is Undefined until some statement sets it, if one does)
            parts.append(self.tag(f"set ns = namespace(v={self.atom()})"))
            self.has_ns = True
        while self.budget > 0:
            self.budget -= 1
            parts.append(self.stmt(3))
        return "".join(parts)


def make_scope_case(r):
    """(template, context) from the random stream r."""
    g = ScopeGen(r)
    context = g.context()
    return g.template(), context
