/* operators.c — Python's binary operators, `in` and slicing on values (see
 * operators.h). Apart from the interpreter because they are value semantics
 * (CPython's int, float and sequence rules, its error messages) with no
 * tie to frames or the AST. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "operators.h"
#include "bigint.h"
#include "complex.h"
#include "unicode.h"

/* a + b of two lists (or tuples). Lists are immutable to a template (the
 * sandbox refuses append and its kind), so a sum may share a's items: where
 * a is a sum this render made with room after its items, the new sum writes
 * b's there and takes that room over (a gives it up: a tail is claimed
 * once). A sum made anew keeps room for half as much again, so
 * `ns.l = ns.l + [x]` in a loop is linear in time and memory where copying
 * each time is quadratic. Only this render's sums are claimed: a folded
 * constant or a cached JSON list is shared with other renders and threads. */
static Value seq_concat(Rt *rt, Value a, Value b) {
    List *x = a.u.list, *y = b.u.list;
    size_t n = x->len + y->len;   /* (list_new refuses more than max_items) */
    List *l;
    if (y->len && x->tail_owner == rt->arena && x->cap - x->len >= y->len) {
        l = rt_alloc(rt, sizeof *l);
        *l = (List){.len = x->len, .cap = x->cap, .items = x->items};
        x->cap = x->len;
        x->tail_owner = NULL;
    } else {
        size_t room = n > 4 ? n / 2 : 0;
        l = list_new(rt, n + room <= rt->lim.max_items ? n + room : n);
        if (x->len) memcpy(l->items, x->items, x->len * sizeof(Value));
        l->len = x->len;
    }
    if (y->len) memcpy(l->items + l->len, y->items, y->len * sizeof(Value));
    l->len = n;
    l->tail_owner = rt->arena;
    Value r = a;
    r.flags = 0;
    r.u.list = l;
    return r;
}

static Value repeat(Rt *rt, Value seq, int64_t count) {
    if (count < 0) count = 0;
    if (seq.type == VT_STR) {
        size_t len = seq.u.s->len;
        if (len && (uint64_t)count > rt->lim.max_string / len)
            rt_throw(rt, CF_ERR_LIMIT, "string of %llu bytes exceeds max_string (%zu; raise it with --max-string / cf_limits.max_string)",
                     (unsigned long long)len * (unsigned long long)count, rt->lim.max_string);
        size_t total = len * (size_t)count;
        StrBuf sb;
        sb_init(rt, &sb, total + 1);
        if (total) sb_put(&sb, seq.u.s->data, len);
        /* double what is there (the buffer already holds `total` bytes):
         * 'a' * 10**7 is a few memcpys, not ten million appends */
        while (sb.len < total) {
            size_t chunk = sb.len < total - sb.len ? sb.len : total - sb.len;
            memcpy(sb.p + sb.len, sb.p, chunk);
            sb.len += chunk;
        }
        rt_step(rt, (uint64_t)total / 1024);
        Value r = sb_to_value(&sb);
        r.flags = seq.flags & VF_MARKUP;
        return r;
    }
    size_t len = seq.u.list->len;
    if (len && (uint64_t)count > rt->lim.max_items / len)
        rt_throw(rt, CF_ERR_LIMIT, "list of %llu items exceeds max_items (%zu; raise it with --max-items / cf_limits.max_items)",
                 (unsigned long long)len * (unsigned long long)count, rt->lim.max_items);
    List *l = list_new(rt, len * (size_t)count);
    for (int64_t i = 0; len && i < count; i++)   /* (an empty list: no count-long spin) */
        for (size_t j = 0; j < len; j++) list_push(rt, l, seq.u.list->items[j]);
    Value r = seq;
    r.flags = 0;
    r.u.list = l;
    return r;
}

static double py_fmod(double a, double b) {
    double m = fmod(a, b);
    if (m != 0 && ((b < 0) != (m < 0))) m += b;
    else if (m == 0) m = copysign(0.0, b);
    return m;
}

/* CPython's float_floor_div (via float_divmod), for identical rounding. */
static double py_floordiv(double vx, double wx) {
    double mod = fmod(vx, wx);
    double div = (vx - mod) / wx;
    if (mod != 0) {
        if ((wx < 0) != (mod < 0)) div -= 1.0;
    }
    double floordiv;
    if (div != 0) {
        floordiv = floor(div);
        if (div - floordiv > 0.5) floordiv += 1.0;
    } else {
        floordiv = copysign(0.0, vx / wx);
    }
    return floordiv;
}

