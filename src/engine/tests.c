/* tests.c — Jinja2 3.1's builtin tests (`x is name(args)`, jinja2/tests.py),
 * with the Python semantics underneath them: `value % 2` for odd/even (which
 * is string formatting on a str!), identity for sameas, `in` for in,
 * str.islower/isupper for lower/upper, and the ABC checks for mapping,
 * sequence, iterable and callable. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "builtins.h"
#include "complex.h"
#include "unicode.h"

/* ---- arguments: tests take the value plus at most one argument ---- */

/* A Python-defined test `fname(value, pname)`; pname NULL = no argument. */
static Value test_arg_checked(Rt *rt, const Args *args, const char *fname, const char *pname) {
    int want = pname ? 1 : 0;
    Value v = v_missing();
    for (int k = 0; k < args->nkw; k++) {
        if (!pname || !str_eqz(args->kwnames[k], pname))
            rt_throw(rt, CF_ERR_TYPE, "%s() got an unexpected keyword argument '%s'", fname,
                     args->kwnames[k]->data);
        if (args->npos) rt_throw(rt, CF_ERR_TYPE, "%s() got multiple values for argument '%s'", fname, pname);
        v = args->kwvals[k];
    }
    if (args->npos > want) {
        rt_throw(rt, CF_ERR_TYPE, "%s() takes %d positional argument%s but %d were given", fname,
                 want + 1, want ? "s" : "", args->npos + 1);
    }
    if (args->npos) v = args->pos[0];
    if (pname && v.type == VT_MISSING)
        rt_throw(rt, CF_ERR_TYPE, "%s() missing 1 required positional argument: '%s'", fname, pname);
    return v;
}

/* `x is string` passes no arguments: nothing to check. */
static inline Value test_arg(Rt *rt, const Args *args, const char *fname, const char *pname) {
    if (!pname && !args->npos && !args->nkw) return v_missing();
    return test_arg_checked(rt, args, fname, pname);
}

/* operator.eq & co. (C functions): exactly one argument, no keywords. */
static Value operator_arg(Rt *rt, const Args *args, const char *name) {
    if (args->nkw) rt_throw(rt, CF_ERR_TYPE, "_operator.%s() takes no keyword arguments", name);
    if (args->npos != 1)
        rt_throw(rt, CF_ERR_TYPE, "%s expected 2 arguments, got %d", name, args->npos + 1);
    return args->pos[0];
}

/* ---- Python `value % num` as far as the tests need it ---- */

static bool is_int(Value v) { return v.type == VT_INT || v.type == VT_BOOL || v.type == VT_BIGINT; }
static bool is_number(Value v) { return is_int(v) || v.type == VT_FLOAT; }

static int64_t small_int(Value v) { return v.type == VT_BOOL ? (int64_t)v.u.b : v.u.i; }

/* |big| mod m for a decimal-digit bigint, m > 0. */
static int64_t bigint_mod(const Str *s, int64_t m) {
    const char *d = s->data;
    size_t n = s->len;
    if (n && d[0] == '-') d++, n--;
    uint64_t r = 0;
    for (size_t i = 0; i < n; i++) r = (r * 10 + (uint64_t)(d[i] - '0')) % (uint64_t)m;
    return (int64_t)r;
}

static double as_double(Value v) {
    if (v.type == VT_FLOAT) return v.u.f;
    if (v.type == VT_BIGINT) return strtod(v.u.s->data, NULL);
    return (double)small_int(v);
}

/* Whether `value % num == result` (result 0 or 1), raising what Python
 * raises for the operand types. */
