/* operators.h — Python's binary operators on values, as Jinja2's compiled
 * code applies them: arithmetic (+ - * / // % ** with Python's ints, floats,
 * complex results and sequence repetition), `in`, and slicing. The
 * interpreter calls them (operators.c) after its own fast paths for the
 * common cases (int + int, str + str, ==). */
#ifndef CF_OPERATORS_H
#define CF_OPERATORS_H

#include <string.h>

#include "builtins.h"

static inline bool is_intlike(Value v) { return v.type == VT_INT || v.type == VT_BOOL; }
static inline int64_t as_int(Value v) { return v.type == VT_BOOL ? (int64_t)v.u.b : v.u.i; }
static inline bool is_num(Value v) { return v.type == VT_INT || v.type == VT_BOOL || v.type == VT_FLOAT; }
static inline double as_float(Value v) { return v.type == VT_FLOAT ? v.u.f : (double)as_int(v); }

/* a + b on two strs; a Markup side makes the result Markup, the other side escaped. */
static inline Value py_str_concat(Rt *rt, Value a, Value b) {
    bool markup = (a.flags | b.flags) & VF_MARKUP;
    if (markup) {
        if (!(a.flags & VF_MARKUP)) a = markup_escape(rt, a);
        if (!(b.flags & VF_MARKUP)) b = markup_escape(rt, b);
    }
    Str *s = str_alloc(rt, a.u.s->len + b.u.s->len);
    memcpy(s->data, a.u.s->data, a.u.s->len);
    memcpy(s->data + a.u.s->len, b.u.s->data, b.u.s->len);
    if (a.u.s->nchars >= 0 && b.u.s->nchars >= 0) s->nchars = a.u.s->nchars + b.u.s->nchars;   /* (see str_known_ascii) */
    Value r = v_str_of(s);
    if (markup) r.flags |= VF_MARKUP;
    return r;
}

/* a <op> b for op one of OP_ADD .. OP_POW (ast.h), raising as Python does. */
Value py_binop(Rt *rt, uint8_t op, Value a, Value b);
/* item in container. */
bool py_contains(Rt *rt, Value item, Value container);
/* needle in hay, two strs ('</think>' in content): py_contains's str case. */
static inline bool py_str_contains(Rt *rt, const Str *hay, const Str *needle) {
    if (needle->len == 0) return true;
    if (needle->len > hay->len) return false;
    rt_step(rt, hay->len / 256);
    return cf_memmem(hay->data, hay->len, needle->data, needle->len) != NULL;
}
/* obj[start:stop:step], each VT_MISSING when absent. folded: the slice was
 * constant-folded through the sandbox's getitem, which turns a TypeError
 * into an Undefined. */
Value py_slice(Rt *rt, Value obj, Value vs, Value ve, Value vst, bool folded);

#endif
