/* filters.c — the builtin filters of Jinja2 3.1 (jinja2/filters.py) as the
 * ImmutableSandboxedEnvironment that transformers uses runs it: autoescape
 * off, and `tojson` replaced by transformers' plain json.dumps. Each filter
 * follows its Python source line by line, including the Python semantics it
 * leans on (str methods, sorted(), sum(), round()), the Markup-ness of
 * results, and the exceptions Python would raise.
 *
 * This file holds the registry (filter_lookup), argument binding, and the
 * filters over values and sequences (sort, groupby, map, select, join, sum,
 * round, tojson...). The filters that format or rewrite text (wordwrap,
 * pprint, urlize, striptags, indent...) are in filters_text.c: each carries
 * its own reimplementation of a Python module (textwrap, pprint, html) and
 * none is on the render's common path. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "filters_shared.h"
#include "complex.h"
#include "json.h"
#include "unicode.h"


/* ------------------------------------------------------------------ */
/* Argument binding with the messages Python gives for def f(value, ...)  */
/* ------------------------------------------------------------------ */

void filter_bind_slow(Rt *rt, const Args *args, const Sig *sig, Value *out) {
    int lead = sig->hidden + 1;  /* Python counts these as positional too */
    for (int i = 0; i < sig->nparams; i++) out[i] = v_missing();
    if (args->npos > sig->nparams) {
        int lo = lead + sig->nreq, hi = lead + sig->nparams, given = lead + args->npos;
        if (lo == hi)
            rt_throw(rt, CF_ERR_TYPE, "%s() takes %d positional argument%s but %d were given", sig->fname,
                     hi, hi == 1 ? "" : "s", given);
        rt_throw(rt, CF_ERR_TYPE, "%s() takes from %d to %d positional arguments but %d were given",
                 sig->fname, lo, hi, given);
    }
    for (int i = 0; i < args->npos; i++) out[i] = args->pos[i];
    for (int k = 0; k < args->nkw; k++) {
        const Str *kw = args->kwnames[k];
        int at = -1;
        for (int i = 0; i < sig->nparams && at < 0; i++)
            if (kw->data[0] == sig->names[i][0] && str_eqz(kw, sig->names[i])) at = i;   /* (first bytes: the quick no) */
        if (at < 0)
            rt_throw(rt, CF_ERR_TYPE, "%s() got an unexpected keyword argument '%s'", sig->fname, kw->data);
        if (out[at].type != VT_MISSING)
            rt_throw(rt, CF_ERR_TYPE, "%s() got multiple values for argument '%s'", sig->fname, kw->data);
        out[at] = args->kwvals[k];
    }
    int missing = 0;
    for (int i = 0; i < sig->nreq; i++) missing += out[i].type == VT_MISSING;
    if (missing) {
        StrBuf m;
        sb_init(rt, &m, 64);
        sb_printf(&m, "%s() missing %d required positional argument%s: ", sig->fname, missing,
                  missing == 1 ? "" : "s");
        int seen = 0;
        for (int i = 0; i < sig->nreq; i++) {
            if (out[i].type != VT_MISSING) continue;
            if (seen) sb_puts(&m, seen == missing - 1 ? (missing > 2 ? ", and " : " and ") : ", ");
            sb_printf(&m, "'%s'", sig->names[i]);
            seen++;
        }
        rt_throw(rt, CF_ERR_TYPE, "%s", sb_to_str(&m)->data);
    }
}

/* Builtins written in C (len, abs, escape): one positional argument only. */
static void bind_c_builtin(Rt *rt, const Args *args, const char *fname) {
    if (args->nkw) rt_throw(rt, CF_ERR_TYPE, "%s() takes no keyword arguments", fname);
    if (args->npos) rt_throw(rt, CF_ERR_TYPE, "%s() takes exactly one argument (%d given)", fname, args->npos + 1);
}

/* ------------------------------------------------------------------ */
/* Python helpers                                                        */
/* ------------------------------------------------------------------ */

static const uint64_t ONES = 0x0101010101010101u;   /* a 1 in each byte */

/* Whether one of the eight bytes of w is non-ASCII or in [lo, hi], given
 * add_lo = ONES * (0x80 - lo) and add_hi = ONES * (0x7f - hi): for ASCII
 * bytes b (no carry between bytes), b + (0x80 - lo) has its top bit set
 * when b >= lo, and b + (0x7f - hi) when b > hi. Zero bytes pass. */
static inline bool word_flagged(uint64_t w, uint64_t add_lo, uint64_t add_hi) {
    return ((w | ((w + add_lo) & ~(w + add_hi))) & ONES * 0x80) != 0;
}

/* An ASCII string with no letter in [lo, hi] is its own lower()/upper().
 * Eight bytes a step. */
static bool ascii_without(Value s, char lo, char hi) {
    if (s.type != VT_STR) return false;
    const char *d = s.u.s->data;
    size_t n = s.u.s->len;
    const uint64_t add_lo = ONES * (uint64_t)(0x80 - lo), add_hi = ONES * (uint64_t)(0x7f - hi);
    uint64_t w = 0;
    if (n >= 8) {
        for (size_t i = 0; i + 8 <= n; i += 8) {
            memcpy(&w, d + i, 8);
            if (word_flagged(w, add_lo, add_hi)) return false;
        }
        memcpy(&w, d + n - 8, 8);   /* the tail, overlapping what was seen */
    } else if (n >= 4) {   /* roles and names: two overlapping halves */
        uint32_t a, b;
        memcpy(&a, d, 4);
        memcpy(&b, d + n - 4, 4);
        w = (uint64_t)a | (uint64_t)b << 32;
    } else {
        for (size_t i = 0; i < n; i++) w |= (uint64_t)(unsigned char)d[i] << (8 * i);
    }
    return !word_flagged(w, add_lo, add_hi);
}

Value str_lower(Rt *rt, Value s) {
    if (ascii_without(s, 'A', 'Z')) return s;   /* message.role|lower */
    return str_method_call(rt, SM_LOWER, s, 0, NULL);
}

/* Python's `a + b` on two strs, with Markup's escaping of the plain side. */
Value markup_concat(Rt *rt, Value a, Value b) {
    bool ma = is_markup(a), mb = is_markup(b);
    if (ma != mb) {
        if (ma) b = markup_escape(rt, b);
        else a = markup_escape(rt, a);
    }
    StrBuf sb;
    sb_init(rt, &sb, a.u.s->len + b.u.s->len + 1);
    sb_put(&sb, a.u.s->data, a.u.s->len);
    sb_put(&sb, b.u.s->data, b.u.s->len);
    Value r = sb_to_value(&sb);
    return (ma || mb) ? v_markup(r) : r;
}

/* sep.join(items) for str items: Markup.join escapes plain items. */
Value markup_join(Rt *rt, Value sep, const List *items) {
    bool markup = is_markup(sep);
    StrBuf sb;
    sb_init(rt, &sb, 64);
    for (size_t i = 0; i < items->len; i++) {
        if (i) sb_put(&sb, sep.u.s->data, sep.u.s->len);
        Value it = items->items[i];
        if (markup && !is_markup(it)) it = markup_escape(rt, it);
        sb_put(&sb, it.u.s->data, it.u.s->len);
    }
    Value r = sb_to_value(&sb);
    return markup ? v_markup(r) : r;
}

/* s[start:end] by code points (Markup keeps its flag, as Markup.__getitem__). */
Value str_slice_chars(Rt *rt, Value s, size_t start, size_t end) {
    const Str *str = s.u.s;
    size_t a = utf8_offset(str->data, str->len, start), b = utf8_offset(str->data, str->len, end);
    Value r = v_str(rt, str->data + a, b - a);
    r.flags = s.flags & VF_MARKUP;
    return r;
}

static _Noreturn void key_error(Rt *rt, Value key) {
    StrBuf m;
    sb_init(rt, &m, 32);
    v_write_repr(rt, &m, key);
    rt_throw(rt, CF_ERR_KEY, "%s", sb_to_str(&m)->data);
}

/* Python float(v); false where Python raises TypeError/ValueError (the
 * callers either fall back to a default or word the error). */
static bool try_float(Rt *rt, Value v, double *out) {
    switch (v.type) {
    case VT_FLOAT: *out = v.u.f; return true;
    case VT_INT: case VT_BOOL: *out = (double)small_int(v); return true;
    case VT_BIGINT:
        *out = strtod(v.u.s->data, NULL);
        if (isinf(*out)) rt_throw(rt, CF_ERR_OVERFLOW, "int too large to convert to float");
        return true;
    case VT_STR: return py_parse_float(rt, v.u.s->data, v.u.s->len, out);
    case VT_UNDEFINED: v_undefined_fail(rt, v);
    default: return false;
    }
}