static bool mod_equals(Rt *rt, Value value, Value num, int result) {
    if (value.type == VT_UNDEFINED) v_undefined_fail(rt, value);
    if (num.type == VT_UNDEFINED) v_undefined_fail(rt, num);
    if (value.type == VT_STR) {
        py_percent_format(rt, value, num);  /* str % x is formatting; a str never equals 0/1 */
        return false;
    }
    if (!is_number(value) || !is_number(num)) {
        rt_throw(rt, CF_ERR_TYPE, "unsupported operand type(s) for %%: '%s' and '%s'", v_type_name(value),
                 v_type_name(num));
    }
    if (value.type == VT_FLOAT || num.type == VT_FLOAT) {
        double a = as_double(value), b = as_double(num);
        if (b == 0) rt_throw(rt, CF_ERR_ZERO_DIVISION, "float modulo");
        double r = fmod(a, b);
        if (r != 0 && ((r < 0) != (b < 0))) r += b;
        return r == result;
    }
    if (num.type == VT_BIGINT || (value.type != VT_BIGINT && small_int(num) == 0)) {
        if (num.type != VT_BIGINT) rt_throw(rt, CF_ERR_ZERO_DIVISION, "integer modulo by zero");
        /* |value| < |num| unless value is a bigint too: fall back to doubles,
         * exact enough for the divisibility these tests ask about */
        double r = fmod(as_double(value), as_double(num));
        if (r != 0 && ((r < 0) != (as_double(num) < 0))) r += as_double(num);
        return r == result;
    }
    int64_t m = small_int(num);
    if (m == 0) rt_throw(rt, CF_ERR_ZERO_DIVISION, "integer modulo by zero");
    int64_t r;
    if (value.type == VT_BIGINT) {
        bool neg = value.u.s->data[0] == '-';
        uint64_t am = m < 0 ? (uint64_t)0 - (uint64_t)m : (uint64_t)m;
        r = am > (uint64_t)INT64_MAX ? 0 : bigint_mod(value.u.s, (int64_t)am);
        if (neg && r) r = (int64_t)am - r;     /* Python: result takes the divisor's sign */
        if (m < 0 && r) r -= (int64_t)am;
    } else {
        int64_t a = small_int(value);
        if (m == -1) return result == 0;       /* avoids INT64_MIN % -1 */
        r = a % m;
        if (r != 0 && ((r < 0) != (m < 0))) r += m;
    }
    return r == result;
}

/* ---- the tests ---- */

static bool t_odd(Rt *rt, Value self, const Args *args) {
    test_arg(rt, args, "test_odd", NULL);
    return mod_equals(rt, self, v_int(2), 1);
}

static bool t_even(Rt *rt, Value self, const Args *args) {
    test_arg(rt, args, "test_even", NULL);
    return mod_equals(rt, self, v_int(2), 0);
}

static bool t_divisibleby(Rt *rt, Value self, const Args *args) {
    Value num = test_arg(rt, args, "test_divisibleby", "num");
    return mod_equals(rt, self, num, 0);
}

static bool t_defined(Rt *rt, Value self, const Args *args) {
    test_arg(rt, args, "test_defined", NULL);
    return self.type != VT_UNDEFINED && self.type != VT_MISSING;
}

static bool t_undefined(Rt *rt, Value self, const Args *args) {
    test_arg(rt, args, "test_undefined", NULL);
    return self.type == VT_UNDEFINED || self.type == VT_MISSING;
}

/* `value in env.filters` / `env.tests`: a dict lookup, so unhashable
 * values raise TypeError. */
static bool registry_has(Rt *rt, Value self, bool filters) {
    if (!v_hashable(self)) rt_throw(rt, CF_ERR_TYPE, "unhashable type: '%s'", v_unhashable_type(self));
    if (self.type != VT_STR) return false;
    return filters ? filter_lookup(self.u.s->data, self.u.s->len) != NULL
                   : test_lookup(self.u.s->data, self.u.s->len) != NULL;
}

static bool t_filter(Rt *rt, Value self, const Args *args) {
    test_arg(rt, args, "test_filter", NULL);
    return registry_has(rt, self, true);
}

static bool t_test(Rt *rt, Value self, const Args *args) {
    test_arg(rt, args, "test_test", NULL);
    return registry_has(rt, self, false);
}

static bool t_none(Rt *rt, Value self, const Args *args) {
    test_arg(rt, args, "test_none", NULL);
    return self.type == VT_NONE;
}

static bool t_boolean(Rt *rt, Value self, const Args *args) {
    test_arg(rt, args, "test_boolean", NULL);
    return self.type == VT_BOOL;
}

static bool t_false(Rt *rt, Value self, const Args *args) {
    test_arg(rt, args, "test_false", NULL);
    return self.type == VT_BOOL && !self.u.b;
}

static bool t_true(Rt *rt, Value self, const Args *args) {
    test_arg(rt, args, "test_true", NULL);
    return self.type == VT_BOOL && self.u.b;
}

static bool t_integer(Rt *rt, Value self, const Args *args) {
    test_arg(rt, args, "test_integer", NULL);
    return self.type == VT_INT || self.type == VT_BIGINT;  /* bool excluded */
}

static bool t_float(Rt *rt, Value self, const Args *args) {
    test_arg(rt, args, "test_float", NULL);
    return self.type == VT_FLOAT;
}