Value py_binop(Rt *rt, uint8_t op, Value a, Value b) {
    if (a.type == VT_UNDEFINED) v_undefined_fail(rt, a);
    /* str.__mod__ formats an Undefined as ''; everything else refuses it */
    if (op == OP_MOD && a.type == VT_STR) return py_percent_format(rt, a, b);
    if (b.type == VT_UNDEFINED) v_undefined_fail(rt, b);
    static const char *const names[] = {
        [OP_ADD] = "+", [OP_SUB] = "-", [OP_DIV] = "/", [OP_FLOORDIV] = "//",
        [OP_MUL] = "*", [OP_MOD] = "%", [OP_POW] = "** or pow()"};
    if (is_intlike(a) && is_intlike(b)) {
        /* int64 fast path; a result that leaves int64 is redone as a bigint below */
        int64_t x = as_int(a), y = as_int(b), r;
        const int64_t exact = INT64_C(1) << 53;   /* ints a double holds exactly */
        switch (op) {
        case OP_ADD: if (!__builtin_add_overflow(x, y, &r)) return v_int(r); break;
        case OP_SUB: if (!__builtin_sub_overflow(x, y, &r)) return v_int(r); break;
        case OP_MUL: if (!__builtin_mul_overflow(x, y, &r)) return v_int(r); break;
        case OP_DIV:
            if (y == 0) rt_throw(rt, CF_ERR_ZERO_DIVISION, "division by zero");
            /* one IEEE division is correctly rounded only for exact operands */
            if (x >= -exact && x <= exact && y >= -exact && y <= exact) return v_float((double)x / (double)y);
            break;
        case OP_FLOORDIV: {
            if (y == 0) rt_throw(rt, CF_ERR_ZERO_DIVISION, "integer division or modulo by zero");
            if (x == INT64_MIN && y == -1) break;
            int64_t q = x / y;
            if ((x % y != 0) && ((x < 0) != (y < 0))) q--;
            return v_int(q);
        }
        case OP_MOD: {
            if (y == 0) rt_throw(rt, CF_ERR_ZERO_DIVISION, "integer modulo by zero");
            if (y == -1) return v_int(0);
            int64_t m = x % y;
            if (m != 0 && ((m < 0) != (y < 0))) m += y;
            return v_int(m);
        }
        case OP_POW: {
            if (y < 0) {
                if (x == 0) rt_throw(rt, CF_ERR_ZERO_DIVISION, "0.0 cannot be raised to a negative power");
                return v_float(pow((double)x, (double)y));
            }
            int64_t res = 1, base = x;
            int64_t e = y;
            bool overflow = false;
            while (e > 0 && !overflow) {
                if (e & 1) overflow = __builtin_mul_overflow(res, base, &res);
                e >>= 1;
                if (e > 0 && !overflow) overflow = __builtin_mul_overflow(base, base, &base);
                rt_step(rt, 1);
            }
            if (!overflow) return v_int(res);
            break;
        }
        }
    }
    Value c;
    if ((a.type == VT_OBJECT || b.type == VT_OBJECT) && complex_binop(rt, op, a, b, &c)) return c;
    /* ints beyond int64, or an int64 result that overflowed: exact Python ints */
    bool a_int = is_intlike(a) || a.type == VT_BIGINT, b_int = is_intlike(b) || b.type == VT_BIGINT;
    Value big;
    if (a_int && b_int && bigint_arith(rt, op, a, b, &big)) return big;
    /* float <op> bigint: Python converts the int to float first */
    if (a.type == VT_BIGINT && b.type == VT_FLOAT) a = v_float(bigint_to_float(rt, a));
    if (b.type == VT_BIGINT && a.type == VT_FLOAT) b = v_float(bigint_to_float(rt, b));
    if (is_num(a) && is_num(b)) {
        double x = as_float(a), y = as_float(b);
        switch (op) {
        case OP_ADD: return v_float(x + y);
        case OP_SUB: return v_float(x - y);
        case OP_MUL: return v_float(x * y);
        case OP_DIV:
            if (y == 0) rt_throw(rt, CF_ERR_ZERO_DIVISION, "float division by zero");
            return v_float(x / y);
        case OP_FLOORDIV:
            if (y == 0) rt_throw(rt, CF_ERR_ZERO_DIVISION, "float floor division by zero");
            return v_float(py_floordiv(x, y));
        case OP_MOD:
            if (y == 0) rt_throw(rt, CF_ERR_ZERO_DIVISION, "float modulo");
            return v_float(py_fmod(x, y));
        case OP_POW:
            if (x == 0 && y < 0) rt_throw(rt, CF_ERR_ZERO_DIVISION, "0.0 cannot be raised to a negative power");
            if (x < 0 && y != floor(y) && !isnan(y)) return complex_pow_real(rt, x, y);   /* as float.__pow__ */
            {
                double r = pow(x, y);
                if (isinf(r) && !isinf(x) && !isinf(y)) rt_throw(rt, CF_ERR_OVERFLOW, "(34, 'Numerical result out of range')");
                return v_float(r);
            }
        }
    }
    if (op == OP_ADD) {
        if (a.type == VT_STR && b.type == VT_STR) return py_str_concat(rt, a, b);
        if (a.type == VT_LIST && b.type == VT_LIST && !(a.flags | b.flags)) return seq_concat(rt, a, b);
        if (a.type == VT_TUPLE && b.type == VT_TUPLE) return seq_concat(rt, a, b);
        if (a.type == VT_STR && (a.flags & VF_MARKUP))   /* Markup.__add__ returns NotImplemented */
            rt_throw(rt, CF_ERR_TYPE, "unsupported operand type(s) for +: 'Markup' and '%s'", v_type_name(b));
        if (a.type == VT_STR) rt_throw(rt, CF_ERR_TYPE, "can only concatenate str (not \"%s\") to str", v_type_name(b));
        if (a.type == VT_LIST && !a.flags) rt_throw(rt, CF_ERR_TYPE, "can only concatenate list (not \"%s\") to list", v_type_name(b));
        if (a.type == VT_TUPLE) rt_throw(rt, CF_ERR_TYPE, "can only concatenate tuple (not \"%s\") to tuple", v_type_name(b));
    }
    if (op == OP_MUL) {   /* (a range, a generator or a dict view is no sequence to repeat) */
        bool a_seq = a.type == VT_STR || v_is_list(a) || a.type == VT_TUPLE;
        bool b_seq = b.type == VT_STR || v_is_list(b) || b.type == VT_TUPLE;
        if ((a_seq && b.type == VT_BIGINT) || (b_seq && a.type == VT_BIGINT))
            rt_throw(rt, CF_ERR_OVERFLOW, "cannot fit 'int' into an index-sized integer");
        if (a_seq && is_intlike(b)) return repeat(rt, a, as_int(b));
        if (b_seq && is_intlike(a)) return repeat(rt, b, as_int(a));
        if (a_seq || b_seq)
            rt_throw(rt, CF_ERR_TYPE, "can't multiply sequence by non-int of type '%s'", v_type_name(a_seq ? b : a));
    }
    if (op == OP_MOD && a.type == VT_STR) return py_percent_format(rt, a, b);
    rt_throw(rt, CF_ERR_TYPE, "unsupported operand type(s) for %s: '%s' and '%s'", names[op], v_type_name(a), v_type_name(b));
}