/* Python float(v), raising as Python does. */
double py_float(Rt *rt, Value v) {
    double d;
    if (try_float(rt, v, &d)) return d;
    if (v.type == VT_STR) {
        StrBuf m;
        sb_init(rt, &m, 48);
        v_write_repr(rt, &m, plain_str(rt, v));
        rt_throw(rt, CF_ERR_VALUE, "could not convert string to float: %s", sb_to_str(&m)->data);
    }
    rt_throw(rt, CF_ERR_TYPE, "float() argument must be a string or a real number, not '%s'", v_type_name(v));
}

/* ---- decimal-string integers (VT_BIGINT arithmetic the filters need) ---- */

static Str *int_digits(Rt *rt, Value v) {
    if (v.type == VT_BIGINT) return v.u.s;
    StrBuf sb;
    sb_init(rt, &sb, 24);
    sb_printf(&sb, "%lld", (long long)small_int(v));
    return sb_to_str(&sb);
}

/* Compare magnitudes of digit strings without signs. */
static int cmp_mag(const char *a, size_t an, const char *b, size_t bn) {
    if (an != bn) return an < bn ? -1 : 1;
    int c = memcmp(a, b, an);
    return c < 0 ? -1 : c > 0;
}

/* a + b for Python ints of any size. */
static Value int_add(Rt *rt, Value x, Value y) {
    if (x.type != VT_BIGINT && y.type != VT_BIGINT) {
        int64_t a = small_int(x), b = small_int(y);
        if (!((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b))) return v_int(a + b);
    }
    Str *sa = int_digits(rt, x), *sb_ = int_digits(rt, y);
    const char *a = sa->data, *b = sb_->data;
    size_t an = sa->len, bn = sb_->len;
    bool na = a[0] == '-', nb = b[0] == '-';
    if (na) a++, an--;
    if (nb) b++, bn--;
    size_t cap = (an > bn ? an : bn) + 2;
    char *out = rt_alloc(rt, cap + 1);
    size_t k = cap;
    bool neg;
    if (na == nb) {
        int carry = 0;
        for (size_t i = 0; i < an || i < bn || carry; i++) {
            int d = carry + (i < an ? a[an - 1 - i] - '0' : 0) + (i < bn ? b[bn - 1 - i] - '0' : 0);
            out[--k] = (char)('0' + d % 10);
            carry = d / 10;
        }
        neg = na;
    } else {
        if (cmp_mag(a, an, b, bn) < 0) {  /* make a the larger magnitude */
            const char *t = a; a = b; b = t;
            size_t tn = an; an = bn; bn = tn;
            bool tb = na; na = nb; nb = tb;
        }
        int borrow = 0;
        for (size_t i = 0; i < an; i++) {
            int d = (a[an - 1 - i] - '0') - borrow - (i < bn ? b[bn - 1 - i] - '0' : 0);
            borrow = d < 0;
            out[--k] = (char)('0' + (d + 10) % 10);
        }
        neg = na;
    }
    while (k < cap - 1 && out[k] == '0') k++;
    if (neg && !(cap - k == 1 && out[k] == '0')) out[--k] = '-';
    return v_bigint(rt, out + k, cap - k);
}

/* Python's binary + for what sum() meets: numbers, lists, tuples. */
static Value py_add(Rt *rt, Value a, Value b) {
    if (a.type == VT_UNDEFINED) v_undefined_fail(rt, a);
    if (b.type == VT_UNDEFINED) v_undefined_fail(rt, b);
    if (is_int(a) && is_int(b)) return int_add(rt, a, b);
    if (is_number(a) && is_number(b)) return v_float(py_float(rt, a) + py_float(rt, b));
    if ((a.type == VT_LIST && b.type == VT_LIST && !a.flags && !b.flags) ||
        (a.type == VT_TUPLE && b.type == VT_TUPLE)) {
        List *l = list_new(rt, a.u.list->len + b.u.list->len + 1);
        for (size_t i = 0; i < a.u.list->len; i++) list_push(rt, l, a.u.list->items[i]);
        for (size_t i = 0; i < b.u.list->len; i++) list_push(rt, l, b.u.list->items[i]);
        Value r = v_list_of(l);
        r.type = a.type;
        return r;
    }
    if (a.type == VT_STR && b.type == VT_STR) return markup_concat(rt, a, b);
    Value c;
    if (complex_binop(rt, OP_ADD, a, b, &c)) return c;
    if (a.type == VT_LIST && !a.flags)   /* (a generator, range or view is no list either) */
        rt_throw(rt, CF_ERR_TYPE, "can only concatenate list (not \"%s\") to list", v_type_name(b));
    if (a.type == VT_TUPLE)
        rt_throw(rt, CF_ERR_TYPE, "can only concatenate tuple (not \"%s\") to tuple", v_type_name(b));
    rt_throw(rt, CF_ERR_TYPE, "unsupported operand type(s) for +: '%s' and '%s'", v_type_name(a), v_type_name(b));
}

/* ------------------------------------------------------------------ */
/* make_attrgetter / make_multi_attrgetter                              */
/* ------------------------------------------------------------------ */

/* _prepare_attribute_parts: "a.0.b" -> ["a", 0, "b"]; None -> []. */
static Path attr_path(Rt *rt, Value attr) {
    Path p = {0, NULL};
    if (is_none(attr)) return p;
    if (attr.type != VT_STR) {
        p.n = 1;
        p.parts = rt_alloc(rt, sizeof(Value));
        p.parts[0] = attr;
        return p;
    }
    const char *s = attr.u.s->data;
    size_t len = attr.u.s->len, count = 1;
    for (size_t i = 0; i < len; i++) count += s[i] == '.';
    p.parts = rt_alloc(rt, count * sizeof(Value));
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && s[i] != '.') continue;
        bool digits = i > start;
        for (size_t k = start; k < i; k++) digits = digits && s[k] >= '0' && s[k] <= '9';
        Value part = v_str(rt, s + start, i - start);
        if (digits) py_parse_int(rt, s + start, i - start, 10, &part);
        p.parts[p.n++] = part;
        start = i + 1;
    }
    return p;
}

static Getter make_getter(Rt *rt, Value attr, bool lower, Value dflt) {
    Getter g = {1, rt_alloc(rt, sizeof(Path)), false, lower, dflt};
    g.paths[0] = attr_path(rt, attr);
    return g;
}

static Getter make_multi_getter(Rt *rt, Value attr, bool lower) {
    Getter g = {0, NULL, true, lower, v_missing()};
    if (attr.type != VT_STR) {
        g.npaths = 1;
        g.paths = rt_alloc(rt, sizeof(Path));
        g.paths[0] = attr_path(rt, attr);
        return g;
    }
    Value comma = v_str(rt, ",", 1);
    Value parts = str_method_call(rt, SM_SPLIT, plain_str(rt, attr), 1, &comma);
    g.npaths = parts.u.list->len;
    g.paths = rt_alloc(rt, g.npaths * sizeof(Path));
    for (size_t i = 0; i < g.npaths; i++) g.paths[i] = attr_path(rt, parts.u.list->items[i]);
    return g;
}

static Value ignore_case(Rt *rt, Value v) { return v.type == VT_STR ? str_lower(rt, v) : v; }

static Value follow_path(Rt *rt, const Getter *g, const Path *p, Value item) {
    for (size_t i = 0; i < p->n; i++) {
        item = v_getitem(rt, item, p->parts[i]);
        if (g->dflt.type != VT_MISSING && !is_none(g->dflt) && item.type == VT_UNDEFINED) item = g->dflt;
    }
    return g->lower ? ignore_case(rt, item) : item;
}

static Value get_attr(Rt *rt, const Getter *g, Value item) {
    if (!g->multi) return follow_path(rt, g, &g->paths[0], item);
    List *l = list_new(rt, g->npaths);
    for (size_t i = 0; i < g->npaths; i++) list_push(rt, l, follow_path(rt, g, &g->paths[i], item));
    return v_list_of(l);
}

/* ------------------------------------------------------------------ */
/* Sorting exactly as CPython's list.sort compares: count_run + binary   */
/* insertion for short lists (the comparison order decides which         */
/* TypeError message appears); beyond 64 items count_run, then a stable  */
/* merge sort when the first run is not the whole list.                  */
/* ------------------------------------------------------------------ */

static bool lt(Rt *rt, Value a, Value b) { return v_compare(rt, a, b, "<") < 0; }

static void reverse_keyed(Keyed *a, size_t n) {
    for (size_t i = 0, j = n; i + 1 < j; i++, j--) {
        Keyed t = a[i];
        a[i] = a[j - 1];
        a[j - 1] = t;
    }
}