/* str.islower (want_lower) / str.isupper: no cased character of the other
 * case or titlecase, and at least one of the wanted case. */
static bool str_case_is(Rt *rt, Value v, bool want_lower) {
    StrBuf sb;
    sb_init(rt, &sb, 32);
    v_write_str(rt, &sb, v);
    bool cased = false;
    size_t i = 0;
    rt_step(rt, sb.len / 1024 + 1);
    while (i < sb.len) {
        uint32_t cp = utf8_next(sb.p, sb.len, &i);
        bool other = want_lower ? uc_isupper(cp) : uc_islower(cp);
        if (other || uc_istitle(cp)) return false;
        if (want_lower ? uc_islower(cp) : uc_isupper(cp)) cased = true;
    }
    return cased;
}

static bool t_lower(Rt *rt, Value self, const Args *args) {
    test_arg(rt, args, "test_lower", NULL);
    return str_case_is(rt, self, true);
}

static bool t_upper(Rt *rt, Value self, const Args *args) {
    test_arg(rt, args, "test_upper", NULL);
    return str_case_is(rt, self, false);
}

static bool t_string(Rt *rt, Value self, const Args *args) {
    test_arg(rt, args, "test_string", NULL);
    return self.type == VT_STR;
}

static bool t_mapping(Rt *rt, Value self, const Args *args) {
    test_arg(rt, args, "test_mapping", NULL);
    return self.type == VT_DICT;
}

static bool t_number(Rt *rt, Value self, const Args *args) {
    test_arg(rt, args, "test_number", NULL);
    return is_number(self) || v_is_complex(self);   /* (numbers.Number) */
}

static bool is_view(Value v) {
    return v.type == VT_LIST && (v.flags & (VF_VIEW_ITEMS | VF_VIEW_KEYS | VF_VIEW_VALUES));
}

static bool is_loop(Value v) {
    return v.type == VT_OBJECT && strcmp(v.u.obj->type->name, "LoopContext") == 0;
}

/* len() and __getitem__ both exist (Undefined has both). */
static bool t_sequence(Rt *rt, Value self, const Args *args) {
    test_arg(rt, args, "test_sequence", NULL);
    switch (self.type) {
    case VT_STR: case VT_TUPLE: case VT_DICT: case VT_UNDEFINED: return true;
    case VT_LIST: return !is_view(self);
    default: return false;
    }
}

static bool t_iterable(Rt *rt, Value self, const Args *args) {
    test_arg(rt, args, "test_iterable", NULL);
    switch (self.type) {
    case VT_STR: case VT_LIST: case VT_TUPLE: case VT_DICT: case VT_UNDEFINED: return true;
    default: return is_loop(self);
    }
}

static bool t_callable(Rt *rt, Value self, const Args *args) {
    if (args->nkw) rt_throw(rt, CF_ERR_TYPE, "callable() takes no keyword arguments");
    if (args->npos) rt_throw(rt, CF_ERR_TYPE, "callable() takes exactly one argument (%d given)", args->npos + 1);
    switch (self.type) {
    case VT_CALLABLE: case VT_UNDEFINED: return true;    /* Undefined defines __call__ */
    case VT_OBJECT: return self.u.obj->type->call != NULL;
    default: return false;
    }
}

/* `value is other`: singletons, CPython's cached small ints and one-char
 * strings, and the very same container. */
static bool t_sameas(Rt *rt, Value self, const Args *args) {
    Value other = test_arg(rt, args, "test_sameas", "other");
    if (self.type != other.type) return false;
    switch (self.type) {
    case VT_NONE: return true;
    case VT_BOOL: return self.u.b == other.u.b;
    case VT_INT: return self.u.i == other.u.i && self.u.i >= -5 && self.u.i <= 256;
    case VT_STR:
        if (self.u.s == other.u.s) return true;
        return str_eq(self.u.s, other.u.s) && str_nchars(self.u.s) <= 1 &&
               (self.u.s->len == 0 || (unsigned char)self.u.s->data[0] < 0xC4);  /* latin-1 */
    case VT_LIST: case VT_TUPLE: return self.u.list == other.u.list;
    case VT_DICT: case VT_NAMESPACE: return self.u.dict == other.u.dict;
    case VT_CALLABLE: case VT_OBJECT: return self.u.obj == other.u.obj;
    default: return false;
    }
}

static bool t_escaped(Rt *rt, Value self, const Args *args) {
    test_arg(rt, args, "test_escaped", NULL);
    return self.type == VT_STR && (self.flags & VF_MARKUP);
}