bool py_contains(Rt *rt, Value item, Value container) {
    switch (container.type) {
    case VT_STR: {
        if (item.type != VT_STR)   /* an Undefined too: str.__contains__ refuses it */
            rt_throw(rt, CF_ERR_TYPE, "'in <string>' requires string as left operand, not %s", v_type_name(item));
        return py_str_contains(rt, container.u.s, item.u.s);
    }
    case VT_LIST: case VT_TUPLE: {
        const List *l = v_iterate(rt, container);
        size_t i = 0;
        if (item.type == VT_INT)   /* an int item equals an int by value (others: v_equal, 1 == 1.0 == True) */
            while (i < l->len && !(l->items[i].type == VT_INT ? l->items[i].u.i == item.u.i : v_equal(item, l->items[i])))
                i++;
        else
            while (i < l->len && !v_equal(item, l->items[i])) i++;
        rt_step(rt, i / 2);              /* the items compared, found or not */
        generator_give_back(rt, container, l, i + 1);   /* (a generator yields on after the match) */
        return i < l->len;
    }
    case VT_DICT: {
        if (!v_hashable(item)) rt_throw(rt, CF_ERR_TYPE, "unhashable type: '%s'", v_unhashable_type(item));
        Value dummy;
        return dict_get(container.u.dict, item, &dummy);
    }
    case VT_UNDEFINED:
        return false;     /* Undefined iterates as empty */
    default:
        rt_throw(rt, CF_ERR_TYPE, "argument of type '%s' is not iterable", v_type_name(container));
    }
}