static void binary_insertion(Rt *rt, Keyed *a, size_t n, size_t start) {
    for (; start < n; start++) {
        Keyed pivot = a[start];
        size_t l = 0, r = start;
        while (l < r) {
            size_t p = l + ((r - l) >> 1);
            if (lt(rt, pivot.key, a[p].key)) r = p;
            else l = p + 1;
        }
        memmove(a + l + 1, a + l, (start - l) * sizeof(Keyed));
        a[l] = pivot;
    }
}

static void merge_sort(Rt *rt, Keyed *a, Keyed *tmp, size_t n) {
    if (n < 64) {
        binary_insertion(rt, a, n, 1);
        return;
    }
    size_t h = n / 2;
    merge_sort(rt, a, tmp, h);
    merge_sort(rt, a + h, tmp, n - h);
    rt_step(rt, n / 64 + 1);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = lt(rt, a[j].key, a[i].key) ? a[j++] : a[i++];
    while (i < h) tmp[k++] = a[i++];
    while (j < n) tmp[k++] = a[j++];
    memcpy(a, tmp, n * sizeof(Keyed));
}

/* What sorting n items is charged: their n log n comparisons. */
static uint64_t sort_steps(size_t n) {
    uint64_t log2n = 1;
    while (log2n < 64 && ((uint64_t)1 << log2n) < n) log2n++;
    return (uint64_t)n * log2n / 4;
}

void sort_keyed(Rt *rt, Keyed *a, size_t n, bool reverse) {
    /* charge the n log n comparisons up front: a huge sort stops before it starts */
    rt_step(rt, sort_steps(n));
    if (reverse) reverse_keyed(a, n);
    if (n >= 2) {
        /* count_run, CPython's first step at any length: a strictly
         * descending prefix is reversed in place. A run that is the whole
         * list (an already sorted one) leaves nothing to do. */
        size_t run = 2;
        if (lt(rt, a[1].key, a[0].key)) {
            while (run < n && lt(rt, a[run].key, a[run - 1].key)) run++;
            reverse_keyed(a, run);
        } else {
            while (run < n && !lt(rt, a[run].key, a[run - 1].key)) run++;
        }
        if (n < 64) binary_insertion(rt, a, n, run);
        else if (run < n) {
            Keyed *tmp = rt_alloc(rt, n * sizeof(Keyed));
            merge_sort(rt, a, tmp, n);
            rt_free(rt, tmp, n * sizeof(Keyed));
        }
    }
    if (reverse) reverse_keyed(a, n);
}

/* sorted(items, key=getter, reverse=reverse) -> fresh List */
static Keyed *keyed_items(Rt *rt, const List *items, const Getter *g) {
    /* (to be sorted: a sort beyond the step budget stops before its copy is made) */
    if (rt->steps + sort_steps(items->len) > rt->lim.max_steps) rt_steps_exhausted(rt);
    Keyed *a = rt_alloc(rt, (items->len + 1) * sizeof(Keyed));
    for (size_t i = 0; i < items->len; i++) {
        a[i].val = items->items[i];
        a[i].key = g ? get_attr(rt, g, a[i].val) : a[i].val;
    }
    rt_step(rt, items->len / 64 + 1);
    return a;
}

static Value generator_of(List *l) {
    Value v = v_list_of(l);
    v.flags = VF_GENERATOR;
    return v;
}

List *sorted_list(Rt *rt, const List *items, const Getter *g, bool reverse) {
    Keyed *a = keyed_items(rt, items, g);
    sort_keyed(rt, a, items->len, reverse);
    List *out = new_list(rt, items->len);
    for (size_t i = 0; i < items->len; i++) list_push(rt, out, a[i].val);
    rt_free(rt, a, (items->len + 1) * sizeof(Keyed));
    return out;
}

/* ------------------------------------------------------------------ */
/* The filters                                                           */
/* ------------------------------------------------------------------ */

static Value f_abs(Rt *rt, Value self, const Args *args) {
    bind_c_builtin(rt, args, "abs");
    switch (self.type) {
    case VT_BOOL: return v_int(self.u.b);
    case VT_FLOAT: return v_float(fabs(self.u.f));
    case VT_INT:
        if (self.u.i == INT64_MIN) return v_bigint(rt, "9223372036854775808", 19);
        return v_int(self.u.i < 0 ? -self.u.i : self.u.i);
    case VT_BIGINT: {
        const Str *s = self.u.s;
        return s->data[0] == '-' ? v_bigint(rt, s->data + 1, s->len - 1) : self;
    }
    default:
        if (v_is_complex(self)) return complex_abs(rt, self);
        rt_throw(rt, CF_ERR_TYPE, "bad operand type for abs(): '%s'", v_type_name(self));
    }
}

static const Sig SIG_ATTR = {"do_attr", 1, 1, 1, {"name"}};

/* obj.name without falling back to obj[name]: only real attributes. */
static Value f_attr(Rt *rt, Value self, const Args *args) {
    Value a[1];
    bind(rt, args, &SIG_ATTR, a);
    Value name = a[0];
    if (name.type != VT_STR)
        rt_throw(rt, CF_ERR_TYPE, "attribute name must be string, not '%s'", v_type_name(name));
    const char *n = name.u.s->data;
    size_t len = name.u.s->len;
    if (self.type == VT_UNDEFINED) {
        if (len >= 4 && n[0] == '_' && n[1] == '_' && n[len - 1] == '_' && n[len - 2] == '_')
            return v_undef_msg(rt, "%s", "'Undefined' has no attribute");
        v_undefined_fail(rt, self);
    }
    /* Python containers have methods as attributes but their items are not
     * (a range's start/stop/step and groupby's grouper/list are attributes) */
    bool has_items = (self.type == VT_DICT || self.type == VT_LIST || self.type == VT_TUPLE || self.type == VT_STR) &&
                     !(self.flags & (VF_RANGE | VF_GROUP_TUPLE));
    if (has_items && !method_exists(self, n, len) && !(len >= 1 && n[0] == '_')) {
        StrBuf m;
        sb_init(rt, &m, 64);
        sb_printf(&m, "'%s object' has no attribute ", is_markup(self) ? "markupsafe.Markup" : v_type_name(self));
        v_write_repr(rt, &m, name);
        return v_undef(sb_to_str(&m));
    }
    return v_getattr(rt, self, n, len);
}

static const Sig SIG_BATCH = {"do_batch", 0, 1, 2, {"linecount", "fill_with"}};

static Value f_batch(Rt *rt, Value self, const Args *args) {
    Value a[2];
    bind(rt, args, &SIG_BATCH, a);
    Value count = a[0], fill = or_default(a[1], v_none());
    List *items = v_iterate(rt, self);
    /* batches sized to the count when it is a plain int (a fill may top the last up) */
    size_t cap = count.type == VT_INT && count.u.i > 0 && count.u.i <= 64 ? (size_t)count.u.i : 4;
    rt_step(rt, items->len / 4 + 1);
    List *out = new_list(rt, 4), *tmp = new_list(rt, cap);
    for (size_t i = 0; i < items->len; i++) {
        if (v_equal(v_int((int64_t)tmp->len), count)) {
            list_push(rt, out, v_list_of(tmp));
            rt_step(rt, 8);   /* each batch is a new list */
            tmp = new_list(rt, cap);
        }
        list_push(rt, tmp, items->items[i]);
    }
    if (tmp->len) {
        if (!is_none(fill) && v_compare(rt, v_int((int64_t)tmp->len), count, "<") < 0) {
            if (!is_int(count))
                rt_throw(rt, CF_ERR_TYPE, "can't multiply sequence by non-int of type '%s'", v_type_name(count));
            int64_t want = small_int(count);
            while ((int64_t)tmp->len < want) list_push(rt, tmp, fill);
        }
        list_push(rt, out, v_list_of(tmp));
    }
    return generator_of(out);
}

static const Sig SIG_STR1 = {"do_capitalize", 0, 0, 0, {0}};

static Value f_capitalize(Rt *rt, Value self, const Args *args) {
    bind(rt, args, &SIG_STR1, NULL);
    return str_method_call(rt, SM_CAPITALIZE, soft_str(rt, self), 0, NULL);
}

static Value f_length(Rt *rt, Value self, const Args *args) {
    bind_c_builtin(rt, args, "len");
    return v_int(v_len(rt, self));
}

static const Sig SIG_DEFAULT = {"do_default", 0, 0, 2, {"default_value", "boolean"}};

static Value f_default(Rt *rt, Value self, const Args *args) {
    Value a[2];
    bind(rt, args, &SIG_DEFAULT, a);
    Value dflt = a[0].type == VT_MISSING ? empty_str(rt) : a[0];
    bool boolean = a[1].type != VT_MISSING && v_truthy(a[1]);
    if (self.type == VT_UNDEFINED || (boolean && !v_truthy(self))) return dflt;
    return self;
}