/* Python's `value in seq`. */
static bool t_in(Rt *rt, Value self, const Args *args) {
    Value seq = test_arg(rt, args, "test_in", "seq");
    switch (seq.type) {
    case VT_STR: {
        if (self.type != VT_STR)
            rt_throw(rt, CF_ERR_TYPE, "'in <string>' requires string as left operand, not %s", v_type_name(self));
        const Str *h = seq.u.s, *nd = self.u.s;
        if (nd->len == 0) return true;
        if (nd->len > h->len) return false;
        rt_step(rt, h->len / 1024 + 1);
        for (size_t i = 0; i + nd->len <= h->len; i++)
            if (memcmp(h->data + i, nd->data, nd->len) == 0) return true;
        return false;
    }
    case VT_DICT: {
        if (!v_hashable(self)) rt_throw(rt, CF_ERR_TYPE, "unhashable type: '%s'", v_unhashable_type(self));
        Value dummy;
        return dict_get(seq.u.dict, self, &dummy);
    }
    case VT_LIST: case VT_TUPLE: {
        const List *l = seq.u.list;
        rt_step(rt, l->len / 64 + 1);
        for (size_t i = 0; i < l->len; i++)
            if (v_equal(l->items[i], self)) return true;
        return false;
    }
    case VT_UNDEFINED: return false;   /* iterates as empty */
    default:
        rt_throw(rt, CF_ERR_TYPE, "argument of type '%s' is not iterable", v_type_name(seq));
    }
}

static bool t_eq(Rt *rt, Value self, const Args *args) { return v_equal(self, operator_arg(rt, args, "eq")); }
static bool t_ne(Rt *rt, Value self, const Args *args) { return !v_equal(self, operator_arg(rt, args, "ne")); }
static bool t_lt(Rt *rt, Value self, const Args *args) {
    return v_compare(rt, self, operator_arg(rt, args, "lt"), "<") < 0;
}
static bool t_le(Rt *rt, Value self, const Args *args) {
    return v_compare(rt, self, operator_arg(rt, args, "le"), "<=") <= 0;
}
static bool t_gt(Rt *rt, Value self, const Args *args) {
    return v_compare(rt, self, operator_arg(rt, args, "gt"), ">") > 0;
}
static bool t_ge(Rt *rt, Value self, const Args *args) {
    return v_compare(rt, self, operator_arg(rt, args, "ge"), ">=") >= 0;
}

typedef struct TestEntry { const char *name; TestFn fn; } TestEntry;

static const TestEntry TESTS[] = {
    {"odd", t_odd}, {"even", t_even}, {"divisibleby", t_divisibleby},
    {"defined", t_defined}, {"undefined", t_undefined}, {"filter", t_filter}, {"test", t_test},
    {"none", t_none}, {"boolean", t_boolean}, {"false", t_false}, {"true", t_true},
    {"integer", t_integer}, {"float", t_float}, {"lower", t_lower}, {"upper", t_upper},
    {"string", t_string}, {"mapping", t_mapping}, {"number", t_number},
    {"sequence", t_sequence}, {"iterable", t_iterable}, {"callable", t_callable},
    {"sameas", t_sameas}, {"escaped", t_escaped}, {"in", t_in},
    {"==", t_eq}, {"eq", t_eq}, {"equalto", t_eq}, {"!=", t_ne}, {"ne", t_ne},
    {">", t_gt}, {"gt", t_gt}, {"greaterthan", t_gt}, {"ge", t_ge}, {">=", t_ge},
    {"<", t_lt}, {"lt", t_lt}, {"lessthan", t_lt}, {"<=", t_le}, {"le", t_le},
};

uint8_t test_type_id(TestFn fn) {
    return fn == t_defined ? TYPE_TEST_DEFINED : fn == t_undefined ? TYPE_TEST_UNDEFINED
         : fn == t_none ? TYPE_TEST_IS_NONE : fn == t_string ? TYPE_TEST_STRING
         : fn == t_mapping ? TYPE_TEST_MAPPING : TYPE_TEST_NONE;
}

TestFn test_lookup(const char *name, size_t n) {
    for (size_t i = 0; i < sizeof TESTS / sizeof TESTS[0]; i++)
        if (strlen(TESTS[i].name) == n && memcmp(TESTS[i].name, name, n) == 0) return TESTS[i].fn;
    return NULL;
}