/* Python slice index normalisation. */
static bool slice_indices(Rt *rt, Value vs, Value ve, Value vst, int64_t len,
                          int64_t *start, int64_t *stop, int64_t *step) {
    Value *vals[3] = {&vs, &ve, &vst};
    for (int k = 0; k < 3; k++) {
        Value v = *vals[k];
        if (v.type == VT_MISSING || v.type == VT_NONE) continue;
        if (v.type == VT_UNDEFINED) v_undefined_fail(rt, v);
        if (!is_intlike(v)) return false;
    }
    *step = (vst.type == VT_MISSING || vst.type == VT_NONE) ? 1 : as_int(vst);
    if (*step == 0) rt_throw(rt, CF_ERR_VALUE, "slice step cannot be zero");
    int64_t lo = *step < 0 ? -1 : 0, hi = *step < 0 ? len - 1 : len;
    if (vs.type == VT_MISSING || vs.type == VT_NONE) *start = *step < 0 ? hi : lo;
    else {
        int64_t s = as_int(vs);
        if (s < 0) { s += len; if (s < lo) s = lo; }
        else if (s > hi) s = hi;
        *start = s;
    }
    if (ve.type == VT_MISSING || ve.type == VT_NONE) *stop = *step < 0 ? lo : hi;
    else {
        int64_t s = as_int(ve);
        if (s < 0) { s += len; if (s < lo) s = lo; }
        else if (s > hi) s = hi;
        *stop = s;
    }
    return true;
}

/* range(...)[start:stop:step] with the slice's indices resolved: another
 * range (Python computes its bounds from the indices). */
static Value range_slice(Rt *rt, const RangeList *r, int64_t start, int64_t stop, int64_t step) {
    int64_t a, b, c;
    if (__builtin_mul_overflow(start, r->step, &a) || __builtin_add_overflow(a, r->start, &a) ||
        __builtin_mul_overflow(stop, r->step, &b) || __builtin_add_overflow(b, r->start, &b) ||
        __builtin_mul_overflow(step, r->step, &c))
        rt_throw(rt, CF_ERR_OVERFLOW, "Python int too large to convert to C ssize_t");
    rt_step(rt, range_length(a, b, c) / 16);
    return v_range(rt, a, b, c);
}

Value py_slice(Rt *rt, Value obj, Value vs, Value ve, Value vst, bool folded) {
    int64_t start, stop, step;
    if (obj.type == VT_UNDEFINED) v_undefined_fail(rt, obj);
    if (obj.type == VT_STR) {
        Str *s = obj.u.s;
        int64_t len = (int64_t)str_nchars(s);
        if (!slice_indices(rt, vs, ve, vst, len, &start, &stop, &step)) goto not_subscriptable;
        StrBuf sb;
        sb_init(rt, &sb, 16);
        if ((size_t)len == s->len) {          /* ASCII: byte = char */
            if (step == 1) { if (stop > start) sb_put(&sb, s->data + start, (size_t)(stop - start)); }
            else for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) sb_putc(&sb, s->data[i]);
        } else {
            /* decode to code point offsets once */
            size_t *off = rt_alloc(rt, ((size_t)len + 1) * sizeof(size_t));
            size_t p = 0;
            for (int64_t k = 0; k < len; k++) { off[k] = p; utf8_next(s->data, s->len, &p); }
            off[len] = s->len;
            for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step)
                sb_put(&sb, s->data + off[i], off[i + 1] - off[i]);
        }
        rt_step(rt, (uint64_t)len / 64);
        Value r = sb_to_value(&sb);
        r.flags = obj.flags & VF_MARKUP;
        return r;
    }
    /* generators, reversed() and dict views are not subscriptable, slices
     * included (a slice goes straight to Python's subscript, no getitem) */
    bool sequence = obj.type == VT_TUPLE ||
                    (obj.type == VT_LIST && !(obj.flags & (VF_GENERATOR | VF_VIEW_ITEMS | VF_VIEW_KEYS | VF_VIEW_VALUES)));
    if (sequence) {
        List *src = obj.u.list;
        if (!slice_indices(rt, vs, ve, vst, (int64_t)src->len, &start, &stop, &step)) goto not_subscriptable;
        if (obj.flags & VF_RANGE) return range_slice(rt, v_range_of(obj), start, stop, step);
        int64_t n = (int64_t)range_length(start, stop, step);
        List *l = list_new(rt, (size_t)n);   /* (messages[::-1]: sized once, filled in place) */
        for (int64_t k = 0, i = start; k < n; k++, i += step) l->items[k] = src->items[i];
        l->len = (size_t)n;
        rt_step(rt, l->len / 16);
        Value r = obj;
        r.flags = 0;
        r.u.list = l;
        return r;
    }
not_subscriptable:
    /* A constant-folded slice went through the sandbox's getitem, which turns
     * the TypeError into an Undefined; a runtime slice raises it. */
    if (folded) return v_undef_msg(rt, "%s object has no element slice", v_type_name(obj));
    if (obj.type == VT_STR || sequence)
        rt_throw(rt, CF_ERR_TYPE, "slice indices must be integers or None or have an __index__ method");
    if (obj.type == VT_DICT) rt_throw(rt, CF_ERR_TYPE, "unhashable type: 'slice'");   /* a dict hashes its key */
    rt_throw(rt, CF_ERR_TYPE, "'%s' object is not subscriptable", v_type_name(obj));
}