static const Sig SIG_DICTSORT = {"do_dictsort", 0, 0, 3, {"case_sensitive", "by", "reverse"}};

static Value f_dictsort(Rt *rt, Value self, const Args *args) {
    Value a[3];
    bind(rt, args, &SIG_DICTSORT, a);
    bool case_sensitive = a[0].type != VT_MISSING && v_truthy(a[0]);
    Value by = a[1].type == VT_MISSING ? v_strz(rt, "key") : a[1];
    bool reverse = a[2].type != VT_MISSING && v_truthy(a[2]);
    int pos;
    if (v_equal(by, v_strz(rt, "key"))) pos = 0;
    else if (v_equal(by, v_strz(rt, "value"))) pos = 1;
    else rt_throw(rt, CF_ERR_FILTER_ARGUMENT, "You can only sort by either \"key\" or \"value\"");
    if (self.type == VT_UNDEFINED) v_undefined_fail(rt, self);
    if (self.type != VT_DICT)
        rt_throw(rt, CF_ERR_ATTRIBUTE, "'%s' object has no attribute 'items'", v_type_name(self));
    const Dict *d = self.u.dict;
    size_t n = dict_len(d);
    Keyed *k = rt_alloc(rt, (n + 1) * sizeof(Keyed));
    for (size_t i = 0; i < n; i++) {
        k[i].val = tuple2(rt, dict_key_at(d, i), dict_val_at(d, i));
        Value key = pos == 0 ? dict_key_at(d, i) : dict_val_at(d, i);
        k[i].key = case_sensitive ? key : ignore_case(rt, key);
    }
    sort_keyed(rt, k, n, reverse);
    List *out = new_list(rt, n);
    for (size_t i = 0; i < n; i++) list_push(rt, out, k[i].val);
    return v_list_of(out);
}

static const Sig SIG_ESCAPE = {"escape", 0, 0, 0, {0}};

static Value f_escape(Rt *rt, Value self, const Args *args) {
    bind(rt, args, &SIG_ESCAPE, NULL);
    return markup_escape(rt, self);
}

static const Sig SIG_FIRST = {"sync_do_first", 1, 0, 0, {0}};

static Value f_first(Rt *rt, Value self, const Args *args) {
    bind(rt, args, &SIG_FIRST, NULL);
    if (self.type == VT_STR) {
        if (!self.u.s->len) return v_undef_msg(rt, "No first item, sequence was empty.");
        return str_slice_chars(rt, plain_str(rt, self), 0, 1);
    }
    List *l = v_iterate(rt, self);
    if (!l->len) return v_undef_msg(rt, "No first item, sequence was empty.");
    generator_give_back(rt, self, l, 1);   /* (a generator gives up its first item only) */
    return l->items[0];
}

static const Sig SIG_FLOAT = {"do_float", 0, 0, 1, {"default"}};

static Value f_float(Rt *rt, Value self, const Args *args) {
    Value a[1];
    bind(rt, args, &SIG_FLOAT, a);
    double d;
    if (try_float(rt, self, &d)) return v_float(d);
    return or_default(a[0], v_float(0.0));
}

static const Sig SIG_FORCEESCAPE = {"do_forceescape", 0, 0, 0, {0}};

static Value f_forceescape(Rt *rt, Value self, const Args *args) {
    bind(rt, args, &SIG_FORCEESCAPE, NULL);
    return markup_escape(rt, plain_str(rt, self));
}

static Value f_format(Rt *rt, Value self, const Args *args) {
    if (args->npos && args->nkw)
        rt_throw(rt, CF_ERR_FILTER_ARGUMENT, "can't handle positional and keyword arguments at the same time");
    Value operand;
    if (args->nkw) {
        Dict *d = dict_new(rt, (size_t)args->nkw);
        for (int k = 0; k < args->nkw; k++) dict_set(rt, d, v_str_of(args->kwnames[k]), args->kwvals[k]);
        operand = v_dict_of(d);
    } else {
        List *t = new_list(rt, (size_t)args->npos);
        for (int k = 0; k < args->npos; k++) list_push(rt, t, args->pos[k]);
        operand = v_tuple_of(t);
    }
    return py_percent_format(rt, soft_str(rt, self), operand);
}

static const Sig SIG_GROUPBY = {"sync_do_groupby", 1, 1, 3, {"attribute", "default", "case_sensitive"}};

static Value f_groupby(Rt *rt, Value self, const Args *args) {
    Value a[3];
    bind(rt, args, &SIG_GROUPBY, a);
    bool case_sensitive = a[2].type != VT_MISSING && v_truthy(a[2]);
    Getter key = make_getter(rt, a[0], !case_sensitive, a[1]);
    List *items = v_iterate(rt, self);
    Keyed *k = keyed_items(rt, items, &key);
    sort_keyed(rt, k, items->len, false);
    Getter real = make_getter(rt, a[0], false, a[1]);
    List *out = new_list(rt, 4);
    for (size_t i = 0; i < items->len;) {
        size_t j = i + 1;
        while (j < items->len && v_equal(k[j].key, k[i].key)) j++;
        /* a group is a new list and tuple: charged with its items, sized to them */
        rt_step(rt, 8 + (j - i));
        List *group = new_list(rt, j - i);
        for (size_t m = i; m < j; m++) list_push(rt, group, k[m].val);
        Value grouper = case_sensitive ? k[i].key : get_attr(rt, &real, group->items[0]);
        Value t = tuple2(rt, grouper, v_list_of(group));
        t.flags = VF_GROUP_TUPLE;
        list_push(rt, out, t);
        i = j;
    }
    rt_free(rt, k, (items->len + 1) * sizeof(Keyed));
    return v_list_of(out);
}

static const Sig SIG_INT = {"do_int", 0, 0, 2, {"default", "base"}};

static Value f_int(Rt *rt, Value self, const Args *args) {
    Value a[2];
    bind(rt, args, &SIG_INT, a);
    Value dflt = or_default(a[0], v_int(0)), base = or_default(a[1], v_int(10));
    Value out;
    if (self.type == VT_STR) {
        if ((base.type == VT_INT || base.type == VT_BOOL) &&
            py_parse_int(rt, self.u.s->data, self.u.s->len, (int)small_int(base), &out))
            return out;
    } else {
        switch (self.type) {
        case VT_INT: case VT_BIGINT: return self;
        case VT_BOOL: return v_int(self.u.b);
        case VT_FLOAT:
            if (!isnan(self.u.f)) return py_int_from_float(rt, self.u.f);  /* inf: OverflowError escapes */
            break;
        case VT_UNDEFINED: v_undefined_fail(rt, self);
        default: break;
        }
    }
    /* the quirk that makes "42.23"|int give 42 */
    double d;
    if (try_float(rt, self, &d) && isfinite(d)) return py_int_from_float(rt, d);
    return dflt;
}

static const Sig SIG_ITEMS = {"do_items", 0, 0, 0, {0}};

static Value f_items(Rt *rt, Value self, const Args *args) {
    bind(rt, args, &SIG_ITEMS, NULL);
    List *out = new_list(rt, 4);
    if (self.type == VT_UNDEFINED) return generator_of(out);
    if (self.type != VT_DICT) rt_throw(rt, CF_ERR_TYPE, "Can only get item pairs from a mapping.");
    const Dict *d = self.u.dict;
    for (size_t i = 0; i < dict_len(d); i++) list_push(rt, out, tuple2(rt, dict_key_at(d, i), dict_val_at(d, i)));
    return generator_of(out);
}

static const Sig SIG_JOIN = {"sync_do_join", 1, 0, 2, {"d", "attribute"}};

/* Autoescape is off: str(d).join(map(str, value)), a plain str always. */
static Value f_join(Rt *rt, Value self, const Args *args) {
    Value a[2];
    bind(rt, args, &SIG_JOIN, a);
    Value d = a[0].type == VT_MISSING ? empty_str(rt) : plain_str(rt, a[0]);
    List *items = v_iterate(rt, self);
    const Value *vals = items->items;
    if (a[1].type != VT_MISSING && !is_none(a[1])) {   /* join(attribute=...): each item's attribute, once */
        Getter g = make_getter(rt, a[1], false, v_missing());
        Value *got = rt_alloc(rt, (items->len ? items->len : 1) * sizeof(Value));
        for (size_t i = 0; i < items->len; i++) got[i] = get_attr(rt, &g, items->items[i]);
        vals = got;
    }
    StrBuf sb;
    sb_init(rt, &sb, 64);
    rt_step(rt, items->len / 64 + 1);
    /* Under autoescape, Jinja2 joins as Markup when the separator or an item
     * is Markup: the separator and every other item are escaped then. */
    bool as_markup = false;
    if (interp_autoescape(rt)) {
        as_markup = is_markup(a[0]);
        for (size_t i = 0; i < items->len && !as_markup; i++) as_markup = is_markup(vals[i]);
        if (as_markup && !is_markup(a[0])) d = markup_escape(rt, d);
    }
    const char *sep = d.u.s->data;
    size_t sep_len = d.u.s->len;
    for (size_t i = 0; i < items->len; i++) {
        if (i) sb_put(&sb, sep, sep_len);
        Value item = vals[i];
        if (item.type == VT_INT) sb_put_int(&sb, item.u.i);   /* plain text either way */
        else if (item.type == VT_STR && !as_markup) sb_put(&sb, item.u.s->data, item.u.s->len);
        else {
            if (as_markup && !is_markup(item)) item = markup_escape(rt, item);
            v_write_str(rt, &sb, item);
        }
    }
    rt_step(rt, sb.len / 8);   /* the text written, besides the operand's items */
    Value r = sb_to_value(&sb);
    return as_markup ? v_markup(r) : r;
}

static const Sig SIG_LAST = {"do_last", 1, 0, 0, {0}};

static Value f_last(Rt *rt, Value self, const Args *args) {
    bind(rt, args, &SIG_LAST, NULL);
    switch (self.type) {
    case VT_STR: {
        size_t n = str_nchars(self.u.s);
        if (!n) break;
        return str_slice_chars(rt, plain_str(rt, self), n - 1, n);
    }
    case VT_LIST:
        if (self.flags & VF_GENERATOR) rt_throw(rt, CF_ERR_TYPE, "'%s' object is not reversible", v_type_name(self));
        /* fall through */
    case VT_TUPLE:
        if (!self.u.list->len) break;
        return self.u.list->items[self.u.list->len - 1];
    case VT_DICT:
        if (!dict_len(self.u.dict)) break;
        return dict_key_at(self.u.dict, dict_len(self.u.dict) - 1);
    case VT_UNDEFINED: break;
    default: rt_throw(rt, CF_ERR_TYPE, "'%s' object is not reversible", v_type_name(self));
    }
    return v_undef_msg(rt, "No last item, sequence was empty.");
}

static const Sig SIG_LIST = {"sync_do_list", 0, 0, 0, {0}};

/* A new list (`is sameas` tells it from the operand) that shares the
 * operand's items: nothing changes a list's items once it is made (the
 * sandbox refuses append and the like, filters build new lists), and its
 * capacity is its length, so a push would move it first. A loop of
 * `x|unique|list` then makes one list a turn, not two. */
static Value f_list(Rt *rt, Value self, const Args *args) {
    bind(rt, args, &SIG_LIST, NULL);
    List *items = v_iterate(rt, self);
    List *out = rt_alloc(rt, sizeof *out);
    out->len = out->cap = items->len;
    out->items = items->items;
    out->json = NULL;
    out->tail_owner = NULL;
    return v_list_of(out);
}

static const Sig SIG_LOWER = {"do_lower", 0, 0, 0, {0}};

static Value f_lower(Rt *rt, Value self, const Args *args) {
    bind(rt, args, &SIG_LOWER, NULL);
    return str_lower(rt, soft_str(rt, self));
}

static const Sig SIG_UPPER = {"do_upper", 0, 0, 0, {0}};

static Value f_upper(Rt *rt, Value self, const Args *args) {
    bind(rt, args, &SIG_UPPER, NULL);
    Value s = soft_str(rt, self);
    if (ascii_without(s, 'a', 'z')) return s;
    return str_method_call(rt, SM_UPPER, s, 0, NULL);
}

/* environment.call_filter / call_test: look the name up at call time. */
static void no_such(Rt *rt, const char *what, Value name) {
    StrBuf m;
    sb_init(rt, &m, 64);
    sb_printf(&m, "No %s named ", what);
    v_write_repr(rt, &m, name);
    sb_putc(&m, '.');
    if (name.type == VT_UNDEFINED) {
        sb_puts(&m, " (");
        Str *hint = undef_hint(rt, name);
        sb_puts(&m, hint ? hint->data : "None is undefined");
        sb_puts(&m, "; did you forget to quote the callable name?)");
    }
    rt_throw(rt, CF_ERR_TEMPLATE_RUNTIME, "%s", sb_to_str(&m)->data);
}

static void need_hashable(Rt *rt, Value v) {
    if (!v_hashable(v)) rt_throw(rt, CF_ERR_TYPE, "unhashable type: '%s'", v_unhashable_type(v));
}

static FilterFn filter_by_value(Rt *rt, Value name) {
    need_hashable(rt, name);
    FilterFn f = name.type == VT_STR ? filter_lookup(name.u.s->data, name.u.s->len) : NULL;
    if (!f) no_such(rt, "filter", name);
    return f;
}

static TestFn test_by_value(Rt *rt, Value name) {
    need_hashable(rt, name);
    TestFn t = name.type == VT_STR ? test_lookup(name.u.s->data, name.u.s->len) : NULL;
    if (!t) no_such(rt, "test", name);
    return t;
}

/* Args minus the first `skip` positionals. */
static Args args_rest(const Args *args, int skip) {
    Args r = *args;
    if (skip) {              /* pos is NULL when there are no positionals: NULL + 0 is UB */
        r.npos -= skip;
        r.pos += skip;
    }
    return r;
}

static Value f_map(Rt *rt, Value self, const Args *args) {
    List *out = new_list(rt, 4);
    if (!v_truthy(self)) return generator_of(out);
    int attribute_kw = -1;
    for (int k = 0; k < args->nkw; k++)
        if (str_eqz(args->kwnames[k], "attribute")) attribute_kw = k;
    List *items;
    if (args->npos == 0 && attribute_kw >= 0) {
        Value dflt = v_missing();
        for (int k = 0; k < args->nkw; k++) {
            if (k == attribute_kw) continue;
            if (str_eqz(args->kwnames[k], "default")) {
                dflt = args->kwvals[k];
                continue;
            }
            rt_throw(rt, CF_ERR_FILTER_ARGUMENT, "Unexpected keyword argument '%s'", args->kwnames[k]->data);
        }
        Getter g = make_getter(rt, args->kwvals[attribute_kw], false, dflt);
        items = v_iterate(rt, self);
        for (size_t i = 0; i < items->len; i++) list_push(rt, out, get_attr(rt, &g, items->items[i]));
        return generator_of(out);
    }
    if (args->npos == 0) rt_throw(rt, CF_ERR_FILTER_ARGUMENT, "map requires a filter argument");
    items = v_iterate(rt, self);
    Args rest = args_rest(args, 1);
    FilterFn f = filter_by_value(rt, args->pos[0]);    /* value is truthy: Jinja2 looks it up too */
    out = new_list(rt, items->len);
    for (size_t i = 0; i < items->len; i++) {
        rt_step(rt, 1);
        charge_operand(rt, items->items[i]);
        list_push(rt, out, f(rt, items->items[i], &rest));
    }
    return generator_of(out);
}

/* select / reject / selectattr / rejectattr */
static Value select_or_reject(Rt *rt, Value self, const Args *args, bool keep_when, bool lookup_attr) {
    List *out = new_list(rt, 4);
    if (!v_truthy(self)) return generator_of(out);
    int off = 0;
    Getter g;
    if (lookup_attr) {
        if (args->npos < 1) rt_throw(rt, CF_ERR_FILTER_ARGUMENT, "Missing parameter for attribute name");
        g = make_getter(rt, args->pos[0], false, v_missing());
        off = 1;
    }
    bool has_test = args->npos > off;
    Args rest = args_rest(args, has_test ? off + 1 : off);
    TestFn test = has_test ? test_by_value(rt, args->pos[off]) : NULL;   /* once, as Jinja2 */
    List *items = v_iterate(rt, self);
    for (size_t i = 0; i < items->len; i++) {
        Value item = items->items[i];
        Value x = lookup_attr ? get_attr(rt, &g, item) : item;
        rt_step(rt, 1);
        bool r = test ? test(rt, x, &rest) : v_truthy(x);
        if (r == keep_when) list_push(rt, out, item);
    }
    return generator_of(out);
}

static Value f_select(Rt *rt, Value self, const Args *args) { return select_or_reject(rt, self, args, true, false); }
static Value f_reject(Rt *rt, Value self, const Args *args) { return select_or_reject(rt, self, args, false, false); }
static Value f_selectattr(Rt *rt, Value self, const Args *args) { return select_or_reject(rt, self, args, true, true); }
static Value f_rejectattr(Rt *rt, Value self, const Args *args) { return select_or_reject(rt, self, args, false, true); }

static const Sig SIG_MIN = {"do_min", 1, 0, 2, {"case_sensitive", "attribute"}};
static const Sig SIG_MAX = {"do_max", 1, 0, 2, {"case_sensitive", "attribute"}};

/* min()/max() with a key: the first extreme item wins ties. */
static Value min_or_max(Rt *rt, Value self, const Args *args, bool want_max) {
    Value a[2];
    bind(rt, args, want_max ? &SIG_MAX : &SIG_MIN, a);
    bool case_sensitive = a[0].type != VT_MISSING && v_truthy(a[0]);
    List *items = v_iterate(rt, self);
    if (!items->len) return v_undef_msg(rt, "No aggregated item, sequence was empty.");
    Getter g = make_getter(rt, a[1], !case_sensitive, v_missing());
    Value best = items->items[0], best_key = get_attr(rt, &g, best);
    size_t i = 1;
    if (a[1].type == VT_MISSING && best.type == VT_INT) {   /* no key: a run of ints compares as ints */
        for (; i < items->len && items->items[i].type == VT_INT; i++)
            if (want_max ? items->items[i].u.i > best.u.i : items->items[i].u.i < best.u.i) best = items->items[i];
        best_key = best;
    }
    for (; i < items->len; i++) {
        Value key = get_attr(rt, &g, items->items[i]);
        int c = v_compare(rt, key, best_key, want_max ? ">" : "<");
        if (want_max ? c > 0 : c < 0) {
            best = items->items[i];
            best_key = key;
        }
    }
    return best;
}

static Value f_min(Rt *rt, Value self, const Args *args) { return min_or_max(rt, self, args, false); }
static Value f_max(Rt *rt, Value self, const Args *args) { return min_or_max(rt, self, args, true); }

static const Sig SIG_RANDOM = {"do_random", 1, 0, 0, {0}};

/* Nondeterministic by nature; mixes the clock with addresses so concurrent
 * renders need no shared state. */
static Value f_random(Rt *rt, Value self, const Args *args) {
    bind(rt, args, &SIG_RANDOM, NULL);
    int64_t n = self.type == VT_UNDEFINED ? 0 : v_len(rt, self);
    if (n == 0) return v_undef_msg(rt, "No random item, sequence was empty.");
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    uint64_t x = rt->steps * 0x9E3779B97F4A7C15ull;   /* a fuzzing build replays alike (make fuzz-ci) */
#else
    uint64_t x = (uint64_t)time(NULL) ^ (uint64_t)clock() ^ (uint64_t)(uintptr_t)&n ^ rt->steps * 0x9E3779B97F4A7C15ull;
#endif
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    Value idx = v_int((int64_t)(x % (uint64_t)n));
    if (self.type == VT_DICT) {
        Value out;
        if (!dict_get(self.u.dict, idx, &out)) key_error(rt, idx);
        return out;
    }
    return v_getitem(rt, self, idx);
}

static const Sig SIG_REPLACE = {"do_replace", 1, 2, 3, {"old", "new", "count"}};

/* Autoescape off: str(s).replace(str(old), str(new), count). On: the
 * Markup-aware replace (the result is Markup when s is, or is escaped
 * because old or new is Markup). */
static Value f_replace(Rt *rt, Value self, const Args *args) {
    Value a[3];
    bind(rt, args, &SIG_REPLACE, a);
    Value count = is_none(a[2]) ? v_int(-1) : a[2];
    if (!interp_autoescape(rt)) {
        Value argv[3] = {plain_str(rt, a[0]), plain_str(rt, a[1]), count};
        return str_method_call(rt, SM_REPLACE, plain_str(rt, self), 3, argv);
    }
    Value s = is_markup(a[0]) || (is_markup(a[1]) && !is_markup(self)) ? markup_escape(rt, self) : soft_str(rt, self);
    Value argv[3] = {soft_str(rt, a[0]), soft_str(rt, a[1]), count};
    return str_method_call(rt, SM_REPLACE, s, 3, argv);
}

static const Sig SIG_REVERSE = {"do_reverse", 0, 0, 0, {0}};

static Value f_reverse(Rt *rt, Value self, const Args *args) {
    bind(rt, args, &SIG_REVERSE, NULL);
    if (self.type == VT_STR) {  /* value[::-1], by code points */
        const Str *s = self.u.s;
        StrBuf sb;
        sb_init(rt, &sb, s->len + 1);
        rt_step(rt, s->len / 1024 + 1);
        for (size_t end = s->len; end > 0;) {
            size_t start = utf8_prev(s->data, end);
            sb_put(&sb, s->data + start, end - start);
            end = start;
        }
        Value r = sb_to_value(&sb);
        r.flags = self.flags & VF_MARKUP;
        return r;
    }
    bool reversible = self.type == VT_TUPLE || self.type == VT_DICT || self.type == VT_UNDEFINED ||
                      (self.type == VT_LIST && !(self.flags & VF_GENERATOR));
    bool iterable = reversible || self.type == VT_LIST;
    if (!iterable) rt_throw(rt, CF_ERR_FILTER_ARGUMENT, "argument must be iterable");
    List *items = v_iterate(rt, self);
    List *out = new_list(rt, items->len);
    for (size_t i = items->len; i-- > 0;) list_push(rt, out, items->items[i]);
    /* reversed() gives an iterator; list(value).reverse() a real list */
    if (!reversible) return v_list_of(out);
    Value it = generator_of(out);
    it.iter = ITER_REVERSED;   /* a tuple, Undefined */
    if (self.type == VT_DICT) it.iter = ITER_DICT_REVERSE_KEYS;
    else if (self.type == VT_LIST)
        it.iter = self.flags & VF_VIEW_ITEMS    ? ITER_DICT_REVERSE_ITEMS
                  : self.flags & VF_VIEW_KEYS   ? ITER_DICT_REVERSE_KEYS
                  : self.flags & VF_VIEW_VALUES ? ITER_DICT_REVERSE_VALUES
                  : self.flags & VF_RANGE       ? ITER_RANGE
                                                : ITER_LIST_REVERSE;
    return it;
}

/* ---- round ---- */

/* round(int, ndigits < 0): half to even at 10**-ndigits, exactly. */
static Value round_int(Rt *rt, Value v, int64_t ndigits) {
    if (v.type == VT_BOOL) v = v_int(v.u.b);
    if (ndigits >= 0) return v;
    Str *ds = int_digits(rt, v);
    const char *d = ds->data;
    size_t n = ds->len;
    bool neg = d[0] == '-';
    if (neg) d++, n--;
    uint64_t k = (uint64_t)-ndigits;
    if (k > n + 1) return v_int(0);
    /* high = d[0 .. n-k), low = the last k digits (zero-padded on the left) */
    size_t hn = k >= n ? 0 : n - (size_t)k;
    int cmp = 0;  /* low vs 5000...0 */
    for (size_t i = 0; i < k && !cmp; i++) {
        int digit = (i + n >= k) ? d[i + n - k] - '0' : 0;
        int half = i == 0 ? 5 : 0;
        if (digit != half) cmp = digit < half ? -1 : 1;
    }
    bool odd = hn && ((d[hn - 1] - '0') & 1);
    bool up = cmp > 0 || (cmp == 0 && odd);
    StrBuf sb;
    sb_init(rt, &sb, n + 4);
    if (neg) sb_putc(&sb, '-');
    sb_put(&sb, d, hn);
    if (!hn) sb_putc(&sb, '0');
    Value high = v_bigint(rt, sb.p, sb.len);
    if (up) high = int_add(rt, high, v_int(neg ? -1 : 1));
    if (v_equal(high, v_int(0))) return v_int(0);
    StrBuf out;
    sb_init(rt, &out, n + 4);
    v_write_str(rt, &out, high);
    for (uint64_t i = 0; i < k; i++) sb_putc(&out, '0');
    return v_bigint(rt, out.p, out.len);
}

/* round(float, ndigits): correctly rounded, half to even on the exact
 * binary value, like CPython's dtoa-based double_round. */
static double round_float(Rt *rt, double x, int64_t nd) {
    if (nd > 323) return x;
    if (nd < -308) return 0.0 * x;
    if (x == 0 || !isfinite(x)) return x;
    char buf[720];
    double r;
    if (nd >= 0) {
        snprintf(buf, sizeof buf, "%.*f", (int)nd, x);
        r = strtod(buf, NULL);
    } else {
        snprintf(buf, sizeof buf, "%.25e", x);
        int exp10 = atoi(strchr(buf, 'e') + 1);
        int64_t sig = exp10 + 1 + nd;          /* significant digits kept */
        if (sig > 0) {
            snprintf(buf, sizeof buf, "%.*e", (int)(sig - 1), x);
            r = strtod(buf, NULL);
        } else if (sig == 0) {
            /* |x| rounds to 0 or to 10**-nd: compare with half of that */
            const char *m = buf + (buf[0] == '-');
            int c = m[0] - '5';
            for (const char *p = m + 2; !c && *p != 'e'; p++) c = *p != '0';
            char unit[32];
            snprintf(unit, sizeof unit, "1e%lld", (long long)-nd);
            r = c > 0 ? strtod(unit, NULL) : 0.0;
            r = copysign(r, x);
        } else {
            r = copysign(0.0, x);
        }
    }
    if (isinf(r)) rt_throw(rt, CF_ERR_OVERFLOW, "rounded value too large to represent");
    return r;
}

static Value py_round(Rt *rt, Value v, Value ndigits) {
    if (is_none(ndigits)) {
        if (is_int(v)) return v.type == VT_BOOL ? v_int(v.u.b) : v;
        if (v.type == VT_FLOAT) return py_int_from_float(rt, nearbyint(v.u.f));
    } else {
        if (ndigits.type == VT_UNDEFINED)   /* (round() takes operator.index of it: no __index__) */
            rt_throw(rt, CF_ERR_TYPE, "'Undefined' object cannot be interpreted as an integer");
        int64_t nd = as_index(rt, ndigits);
        if (is_int(v)) return round_int(rt, v, nd);
        if (v.type == VT_FLOAT) return v_float(round_float(rt, v.u.f, nd));
    }
    rt_throw(rt, CF_ERR_TYPE, "type %s doesn't define __round__ method", v_type_name(v));
}

static const Sig SIG_ROUND = {"do_round", 0, 0, 2, {"precision", "method"}};

static Value f_round(Rt *rt, Value self, const Args *args) {
    Value a[2];
    bind(rt, args, &SIG_ROUND, a);
    Value precision = or_default(a[0], v_int(0));
    Value method = a[1].type == VT_MISSING ? v_strz(rt, "common") : a[1];
    need_hashable(rt, method);
    bool ceil_ = v_equal(method, v_strz(rt, "ceil")), floor_ = v_equal(method, v_strz(rt, "floor"));
    if (!ceil_ && !floor_ && !v_equal(method, v_strz(rt, "common")))
        rt_throw(rt, CF_ERR_FILTER_ARGUMENT, "method must be common, ceil or floor");
    if (!ceil_ && !floor_) return py_round(rt, self, precision);
    /* func(value * (10 ** precision)) / (10 ** precision) */
    if (self.type == VT_UNDEFINED) v_undefined_fail(rt, self);
    if (precision.type == VT_UNDEFINED) v_undefined_fail(rt, precision);
    if (!is_number(precision))
        rt_throw(rt, CF_ERR_TYPE, "unsupported operand type(s) for ** or pow(): 'int' and '%s'", v_type_name(precision));
    double p = py_float(rt, precision);
    bool int_power = is_int(precision) && p >= 0;
    if (!is_number(self)) {
        if (int_power && (self.type == VT_STR || self.type == VT_LIST || self.type == VT_TUPLE))
            rt_throw(rt, CF_ERR_TYPE, "must be real number, not %s", v_type_name(self));
        rt_throw(rt, CF_ERR_TYPE, "unsupported operand type(s) for *: '%s' and '%s'", v_type_name(self),
                 int_power ? "int" : "float");
    }
    double scale;
    if (int_power) {
        char unit[32];
        snprintf(unit, sizeof unit, "1e%.0f", p);
        scale = strtod(unit, NULL);
        if (is_int(self)) return v_float(py_float(rt, self));  /* exact: int * 10**p / 10**p */
    } else {
        scale = pow(10.0, p);
    }
    double x = py_float(rt, self) * scale;
    if (isinf(x)) rt_throw(rt, CF_ERR_OVERFLOW, "cannot convert float infinity to integer");
    if (isnan(x)) rt_throw(rt, CF_ERR_VALUE, "cannot convert float NaN to integer");
    double r = ((ceil_ ? ceil(x) : floor(x)) + 0.0) / scale;   /* math.ceil gives an int: no -0.0 */
    if (isinf(r)) rt_throw(rt, CF_ERR_OVERFLOW, "integer division result too large for a float");
    return v_float(r);
}

static const Sig SIG_SAFE = {"do_mark_safe", 0, 0, 0, {0}};

static Value f_safe(Rt *rt, Value self, const Args *args) {
    bind(rt, args, &SIG_SAFE, NULL);
    return v_markup(soft_str(rt, self));
}

static const Sig SIG_SLICE = {"sync_do_slice", 0, 1, 2, {"slices", "fill_with"}};

static Value f_slice(Rt *rt, Value self, const Args *args) {
    Value a[2];
    bind(rt, args, &SIG_SLICE, a);
    Value fill = or_default(a[1], v_none());
    List *seq = v_iterate(rt, self);
    int64_t length = (int64_t)seq->len, slices = as_index(rt, a[0]);
    if (slices == 0) rt_throw(rt, CF_ERR_ZERO_DIVISION, "integer division or modulo by zero");
    int64_t per = length / slices, extra = length % slices;
    if (extra && ((extra < 0) != (slices < 0))) {  /* Python floors */
        per--;
        extra += slices;
    }
    List *out = new_list(rt, slices > 0 ? (size_t)(slices < 1024 ? slices : 1024) : 1);
    int64_t offset = 0;
    for (int64_t k = 0; k < slices; k++) {
        rt_step(rt, 1);
        int64_t start = offset + k * per;
        if (k < extra) offset++;
        int64_t end = offset + (k + 1) * per;
        if (start < 0) start = 0;
        if (end > length) end = length;
        List *tmp = new_list(rt, end > start ? (size_t)(end - start) + 1 : 1);
        for (int64_t i = start; i < end; i++) list_push(rt, tmp, seq->items[i]);
        if (!is_none(fill) && k >= extra) list_push(rt, tmp, fill);
        list_push(rt, out, v_list_of(tmp));
    }
    return generator_of(out);
}

static const Sig SIG_SORT = {"do_sort", 1, 0, 3, {"reverse", "case_sensitive", "attribute"}};

static Value f_sort(Rt *rt, Value self, const Args *args) {
    Value a[3];
    bind(rt, args, &SIG_SORT, a);
    bool reverse = a[0].type != VT_MISSING && v_truthy(a[0]);
    bool case_sensitive = a[1].type != VT_MISSING && v_truthy(a[1]);
    Getter g = make_multi_getter(rt, or_default(a[2], v_none()), !case_sensitive);
    return v_list_of(sorted_list(rt, v_iterate(rt, self), &g, reverse));
}

static const Sig SIG_STRING = {"soft_str", 0, 0, 0, {0}};

static Value f_string(Rt *rt, Value self, const Args *args) {
    bind(rt, args, &SIG_STRING, NULL);
    if (self.type == VT_INT) {   /* map('string') over ints: the digits, one exact allocation */
        char digits[24], *p = digits + sizeof digits;
        uint64_t u = self.u.i < 0 ? 0 - (uint64_t)self.u.i : (uint64_t)self.u.i;
        do *--p = (char)('0' + u % 10);
        while (u /= 10);
        if (self.u.i < 0) *--p = '-';
        return v_str(rt, p, (size_t)(digits + sizeof digits - p));
    }
    Value r = soft_str(rt, self);
    if (self.type == VT_LIST || self.type == VT_TUPLE || self.type == VT_DICT)
        rt_step(rt, r.u.s->len / 8);   /* the repr written, besides the operand's items */
    return r;
}

static const Sig SIG_SUM = {"sync_do_sum", 1, 0, 2, {"attribute", "start"}};

static Value f_sum(Rt *rt, Value self, const Args *args) {
    Value a[2];
    bind(rt, args, &SIG_SUM, a);
    Value acc = or_default(a[1], v_int(0));
    if (acc.type == VT_STR) rt_throw(rt, CF_ERR_TYPE, "sum() can't sum strings [use ''.join(seq) instead]");
    List *items = v_iterate(rt, self);
    bool by_attr = a[0].type != VT_MISSING && !is_none(a[0]);
    Getter g;
    if (by_attr) g = make_getter(rt, a[0], false, v_missing());
    List *own = NULL;   /* the list being summed into, made here: nothing else sees it */
    for (size_t i = 0; i < items->len; i++) {
        rt_step(rt, 1);
        Value item = by_attr ? get_attr(rt, &g, items->items[i]) : items->items[i];
        if (acc.type == VT_LIST && item.type == VT_LIST && !(acc.flags | item.flags)) {
            /* list + list makes a new list a turn (Python copies the sum
             * so far each time): its copy is charged, a step an item, but
             * only the last one can be seen, so the items are added to one */
            rt_step(rt, acc.u.list->len);
            if (!own) {
                own = list_new(rt, acc.u.list->len + item.u.list->len);
                for (size_t k = 0; k < acc.u.list->len; k++) list_push(rt, own, acc.u.list->items[k]);
                acc.u.list = own;
            }
            for (size_t k = 0; k < item.u.list->len; k++) list_push(rt, own, item.u.list->items[k]);
            continue;
        }
        acc = py_add(rt, acc, item);
        own = NULL;
    }
    return acc;
}

static const Sig SIG_TOJSON = {"_tojson", 0, 0, 4, {"ensure_ascii", "indent", "separators", "sort_keys"}};

/* transformers' tojson: json.dumps(x, ensure_ascii=False, indent=None,
 * separators=None, sort_keys=False), a plain str. */
void filter_tojson_into(Rt *rt, StrBuf *sb, Value self, const Args *args) {
    if (!args->npos && !args->nkw) {   /* x|tojson: json.dumps' defaults but ensure_ascii (as below) */
        JsonDumpOpts o;
        json_opts_default(&o);
        o.ensure_ascii = false;
        json_dump(rt, sb, self, &o);
        return;
    }
    if (!args->npos && args->nkw == 1 && args->kwnames[0]->len == 12 &&
        memcmp(args->kwnames[0]->data, "ensure_ascii", 12) == 0) {
        /* x|tojson(ensure_ascii=False), a tool's JSON in GLM and others: what
         * the binding below gives (the one keyword in its place, the rest
         * their defaults), without matching the keyword by name each call */
        JsonDumpOpts o;
        json_opts_default(&o);
        o.ensure_ascii = v_truthy(args->kwvals[0]);
        json_dump(rt, sb, self, &o);
        return;
    }
    Value a[4];
    bind(rt, args, &SIG_TOJSON, a);
    JsonDumpOpts o;
    json_opts_default(&o);
    o.ensure_ascii = a[0].type != VT_MISSING && v_truthy(a[0]);
    o.sort_keys = a[3].type != VT_MISSING && v_truthy(a[3]);
    Value indent = a[1];
    if (indent.type == VT_STR) {
        o.indent = 0;
        o.indent_str = indent.u.s->data;
    } else if (is_int(indent)) {
        if (indent.type == VT_BIGINT) rt_throw(rt, CF_ERR_OVERFLOW, "cannot fit 'int' into an index-sized integer");
        int64_t w = small_int(indent);
        o.indent = w >= 0 ? (int)(w < 1 << 20 ? w : 1 << 20) : 0;
        if (w < 0) o.indent_str = "";
        if (w > (int64_t)rt->lim.max_string)
            rt_throw(rt, CF_ERR_LIMIT, "string length limit of %zu bytes exceeded (raise it with --max-string / cf_limits.max_string)", rt->lim.max_string);
    } else if (!is_none(indent)) {
        rt_throw(rt, CF_ERR_TYPE, "can't multiply sequence by non-int of type '%s'", v_type_name(indent));
    }
    Value seps = a[2];
    if (!is_none(seps)) {
        if (seps.type != VT_LIST && seps.type != VT_TUPLE && seps.type != VT_STR)
            rt_throw(rt, CF_ERR_TYPE, "cannot unpack non-iterable %s object", v_type_name(seps));
        List *l = v_iterate(rt, seps);
        if (l->len > 2) rt_throw(rt, CF_ERR_VALUE, "too many values to unpack (expected 2)");
        if (l->len < 2) rt_throw(rt, CF_ERR_VALUE, "not enough values to unpack (expected 2, got %zu)", l->len);
        for (int k = 0; k < 2; k++)
            if (l->items[k].type != VT_STR)
                rt_throw(rt, CF_ERR_TYPE, "make_encoder() argument %d must be str, not %s", k == 0 ? 6 : 5,
                         v_type_name(l->items[k]));
        o.item_sep = l->items[0].u.s->data;
        o.key_sep = l->items[1].u.s->data;
    }
    json_dump(rt, sb, self, &o);
}

static Value f_tojson(Rt *rt, Value self, const Args *args) {
    StrBuf sb;
    /* room for a tool's JSON: the writer quotes a string in place only when
     * the buffer has room for its worst case (the buffer is the arena's
     * last block, so the unused end is given back when it is finished) */
    sb_init(rt, &sb, 1024);
    filter_tojson_into(rt, &sb, self, args);
    return sb_to_value(&sb);
}

static const Sig SIG_TRIM = {"do_trim", 0, 0, 1, {"chars"}};

static Value f_trim(Rt *rt, Value self, const Args *args) {
    Value a[1];
    bind(rt, args, &SIG_TRIM, a);
    Value chars = or_default(a[0], v_none());
    return str_method_call(rt, SM_STRIP, soft_str(rt, self), 1, &chars);
}

static const Sig SIG_UNIQUE = {"sync_do_unique", 1, 0, 2, {"case_sensitive", "attribute"}};

static Value f_unique(Rt *rt, Value self, const Args *args) {
    Value a[2];
    bind(rt, args, &SIG_UNIQUE, a);
    bool case_sensitive = a[0].type != VT_MISSING && v_truthy(a[0]);
    Getter g = make_getter(rt, or_default(a[1], v_none()), !case_sensitive, v_missing());
    List *items = v_iterate(rt, self), *out = new_list(rt, 4);
    /* a hash table insert a turn, two reads at random places of a table
     * larger than the caches (~100 ns): ~7 steps an item (the operand's one
     * charged); the table sized for every item, so it is never rebuilt */
    rt_step(rt, 6 * (uint64_t)items->len);
    Dict *seen = dict_new(rt, items->len);
    for (size_t i = 0; i < items->len; i++) {
        Value key = get_attr(rt, &g, items->items[i]);
        need_hashable(rt, key);
        if (dict_add(rt, seen, key, v_none())) list_push(rt, out, items->items[i]);
    }
    dict_free(rt, seen);
    return generator_of(out);
}

/* ------------------------------------------------------------------ */
/* Registry                                                              */
/* ------------------------------------------------------------------ */

typedef struct FilterEntry { const char *name; FilterFn fn; } FilterEntry;

static const FilterEntry FILTERS[] = {
    {"abs", f_abs}, {"attr", f_attr}, {"batch", f_batch}, {"capitalize", f_capitalize},
    {"center", filter_center}, {"count", f_length}, {"d", f_default}, {"default", f_default},
    {"dictsort", f_dictsort}, {"e", f_escape}, {"escape", f_escape},
    {"filesizeformat", filter_filesizeformat}, {"first", f_first}, {"float", f_float},
    {"forceescape", f_forceescape}, {"format", f_format}, {"groupby", f_groupby},
    {"indent", filter_indent}, {"int", f_int}, {"join", f_join}, {"last", f_last},
    {"length", f_length}, {"list", f_list}, {"lower", f_lower}, {"items", f_items},
    {"map", f_map}, {"min", f_min}, {"max", f_max}, {"pprint", filter_pprint},
    {"random", f_random}, {"reject", f_reject}, {"rejectattr", f_rejectattr},
    {"replace", f_replace}, {"reverse", f_reverse}, {"round", f_round}, {"safe", f_safe},
    {"select", f_select}, {"selectattr", f_selectattr}, {"slice", f_slice}, {"sort", f_sort},
    {"string", f_string}, {"striptags", filter_striptags}, {"sum", f_sum}, {"title", filter_title},
    {"trim", f_trim}, {"truncate", filter_truncate}, {"unique", f_unique}, {"upper", f_upper},
    {"urlencode", filter_urlencode}, {"urlize", filter_urlize}, {"wordcount", filter_wordcount},
    {"wordwrap", filter_wordwrap}, {"xmlattr", filter_xmlattr}, {"tojson", f_tojson},
};

bool filter_is_pure(FilterFn fn) {
    static const FilterFn pure[] = {f_lower, f_upper, f_trim, f_capitalize, filter_title, filter_wordcount,
                                    filter_striptags};
    for (size_t i = 0; i < sizeof pure / sizeof pure[0]; i++)
        if (fn == pure[i]) return true;
    return false;
}

bool filter_is_length(FilterFn fn) { return fn == f_length; }

bool filter_is_tojson(FilterFn fn) { return fn == f_tojson; }

FilterFn filter_lookup(const char *name, size_t n) {
    for (size_t i = 0; i < sizeof FILTERS / sizeof FILTERS[0]; i++)
        if (strlen(FILTERS[i].name) == n && memcmp(FILTERS[i].name, name, n) == 0) return FILTERS[i].fn;
    return NULL;
}
