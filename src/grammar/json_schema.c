/* json_schema.c — JSON Schema to grammar rules. See json_schema.h for what is covered.
 *
 * Shape of the JSON the rules accept: a value never includes whitespace
 * around it; containers put `ws` after each opening bracket, key, colon,
 * member and comma, so any RFC 8259 spacing up to GRAM_WS_MAX characters
 * per gap is accepted. */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include "engine/json.h"
#include "json_schema.h"

struct SchemaCx {
    Gram *g;
    Value root;
    uint32_t depth;
    Value ref_keys;          /* dict: JSON pointer -> rule id (VT_INT) */
    bool closed;             /* objects without additionalProperties take no other keys */
};

bool schema_get(Value obj, const char *key, Value *out) {
    return obj.type == VT_DICT && dict_get_str(obj.u.dict, key, strlen(key), out);
}

static bool get_type(Value obj, const char *key, int type, Value *out) {
    return schema_get(obj, key, out) && out->type == type;
}

void schema_cx_close_objects(SchemaCx *c) { c->closed = true; }

SchemaCx *schema_cx_new(Gram *g, Value root) {
    SchemaCx *c = rt_alloc0(g->rt, sizeof *c);
    c->g = g;
    c->root = root;
    c->ref_keys = v_dict_of(dict_new(g->rt, 8));
    return c;
}

/* ---- shared rules ---- */

static GExpr *make_ws(Gram *g) { return gx_greedy(g, gx_chars(g, false, " \t\n\r"), 0, GRAM_WS_MAX); }
uint32_t gram_ws(Gram *g) { return gram_shared(g, "ws", make_ws); }
/* (one node for every use: trees only read their parts, so they may share them) */
GExpr *gram_ws_ref(Gram *g) {
    if (!g->ws_ref) g->ws_ref = gx_ref(g, gram_ws(g));
    return g->ws_ref;
}
static GExpr *ws(Gram *g) { return gram_ws_ref(g); }

static GExpr *make_char(Gram *g) {
    /* any character but '"', '\\' and controls, or an escape */
    GExpr *plain = gx_class(g, true, (const GRange[]){{'"', '"'}, {'\\', '\\'}, {0, 0x1F}}, 3);
    GExpr *esc = gx_seq(g, gx_litz(g, "\\"),
                        gx_alt(g, gx_chars(g, false, "\"\\/bfnrt"),
                               gx_seq(g, gx_litz(g, "u"), gx_rep(g, gx_chars(g, false, "0-9a-fA-F"), 4, 4))));
    return gx_alt(g, plain, esc);
}
static uint32_t char_rule(Gram *g) { return gram_shared(g, "char", make_char); }

static GExpr *make_string(Gram *g) {
    return gx_seq(g, gx_litz(g, "\""), gx_rep(g, gx_ref(g, char_rule(g)), 0, GREP_INF), gx_litz(g, "\""));
}
static uint32_t string_rule(Gram *g) { return gram_shared(g, "string", make_string); }
uint32_t gram_string(Gram *g) { return string_rule(g); }

/* Integers up to 19 digits, fractions up to 20, exponents up to 4: what
 * json.dumps writes for any double or int64, and no endless number. */
static GExpr *int_part(Gram *g) {
    return gx_alt(g, gx_litz(g, "0"), gx_seq(g, gx_chars(g, false, "1-9"), gx_greedy(g, gx_chars(g, false, "0-9"), 0, 18)));
}
static GExpr *make_integer(Gram *g) { return gx_seq(g, gx_opt(g, gx_litz(g, "-")), int_part(g)); }
static uint32_t integer_rule(Gram *g) { return gram_shared(g, "integer", make_integer); }

static GExpr *make_number(Gram *g) {
    GExpr *frac = gx_seq(g, gx_litz(g, "."), gx_greedy(g, gx_chars(g, false, "0-9"), 1, 20));
    GExpr *exp = gx_seq(g, gx_chars(g, false, "eE"), gx_opt(g, gx_chars(g, false, "-+")),
                        gx_greedy(g, gx_chars(g, false, "0-9"), 1, 4));
    return gx_seq(g, gx_opt(g, gx_litz(g, "-")), int_part(g), gx_opt(g, frac), gx_opt(g, exp));
}
static uint32_t number_rule(Gram *g) { return gram_shared(g, "number", make_number); }

static GExpr *make_boolean(Gram *g) { return gx_alt(g, gx_litz(g, "true"), gx_litz(g, "false")); }
static uint32_t boolean_rule(Gram *g) { return gram_shared(g, "boolean", make_boolean); }

static GExpr *make_null(Gram *g) { return gx_litz(g, "null"); }
static uint32_t null_rule(Gram *g) { return gram_shared(g, "null", make_null); }

/* "[" ws (item ws ("," ws item ws)*)? "]" */
static GExpr *list_of(Gram *g, GExpr *item, uint32_t min, uint32_t max) {
    if (max == 0) return gx_seq(g, gx_litz(g, "["), ws(g), gx_litz(g, "]"));
    GExpr *more = gx_seq(g, gx_litz(g, ","), ws(g), item, ws(g));
    uint32_t rmin = min ? min - 1 : 0, rmax = max == GREP_INF ? GREP_INF : max - 1;
    GExpr *body = gx_seq(g, item, ws(g), rmax ? gx_rep(g, more, rmin, rmax) : NULL);
    return gx_seq(g, gx_litz(g, "["), ws(g), min ? body : gx_opt(g, body), gx_litz(g, "]"));
}

static GExpr *make_any_array(Gram *g) { return list_of(g, gx_ref(g, gram_any_value(g)), 0, GREP_INF); }
static GExpr *make_any_object(Gram *g) {
    GExpr *member = gx_seq(g, gx_ref(g, string_rule(g)), ws(g), gx_litz(g, ":"), ws(g), gx_ref(g, gram_any_value(g)), ws(g));
    GExpr *more = gx_seq(g, gx_litz(g, ","), ws(g), member);
    return gx_seq(g, gx_litz(g, "{"), ws(g), gx_opt(g, gx_seq(g, member, gx_rep(g, more, 0, GREP_INF))), gx_litz(g, "}"));
}
static uint32_t any_array_rule(Gram *g) { return gram_shared(g, "array", make_any_array); }
static uint32_t any_object_rule(Gram *g) { return gram_shared(g, "object", make_any_object); }

static GExpr *make_any_value(Gram *g) {
    /* the rule exists (named) before its parts refer back to it */
    return gx_alt(g, gx_ref(g, any_object_rule(g)), gx_ref(g, any_array_rule(g)), gx_ref(g, string_rule(g)),
                  gx_ref(g, number_rule(g)), gx_ref(g, boolean_rule(g)), gx_ref(g, null_rule(g)));
}
uint32_t gram_any_value(Gram *g) {
    uint32_t id = gram_rule_find(g, "value");
    if (id != UINT32_MAX) return id;
    id = gram_rule_new(g, "value", 5);
    gram_rule_set(g, id, make_any_value(g));
    return id;
}

/* ---- literals ---- */

/* As json.dumps(ensure_ascii=False) writes it: what templates print and
 * models write ("ü", not "\u00fc"). */
static GExpr *json_text_lit(Gram *g, Value v) {
    StrBuf sb;
    sb_init(g->rt, &sb, 32);
    if (v.type == VT_STR) {
        json_write_string(&sb, v.u.s->data, v.u.s->len, false);
        return gx_lit(g, sb.p, sb.len);
    }
    JsonDumpOpts o;
    json_opts_default(&o);
    json_dump(g->rt, &sb, v, &o);
    return gx_lit(g, sb.p, sb.len);
}

GExpr *gram_json_literal(Gram *g, Value v) {
    rt_step(g->rt, 1);
    if (v.type == VT_LIST || v.type == VT_TUPLE) {
        const List *l = v.u.list;
        GList parts = {0};
        gl_push(g, &parts, gx_litz(g, "["));
        gl_push(g, &parts, ws(g));
        for (size_t i = 0; i < l->len; i++) {
            if (i) {
                gl_push(g, &parts, gx_litz(g, ","));
                gl_push(g, &parts, ws(g));
            }
            gl_push(g, &parts, gram_json_literal(g, l->items[i]));
            gl_push(g, &parts, ws(g));
        }
        gl_push(g, &parts, gx_litz(g, "]"));
        return gl_seq(g, &parts);
    }
    if (v.type == VT_DICT) {
        GList parts = {0};
        gl_push(g, &parts, gx_litz(g, "{"));
        gl_push(g, &parts, ws(g));
        for (size_t i = 0; i < dict_len(v.u.dict); i++) {
            if (i) {
                gl_push(g, &parts, gx_litz(g, ","));
                gl_push(g, &parts, ws(g));
            }
            gl_push(g, &parts, json_text_lit(g, dict_key_at(v.u.dict, i)));
            gl_push(g, &parts, ws(g));
            gl_push(g, &parts, gx_litz(g, ":"));
            gl_push(g, &parts, ws(g));
            gl_push(g, &parts, gram_json_literal(g, dict_val_at(v.u.dict, i)));
            gl_push(g, &parts, ws(g));
        }
        gl_push(g, &parts, gx_litz(g, "}"));
        return gl_seq(g, &parts);
    }
    return json_text_lit(g, v);
}

/* ---- integer ranges ---- */

/* Decimal strings of the same length n from lo to hi (digit strings). */
static GExpr *digits_range(Gram *g, const char *lo, const char *hi, size_t n) {
    if (n == 0) return NULL;
    if (memcmp(lo, hi, n) == 0) return gx_lit(g, lo, n);
    size_t common = 0;
    while (lo[common] == hi[common]) common++;
    GExpr *prefix = common ? gx_lit(g, lo, common) : NULL;
    lo += common;
    hi += common;
    n -= common;
    bool lo_zeros = true, hi_nines = true;
    for (size_t i = 1; i < n; i++) {
        lo_zeros &= lo[i] == '0';
        hi_nines &= hi[i] == '9';
    }
    GRange r;
    GList alts = {0};
    if (lo_zeros && hi_nines) {
        r.lo = (unsigned char)lo[0];
        r.hi = (unsigned char)hi[0];
        return gx_seq(g, prefix, gx_class(g, false, &r, 1), n > 1 ? gx_rep(g, gx_chars(g, false, "0-9"), (uint32_t)n - 1, (uint32_t)n - 1) : NULL);
    }
    char nines[24], zeros[24];
    memset(nines, '9', sizeof nines);
    memset(zeros, '0', sizeof zeros);
    unsigned char first_full = (unsigned char)(lo[0] + 1), last_full = (unsigned char)(hi[0] - 1);
    if (lo_zeros) first_full = (unsigned char)lo[0];
    else gl_push(g, &alts, gx_seq(g, gx_lit(g, lo, 1), digits_range(g, lo + 1, nines, n - 1)));
    if (hi_nines) last_full = (unsigned char)hi[0];
    if (first_full <= last_full) {
        r.lo = first_full;
        r.hi = last_full;
        gl_push(g, &alts, gx_seq(g, gx_class(g, false, &r, 1),
                                 n > 1 ? gx_rep(g, gx_chars(g, false, "0-9"), (uint32_t)n - 1, (uint32_t)n - 1) : NULL));
    }
    if (!hi_nines) gl_push(g, &alts, gx_seq(g, gx_lit(g, hi, 1), digits_range(g, zeros, hi + 1, n - 1)));
    return gx_seq(g, prefix, gl_alt(g, &alts));
}

/* Non-negative integers lo..hi written without leading zeros; hi < 0: no bound. */
static GExpr *uint_range(Gram *g, uint64_t lo, int64_t hi_or_none) {
    char los[24], his[24];
    int nl = snprintf(los, sizeof los, "%llu", (unsigned long long)lo);
    GList alts = {0};
    if (hi_or_none < 0) {
        /* every number longer than lo, and the lo..99..9 of lo's length */
        char nines[24];
        memset(nines, '9', (size_t)nl);
        gl_push(g, &alts, digits_range(g, los, nines, (size_t)nl));
        if (nl < 19)
            gl_push(g, &alts, gx_seq(g, gx_chars(g, false, "1-9"), gx_rep(g, gx_chars(g, false, "0-9"), (uint32_t)nl, 18)));
        return gl_alt(g, &alts);
    }
    int nh = snprintf(his, sizeof his, "%lld", (long long)hi_or_none);
    for (int len = nl; len <= nh; len++) {
        char a[24], b[24];
        if (len == nl) memcpy(a, los, (size_t)len);
        else {
            a[0] = '1';
            memset(a + 1, '0', (size_t)len - 1);
        }
        if (len == nh) memcpy(b, his, (size_t)len);
        else memset(b, '9', (size_t)len);
        gl_push(g, &alts, digits_range(g, a, b, (size_t)len));
    }
    return gl_alt(g, &alts);
}

static bool bound_of(Value v, double *out) {
    if (v.type == VT_INT) *out = (double)v.u.i;
    else if (v.type == VT_FLOAT) *out = v.u.f;
    else return false;
    return !isnan(*out);
}

/* integer with minimum/maximum (exclusive ones too, as numbers) */
static GExpr *integer_expr(SchemaCx *c, Value s) {
    Gram *g = c->g;
    double d;
    bool has_lo = false, has_hi = false;
    double lo = 0, hi = 0;
    Value v;
    if (schema_get(s, "minimum", &v) && bound_of(v, &d)) { lo = ceil(d); has_lo = true; }
    if (schema_get(s, "exclusiveMinimum", &v) && bound_of(v, &d)) {
        double e = floor(d) + 1;
        if (!has_lo || e > lo) lo = e;
        has_lo = true;
    }
    if (schema_get(s, "maximum", &v) && bound_of(v, &d)) { hi = floor(d); has_hi = true; }
    if (schema_get(s, "exclusiveMaximum", &v) && bound_of(v, &d)) {
        double e = ceil(d) - 1;
        if (!has_hi || e < hi) hi = e;
        has_hi = true;
    }
    if (!has_lo && !has_hi) return gx_ref(g, integer_rule(g));
    const double LIM = 1e18;
    if ((has_lo && fabs(lo) > LIM) || (has_hi && fabs(hi) > LIM)) {
        gram_warn(g, "integer bounds beyond 1e18 are not enforced");
        return gx_ref(g, integer_rule(g));
    }
    if (has_lo && has_hi && lo > hi) {
        gram_warn(g, "integer range %.0f..%.0f is empty: not enforced", lo, hi);
        return gx_ref(g, integer_rule(g));
    }
    GList alts = {0};
    /* negative part: -(|hi'|..|lo'|) */
    if (!has_lo || lo < 0) {
        uint64_t mag_lo = has_hi && hi < 0 ? (uint64_t)(-hi) : 1;
        int64_t mag_hi = has_lo ? (int64_t)(-lo) : -1;
        gl_push(g, &alts, gx_seq(g, gx_litz(g, "-"), uint_range(g, mag_lo, mag_hi)));
    }
    if (!has_hi || hi >= 0) {
        uint64_t a = has_lo && lo > 0 ? (uint64_t)lo : 0;
        gl_push(g, &alts, uint_range(g, a, has_hi ? (int64_t)hi : -1));
    }
    return gl_alt(g, &alts);
}

/* ---- strings ---- */

static GExpr *digits(Gram *g, uint32_t n) { return gx_rep(g, gx_chars(g, false, "0-9"), n, n); }

static GExpr *date_body(Gram *g) {
    GExpr *month = gx_alt(g, gx_seq(g, gx_litz(g, "0"), gx_chars(g, false, "1-9")), gx_seq(g, gx_litz(g, "1"), gx_chars(g, false, "0-2")));
    GExpr *day = gx_alt(g, gx_seq(g, gx_litz(g, "0"), gx_chars(g, false, "1-9")), gx_seq(g, gx_chars(g, false, "12"), gx_chars(g, false, "0-9")),
                        gx_seq(g, gx_litz(g, "3"), gx_chars(g, false, "01")));
    return gx_seq(g, digits(g, 4), gx_litz(g, "-"), month, gx_litz(g, "-"), day);
}

static GExpr *time_body(Gram *g) {
    GExpr *hour = gx_alt(g, gx_seq(g, gx_chars(g, false, "01"), gx_chars(g, false, "0-9")), gx_seq(g, gx_litz(g, "2"), gx_chars(g, false, "0-3")));
    GExpr *minute = gx_seq(g, gx_chars(g, false, "0-5"), gx_chars(g, false, "0-9"));
    GExpr *second = gx_alt(g, gx_seq(g, gx_chars(g, false, "0-5"), gx_chars(g, false, "0-9")), gx_litz(g, "60"));
    GExpr *frac = gx_seq(g, gx_litz(g, "."), gx_rep(g, gx_chars(g, false, "0-9"), 1, 9));
    GExpr *hour2 = gx_alt(g, gx_seq(g, gx_chars(g, false, "01"), gx_chars(g, false, "0-9")), gx_seq(g, gx_litz(g, "2"), gx_chars(g, false, "0-3")));
    GExpr *minute2 = gx_seq(g, gx_chars(g, false, "0-5"), gx_chars(g, false, "0-9"));
    GExpr *offset = gx_alt(g, gx_chars(g, false, "Zz"), gx_seq(g, gx_chars(g, false, "+-"), hour2, gx_litz(g, ":"), minute2));
    return gx_seq(g, hour, gx_litz(g, ":"), minute, gx_litz(g, ":"), second, gx_opt(g, frac), offset);
}

static GExpr *hex(Gram *g, uint32_t n) { return gx_rep(g, gx_chars(g, false, "0-9a-fA-F"), n, n); }

static GExpr *format_body(Gram *g, const Str *f) {
    if (str_eqz(f, "date")) return date_body(g);
    if (str_eqz(f, "time")) return time_body(g);
    if (str_eqz(f, "date-time")) return gx_seq(g, date_body(g), gx_chars(g, false, "Tt"), time_body(g));
    if (str_eqz(f, "uuid"))
        return gx_seq(g, hex(g, 8), gx_litz(g, "-"), hex(g, 4), gx_litz(g, "-"), hex(g, 4), gx_litz(g, "-"), hex(g, 4),
                      gx_litz(g, "-"), hex(g, 12));
    return NULL;
}

static uint32_t count_of(Gram *g, Value s, const char *key, uint32_t dflt, bool is_max) {
    Value v;
    if (!schema_get(s, key, &v) || v.type != VT_INT || v.u.i < 0) return dflt;
    if (v.u.i > GRAM_MAX_COUNT) {
        gram_warn(g, "%s above %d is not enforced", key, GRAM_MAX_COUNT);
        return is_max ? GREP_INF : GRAM_MAX_COUNT;
    }
    return (uint32_t)v.u.i;
}

static GExpr *string_expr(SchemaCx *c, Value s) {
    Gram *g = c->g;
    Value v;
    GExpr *q = gx_litz(g, "\"");
    if (get_type(s, "format", VT_STR, &v)) {
        GExpr *body = format_body(g, v.u.s);
        if (body) return gx_seq(g, q, body, gx_litz(g, "\""));
        gram_warn(g, "format \"%.64s\" is not enforced", v.u.s->data);
    }
    uint32_t min = count_of(g, s, "minLength", 0, false), max = count_of(g, s, "maxLength", GREP_INF, true);
    if (get_type(s, "pattern", VT_STR, &v)) {
        GExpr *body = regex_to_string_body(g, v.u.s->data, v.u.s->len);
        if (!body) gram_warn(g, "pattern /%.64s/ is outside the supported regex subset: not enforced", v.u.s->data);
        else {
            if (min || max != GREP_INF) gram_warn(g, "minLength/maxLength with a pattern are not enforced");
            return gx_seq(g, q, body, gx_litz(g, "\""));
        }
    }
    if (min == 0 && max == GREP_INF) return gx_ref(g, string_rule(g));
    if (min > max) max = min;
    return gx_seq(g, q, gx_rep(g, gx_ref(g, char_rule(g)), min, max), gx_litz(g, "\""));
}

/* ---- objects ---- */

typedef struct KeyList { const Str **keys; size_t n; } KeyList;

/* A JSON string key that is none of `keys` (as json.dumps writes them,
 * sorted, all sharing their first `depth` bytes): walks the keys' common
 * prefixes; leaving them by any other character, or by an escape, frees
 * the rest of the key. */
static GExpr *key_not_in(Gram *g, const Str **keys, size_t n, size_t depth, uint32_t free_rest) {
    rt_step(g->rt, n);
    GList alts = {0};
    bool is_end = false;
    GRange excl[80];
    size_t ne = 0;
    excl[ne++] = (GRange){'"', '"'};
    excl[ne++] = (GRange){'\\', '\\'};
    excl[ne++] = (GRange){0, 0x1F};
    size_t i = 0;
    while (i < n && keys[i]->len == depth) {   /* sorted: the key ending here comes first */
        is_end = true;
        i++;
    }
    while (i < n) {
        unsigned char ch = (unsigned char)keys[i]->data[depth];
        size_t j = i;
        while (j < n && (unsigned char)keys[j]->data[depth] == ch) j++;
        if (ch < 0x80) {   /* non-ASCII: left to the free branch (relaxed) */
            if (ne < 80) excl[ne++] = (GRange){ch, ch};
            gl_push(g, &alts, gx_seq(g, gx_lit(g, keys[i]->data + depth, 1), key_not_in(g, keys + i, j - i, depth + 1, free_rest)));
        }
        i = j;
    }
    if (!is_end) gl_push(g, &alts, gx_litz(g, "\""));
    gl_push(g, &alts, gx_seq(g, gx_class(g, true, excl, ne), gx_ref(g, free_rest)));
    /* an escape frees the rest too (a key spelled with escapes is not compared) */
    GExpr *esc = gx_alt(g, gx_chars(g, false, "\"\\/bfnrt"),
                        gx_seq(g, gx_litz(g, "u"), gx_rep(g, gx_chars(g, false, "0-9a-fA-F"), 4, 4)));
    gl_push(g, &alts, gx_seq(g, gx_litz(g, "\\"), esc, gx_ref(g, free_rest)));
    return gl_alt(g, &alts);
}

static int key_cmp(const void *a, const void *b) {
    const Str *x = *(const Str *const *)a, *y = *(const Str *const *)b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->data, y->data, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

static GExpr *make_string_rest(Gram *g) {
    return gx_seq(g, gx_rep(g, gx_ref(g, char_rule(g)), 0, GREP_INF), gx_litz(g, "\""));
}

static GExpr *other_key(SchemaCx *c, const Str **keys, size_t n, const char *name) {
    Gram *g = c->g;
    if (n == 0) return gx_ref(g, string_rule(g));
    for (size_t i = 0; i < n; i++)
        if (keys[i]->len > 256) {
            gram_warn(g, "property names longer than 256 bytes do not exclude additional properties");
            return gx_ref(g, string_rule(g));
        }
    uint32_t rest = gram_shared(g, "string-rest", make_string_rest);
    const Str **sorted = rt_alloc(g->rt, n * sizeof *sorted);
    memcpy(sorted, keys, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, key_cmp);
    keys = sorted;
    char nm[96];
    gram_fmt(nm, sizeof nm, "%s-other-key", name);
    uint32_t id = gram_rule_new(g, nm, strlen(nm));
    gram_rule_set(g, id, gx_seq(g, gx_litz(g, "\""), key_not_in(g, keys, n, 0, rest)));
    return gx_ref(g, id);
}

static Value merge_all_of(SchemaCx *c, Value s);

static GExpr *object_expr(SchemaCx *c, Value s, const char *name) {
    Gram *g = c->g;
    Rt *rt = g->rt;
    Value props, req, addl;
    bool has_props = get_type(s, "properties", VT_DICT, &props);
    size_t n = has_props ? dict_len(props.u.dict) : 0;
    bool has_addl = schema_get(s, "additionalProperties", &addl);
    if (schema_get(s, "patternProperties", &req)) gram_warn(g, "patternProperties are not enforced (any other key is allowed)");
    if (schema_get(s, "minProperties", &req) || schema_get(s, "maxProperties", &req))
        gram_warn(g, "minProperties/maxProperties are not enforced");
    if (n == 0 && (!has_addl || (addl.type == VT_BOOL && addl.u.b))) return gx_ref(g, any_object_rule(g));
    if (!has_addl && c->closed) {   /* tool arguments: only the parameters the tool declares */
        has_addl = true;
        addl = v_bool(false);
    }

    /* JSON-encoded keys (as json.dumps writes them) */
    const Str **keys = rt_alloc(rt, (n ? n : 1) * sizeof *keys);
    bool *required = rt_alloc0(rt, n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        Value k = dict_key_at(props.u.dict, i);
        StrBuf sb;
        sb_init(rt, &sb, 16);
        if (k.type == VT_STR) json_write_string(&sb, k.u.s->data, k.u.s->len, false);
        Str *enc = str_new(rt, sb.p + 1, sb.len ? sb.len - 2 : 0);
        keys[i] = enc;
    }
    if (get_type(s, "required", VT_LIST, &req)) {
        for (size_t r = 0; r < req.u.list->len; r++) {
            Value rk = req.u.list->items[r];
            if (rk.type != VT_STR) continue;
            bool found = false;
            for (size_t i = 0; i < n; i++) {
                Value k = dict_key_at(props.u.dict, i);
                if (k.type == VT_STR && str_eq(k.u.s, rk.u.s)) required[i] = found = true;
            }
            if (!found) gram_warn(g, "required \"%.64s\" has no schema in properties: not enforced", rk.u.s->data);
        }
    }
    /* members */
    GExpr **kv = rt_alloc(rt, (n ? n : 1) * sizeof *kv);
    for (size_t i = 0; i < n; i++) {
        char nm[96];
        Value k = dict_key_at(props.u.dict, i);
        gram_fmt(nm, sizeof nm, "%s-%.40s", name, k.type == VT_STR ? k.u.s->data : "key");
        uint32_t vr = schema_rule(c, dict_val_at(props.u.dict, i), nm);
        StrBuf sb;
        sb_init(rt, &sb, keys[i]->len + 2);
        sb_putc(&sb, '"');
        sb_put(&sb, keys[i]->data, keys[i]->len);
        sb_putc(&sb, '"');
        kv[i] = gx_seq(g, gx_lit(g, sb.p, sb.len), ws(g), gx_litz(g, ":"), ws(g), gx_ref(g, vr), ws(g));
    }
    GExpr *add_kv = NULL;
    if (!has_addl || !(addl.type == VT_BOOL && !addl.u.b)) {
        char nm[96];
        gram_fmt(nm, sizeof nm, "%s-additional", name);
        GExpr *val = has_addl && addl.type == VT_DICT ? gx_ref(g, schema_rule(c, addl, nm)) : gx_ref(g, gram_any_value(g));
        add_kv = gx_seq(g, other_key(c, keys, n, name), ws(g), gx_litz(g, ":"), ws(g), val, ws(g));
    }
    /* after[i]: members i.. once one member was written (each with its comma) */
    GExpr *after_next = add_kv ? gx_rep(g, gx_seq(g, gx_litz(g, ","), ws(g), add_kv), 0, GREP_INF) : NULL;
    GExpr **after = rt_alloc0(rt, (n + 1) * sizeof *after);
    after[n] = after_next;
    for (size_t i = n; i-- > 0;) {
        GExpr *item = gx_seq(g, gx_litz(g, ","), ws(g), kv[i]);
        GExpr *body = gx_seq(g, required[i] ? item : gx_opt(g, item), after[i + 1]);
        if (i + 1 < n) {   /* named: first[] refers to it too */
            char nm[96];
            gram_fmt(nm, sizeof nm, "%s-after-%zu", name, i);
            uint32_t id = gram_rule_new(g, nm, strlen(nm));
            gram_rule_set(g, id, body);
            after[i] = gx_ref(g, id);
        } else after[i] = body;
    }
    /* first: the members when none was written yet */
    GExpr *first = add_kv ? gx_seq(g, add_kv, after[n]) : NULL;
    bool any_required = false;
    for (size_t i = n; i-- > 0;) {
        GExpr *here = gx_seq(g, kv[i], after[i + 1]);
        if (required[i]) {
            first = here;
            any_required = true;
        } else first = first ? gx_alt(g, here, first) : here;
    }
    return gx_seq(g, gx_litz(g, "{"), ws(g), first ? (any_required ? first : gx_opt(g, first)) : NULL, gx_litz(g, "}"));
}

/* ---- arrays ---- */

static GExpr *array_expr(SchemaCx *c, Value s, const char *name) {
    Gram *g = c->g;
    Value items, prefix;
    uint32_t min = count_of(g, s, "minItems", 0, false), max = count_of(g, s, "maxItems", GREP_INF, true);
    if (schema_get(s, "uniqueItems", &items) && items.type == VT_BOOL && items.u.b) gram_warn(g, "uniqueItems is not enforced");
    if (schema_get(s, "contains", &items)) gram_warn(g, "contains is not enforced");
    bool has_prefix = get_type(s, "prefixItems", VT_LIST, &prefix);
    bool has_items = schema_get(s, "items", &items);
    if (!has_prefix && has_items && items.type == VT_LIST) {   /* drafts 4-7: items as a tuple */
        prefix = items;
        has_prefix = true;
        has_items = schema_get(s, "additionalItems", &items);
    }
    char nm[96];
    gram_fmt(nm, sizeof nm, "%s-item", name);
    GExpr *item = NULL;   /* NULL: no more items allowed */
    if (!has_items || (items.type == VT_BOOL && items.u.b)) item = gx_ref(g, gram_any_value(g));
    else if (items.type == VT_DICT) item = gx_ref(g, schema_rule(c, items, nm));
    if (!has_prefix || prefix.u.list->len == 0) {
        if (!item) return list_of(g, NULL, 0, 0);
        if (min > max) min = max;
        return list_of(g, item, min, max);
    }
    size_t k = prefix.u.list->len;
    if (k > GRAM_MAX_COUNT) k = GRAM_MAX_COUNT;
    /* tail[j]: what may follow once j elements were written (j >= 1) */
    GExpr *tail = NULL;
    if (item && (max == GREP_INF || max > k)) {
        uint32_t rmin = min > k ? (uint32_t)(min - k) : 0;
        uint32_t rmax = max == GREP_INF ? GREP_INF : (uint32_t)(max - k);
        tail = gx_rep(g, gx_seq(g, gx_litz(g, ","), ws(g), item, ws(g)), rmin, rmax);
    }
    GExpr *first = NULL;
    for (size_t j = k; j-- > 0;) {
        if (max != GREP_INF && j >= max) continue;
        gram_fmt(nm, sizeof nm, "%s-%zu", name, j);
        GExpr *elem = gx_ref(g, schema_rule(c, prefix.u.list->items[j], nm));
        if (j == 0) {
            first = gx_seq(g, elem, ws(g), tail);
            break;
        }
        GExpr *step = gx_seq(g, gx_litz(g, ","), ws(g), elem, ws(g), tail);
        tail = j >= min ? gx_opt(g, step) : step;
    }
    if (!first) return list_of(g, NULL, 0, 0);
    return gx_seq(g, gx_litz(g, "["), ws(g), min ? first : gx_opt(g, first), gx_litz(g, "]"));
}

/* ---- merging (allOf, and anyOf/oneOf branches with their siblings) ---- */

static Value resolve_ref(SchemaCx *c, Value s, int hops);

static bool type_listed(Value t, const char *name) {
    if (t.type == VT_STR) return str_eqz(t.u.s, name);
    if (t.type != VT_LIST) return true;   /* no type: all */
    for (size_t i = 0; i < t.u.list->len; i++)
        if (t.u.list->items[i].type == VT_STR && str_eqz(t.u.list->items[i].u.s, name)) return true;
    return false;
}

static bool type_allows(Value t, const char *name) {
    return type_listed(t, name) || (!strcmp(name, "integer") && type_listed(t, "number"));
}

/* The types both `type` values allow (an integer is a number): a list, maybe empty. */
static Value type_intersection(SchemaCx *c, Value a, Value b) {
    static const char *const TYPES[] = {"string", "integer", "number", "boolean", "null", "object", "array"};
    List *out = list_new(c->g->rt, 7);
    for (size_t i = 0; i < 7; i++)
        if (type_allows(a, TYPES[i]) && type_allows(b, TYPES[i])) list_push(c->g->rt, out, v_strz(c->g->rt, TYPES[i]));
    return v_list_of(out);
}

static Value merge_into(SchemaCx *c, Value base, Value add) {
    Rt *rt = c->g->rt;
    add = resolve_ref(c, add, 0);
    if (add.type != VT_DICT) return base;
    if (base.type != VT_DICT) return add;
    Dict *out = dict_new(rt, dict_len(base.u.dict) + dict_len(add.u.dict));
    for (size_t i = 0; i < dict_len(base.u.dict); i++) dict_set(rt, out, dict_key_at(base.u.dict, i), dict_val_at(base.u.dict, i));
    for (size_t i = 0; i < dict_len(add.u.dict); i++) {
        Value k = dict_key_at(add.u.dict, i), v = dict_val_at(add.u.dict, i), old;
        if (k.type == VT_STR && dict_get(out, k, &old)) {
            if (str_eqz(k.u.s, "properties") && old.type == VT_DICT && v.type == VT_DICT) {
                Dict *m = dict_new(rt, dict_len(old.u.dict) + dict_len(v.u.dict));
                for (size_t j = 0; j < dict_len(old.u.dict); j++) dict_set(rt, m, dict_key_at(old.u.dict, j), dict_val_at(old.u.dict, j));
                for (size_t j = 0; j < dict_len(v.u.dict); j++) {
                    Value pk = dict_key_at(v.u.dict, j), pv = dict_val_at(v.u.dict, j), po;
                    if (dict_get(m, pk, &po)) pv = merge_into(c, po, pv);
                    dict_set(rt, m, pk, pv);
                }
                v = v_dict_of(m);
            } else if (str_eqz(k.u.s, "required") && old.type == VT_LIST && v.type == VT_LIST) {
                List *l = list_new(rt, old.u.list->len + v.u.list->len);
                for (size_t j = 0; j < old.u.list->len; j++) list_push(rt, l, old.u.list->items[j]);
                for (size_t j = 0; j < v.u.list->len; j++) list_push(rt, l, v.u.list->items[j]);
                v = v_list_of(l);
            } else if (str_eqz(k.u.s, "type")) {
                v = type_intersection(c, old, v);
            } else if (str_eqz(k.u.s, "allOf") || str_eqz(k.u.s, "anyOf") || str_eqz(k.u.s, "oneOf")) {
                gram_warn(c->g, "nested %s inside allOf is relaxed", k.u.s->data);
            }
        }
        dict_set(rt, out, k, v);
    }
    return v_dict_of(out);
}

static Value without(SchemaCx *c, Value s, const char *k1, const char *k2) {
    Rt *rt = c->g->rt;
    Dict *out = dict_new(rt, dict_len(s.u.dict));
    for (size_t i = 0; i < dict_len(s.u.dict); i++) {
        Value k = dict_key_at(s.u.dict, i);
        if (k.type == VT_STR && (str_eqz(k.u.s, k1) || (k2 && str_eqz(k.u.s, k2)))) continue;
        dict_set(rt, out, k, dict_val_at(s.u.dict, i));
    }
    return v_dict_of(out);
}

static Value merge_all_of(SchemaCx *c, Value s) {
    Value all;
    if (!get_type(s, "allOf", VT_LIST, &all)) return s;
    Value base = without(c, s, "allOf", NULL);
    for (size_t i = 0; i < all.u.list->len; i++) {
        rt_step(c->g->rt, 1);
        base = merge_into(c, base, all.u.list->items[i]);
    }
    return base;
}

/* ---- $ref ---- */

static bool pointer_target(SchemaCx *c, const Str *ref, Value *out) {
    const char *p = ref->data, *end = p + ref->len;
    if (p == end || *p != '#') return false;
    p++;
    Value cur = c->root;
    while (p < end) {
        if (*p != '/') return false;
        p++;
        char seg[256];
        size_t n = 0;
        while (p < end && *p != '/') {
            char ch = *p++;
            if (ch == '~' && p < end) ch = *p++ == '1' ? '/' : '~';
            if (n >= sizeof seg) return false;
            seg[n++] = ch;
        }
        if (cur.type == VT_DICT) {
            if (!dict_get_str(cur.u.dict, seg, n, &cur)) return false;
        } else if (cur.type == VT_LIST) {
            size_t idx = 0;
            for (size_t i = 0; i < n; i++) idx = idx * 10 + (size_t)(seg[i] - '0');
            if (idx >= cur.u.list->len) return false;
            cur = cur.u.list->items[idx];
        } else return false;
    }
    *out = cur;
    return true;
}

/* A schema that is only a $ref, followed (for merging). */
static Value resolve_ref(SchemaCx *c, Value s, int hops) {
    Value ref, target;
    while (hops++ < 32 && get_type(s, "$ref", VT_STR, &ref) && pointer_target(c, ref.u.s, &target)) s = target;
    return s;
}

/* ---- the dispatcher ---- */

static GExpr *schema_expr(SchemaCx *c, Value s, const char *name);

static GExpr *typed_expr(SchemaCx *c, Value s, const Str *type, const char *name) {
    Gram *g = c->g;
    Value v;
    if (str_eqz(type, "string")) return string_expr(c, s);
    if (str_eqz(type, "integer")) return integer_expr(c, s);
    if (str_eqz(type, "number")) {
        if (schema_get(s, "minimum", &v) || schema_get(s, "maximum", &v) || schema_get(s, "exclusiveMinimum", &v) ||
            schema_get(s, "exclusiveMaximum", &v))
            gram_warn(g, "minimum/maximum of a number (not an integer) are not enforced");
        if (schema_get(s, "multipleOf", &v)) gram_warn(g, "multipleOf is not enforced");
        return gx_ref(g, number_rule(g));
    }
    if (str_eqz(type, "boolean")) return gx_ref(g, boolean_rule(g));
    if (str_eqz(type, "null")) return gx_ref(g, null_rule(g));
    if (str_eqz(type, "object")) return object_expr(c, s, name);
    if (str_eqz(type, "array")) return array_expr(c, s, name);
    gram_warn(g, "unknown type \"%.32s\": any value allowed", type->data);
    return gx_ref(g, gram_any_value(g));
}

static bool has_any(Value s, const char *const *keys) {
    Value v;
    for (; *keys; keys++) if (schema_get(s, *keys, &v)) return true;
    return false;
}

static GExpr *untyped_expr(SchemaCx *c, Value s, const char *name) {
    Gram *g = c->g;
    static const char *const OBJ[] = {"properties", "additionalProperties", "required", NULL};
    static const char *const ARR[] = {"items", "prefixItems", "minItems", "maxItems", NULL};
    static const char *const STR[] = {"pattern", "minLength", "maxLength", "format", NULL};
    static const char *const INT[] = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", NULL};
    /* a keyword of one type constrains that type only: other types stay free */
    GList alts = {0};
    bool obj = has_any(s, OBJ), arr = has_any(s, ARR), str = has_any(s, STR), num = has_any(s, INT);
    if (!obj && !arr && !str && !num) return gx_ref(g, gram_any_value(g));
    gl_push(g, &alts, obj ? object_expr(c, s, name) : gx_ref(g, any_object_rule(g)));
    gl_push(g, &alts, arr ? array_expr(c, s, name) : gx_ref(g, any_array_rule(g)));
    gl_push(g, &alts, str ? string_expr(c, s) : gx_ref(g, string_rule(g)));
    if (num) gram_warn(g, "bounds without a type are not enforced");
    gl_push(g, &alts, gx_ref(g, number_rule(g)));
    gl_push(g, &alts, gx_ref(g, boolean_rule(g)));
    gl_push(g, &alts, gx_ref(g, null_rule(g)));
    return gl_alt(g, &alts);
}

static GExpr *schema_expr(SchemaCx *c, Value s, const char *name) {
    Gram *g = c->g;
    Value v;
    rt_step(g->rt, 1);
    if (s.type == VT_BOOL) {
        if (!s.u.b) gram_warn(g, "a false schema cannot be expressed: any value allowed");
        return gx_ref(g, gram_any_value(g));
    }
    if (s.type != VT_DICT) {
        gram_warn(g, "a schema that is not an object: any value allowed");
        return gx_ref(g, gram_any_value(g));
    }
    if (get_type(s, "$ref", VT_STR, &v)) {
        Value target, memo;
        if (!pointer_target(c, v.u.s, &target)) {
            gram_warn(g, "$ref \"%.64s\" is not a local JSON pointer: any value allowed", v.u.s->data);
            return gx_ref(g, gram_any_value(g));
        }
        if (dict_get(c->ref_keys.u.dict, v_str_of(v.u.s), &memo)) return gx_ref(g, (uint32_t)memo.u.i);
        Value end = resolve_ref(c, target, 0), more;
        if (get_type(end, "$ref", VT_STR, &more)) {   /* refs that only lead to refs: a rule = itself */
            gram_warn(g, "$ref \"%.64s\" leads only to other $refs: any value allowed", v.u.s->data);
            return gx_ref(g, gram_any_value(g));
        }
        const char *slash = strrchr(v.u.s->data, '/');
        char nm[96];
        gram_fmt(nm, sizeof nm, "ref-%.60s", slash ? slash + 1 : "root");
        uint32_t id = gram_rule_new(g, nm, strlen(nm));
        dict_set(g->rt, c->ref_keys.u.dict, v_str_of(v.u.s), v_int(id));
        Value rest = without(c, s, "$ref", NULL);
        GExpr *body = schema_expr(c, dict_len(rest.u.dict) ? merge_into(c, rest, target) : target, nm);
        gram_rule_set(g, id, body);
        return gx_ref(g, id);
    }
    if (schema_get(s, "allOf", &v)) return schema_expr(c, merge_all_of(c, s), name);
    bool nullable = schema_get(s, "nullable", &v) && v.type == VT_BOOL && v.u.b;
    GExpr *e;
    Value branches;
    if (schema_get(s, "not", &v)) gram_warn(g, "not is not enforced");
    if (schema_get(s, "if", &v)) gram_warn(g, "if/then/else are not enforced");
    if (schema_get(s, "const", &v)) e = gram_json_literal(g, v);
    else if (get_type(s, "enum", VT_LIST, &v)) {
        GList alts = {0};
        for (size_t i = 0; i < v.u.list->len; i++) gl_push(g, &alts, gram_json_literal(g, v.u.list->items[i]));
        e = gl_alt(g, &alts);
        if (!e) {
            gram_warn(g, "an empty enum cannot be expressed: any value allowed");
            e = gx_ref(g, gram_any_value(g));
        }
    } else if (get_type(s, "anyOf", VT_LIST, &branches) || get_type(s, "oneOf", VT_LIST, &branches)) {
        Value base = without(c, s, "anyOf", "oneOf");
        bool plain_base = true;
        for (size_t i = 0; i < dict_len(base.u.dict); i++) {
            Value k = dict_key_at(base.u.dict, i);
            if (k.type == VT_STR && !str_eqz(k.u.s, "description") && !str_eqz(k.u.s, "title") && !str_eqz(k.u.s, "nullable") &&
                !str_eqz(k.u.s, "$defs") && !str_eqz(k.u.s, "definitions") && !str_eqz(k.u.s, "default"))
                plain_base = false;
        }
        GList alts = {0};
        for (size_t i = 0; i < branches.u.list->len; i++) {
            char nm[96];
            gram_fmt(nm, sizeof nm, "%s-%zu", name, i);
            Value b = branches.u.list->items[i];
            if (!plain_base) {
                b = merge_into(c, base, b);
                Value t;
                if (get_type(b, "type", VT_LIST, &t) && t.u.list->len == 0) continue;   /* no value fits both */
            }
            gl_push(g, &alts, gx_ref(g, schema_rule(c, b, nm)));
        }
        e = gl_alt(g, &alts);
        if (!e) e = gx_ref(g, gram_any_value(g));
    } else if (get_type(s, "type", VT_STR, &v)) {
        e = typed_expr(c, s, v.u.s, name);
    } else if (get_type(s, "type", VT_LIST, &v)) {
        GList alts = {0};
        for (size_t i = 0; i < v.u.list->len; i++) {
            Value t = v.u.list->items[i];
            if (t.type != VT_STR) continue;
            if (str_eqz(t.u.s, "null")) nullable = true;
            else gl_push(g, &alts, typed_expr(c, s, t.u.s, name));
        }
        e = gl_alt(g, &alts);
        if (!e) {
            e = gx_ref(g, null_rule(g));
            nullable = false;
        }
    } else {
        e = untyped_expr(c, s, name);
    }
    if (nullable) e = gx_alt(g, e, gx_ref(g, null_rule(g)));
    return e;
}

/* A schema that is only a primitive type (and words for people): its shared
 * rule, without a rule of its own (most tool parameters are such). */
static uint32_t primitive_rule(SchemaCx *c, Value s) {
    Gram *g = c->g;
    Value type;
    if (s.type != VT_DICT || !get_type(s, "type", VT_STR, &type)) return UINT32_MAX;
    for (size_t i = 0; i < dict_len(s.u.dict); i++) {
        Value k = dict_key_at(s.u.dict, i);
        if (k.type != VT_STR || !(str_eqz(k.u.s, "type") || str_eqz(k.u.s, "description") || str_eqz(k.u.s, "title") ||
                                  str_eqz(k.u.s, "default") || str_eqz(k.u.s, "examples")))
            return UINT32_MAX;
    }
    const Str *t = type.u.s;
    if (str_eqz(t, "string")) return string_rule(g);
    if (str_eqz(t, "integer")) return integer_rule(g);
    if (str_eqz(t, "number")) return number_rule(g);
    if (str_eqz(t, "boolean")) return boolean_rule(g);
    if (str_eqz(t, "null")) return null_rule(g);
    return UINT32_MAX;
}

/* ---- schemas made once ----
 * A schema near a tool's top (its parameters, each one and their members)
 * met again, in this tool or another (tools share parameter schemas), is
 * the rule made the first time. Two schemas are the same when their values
 * are (as their JSON texts would be: the same keys in the same order, the
 * same scalars), with objects closed alike and, when one holds a $ref
 * (relative to its own document), the same context. Found by a structural
 * hash of the parsed value. Deeper schemas are not memoised: each level
 * would walk its subtree again. */
enum { SCHEMA_MEMO_DEPTH = 3 };

typedef struct SchemaMemo {
    struct SchemaMemo *next;
    Value schema;
    const SchemaCx *cx;      /* the context, for a schema with a $ref; else NULL */
    uint64_t hash;
    bool closed;
    uint32_t rule;
} SchemaMemo;

typedef struct SchemaMemoTable {
    SchemaMemo **buckets;
    uint32_t nbuckets, n;
} SchemaMemoTable;

static uint64_t mix(uint64_t h, uint64_t v) {
    h = (h ^ v) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}

static bool is_ref_word(const Str *s) { return s->len == 4 && memcmp(s->data, "$ref", 4) == 0; }

/* The value's structural hash; *has_ref: a string "$ref" (a key or a
 * value) is in it; false for a value JSON does not make. */
static bool value_hash(Rt *rt, Value v, uint64_t *h, bool *has_ref) {
    rt_step(rt, 1);
    switch (v.type) {
    case VT_NONE: *h = mix(*h, 1); return true;
    case VT_BOOL: *h = mix(*h, v.u.b ? 3 : 2); return true;
    case VT_INT: *h = mix(mix(*h, 4), (uint64_t)v.u.i); return true;
    case VT_FLOAT: {
        uint64_t bits;
        memcpy(&bits, &v.u.f, sizeof bits);
        *h = mix(mix(*h, 5), bits);
        return true;
    }
    case VT_BIGINT:
    case VT_STR:   /* (a string's hash is kept in it: a key's was made when its object was) */
        if (v.type == VT_STR && is_ref_word(v.u.s)) *has_ref = true;
        *h = mix(mix(*h, v.type), str_hash(v.u.s));
        return true;
    case VT_LIST:
    case VT_TUPLE:   /* (both are a JSON array) */
        *h = mix(mix(*h, 6), v.u.list->len);
        for (size_t i = 0; i < v.u.list->len; i++)
            if (!value_hash(rt, v.u.list->items[i], h, has_ref)) return false;
        return true;
    case VT_DICT: {
        size_t n = dict_len(v.u.dict);
        const DictEntry *e = v.u.dict->entries;
        *h = mix(mix(*h, 7), n);
        for (size_t i = 0; i < n; i++)
            if (!value_hash(rt, e[i].key, h, has_ref) || !value_hash(rt, e[i].val, h, has_ref)) return false;
        return true;
    }
    default: return false;
    }
}

/* Do a and b write the same JSON text? */
static bool value_same(Rt *rt, Value a, Value b) {
    rt_step(rt, 1);
    bool a_list = a.type == VT_LIST || a.type == VT_TUPLE, b_list = b.type == VT_LIST || b.type == VT_TUPLE;
    if (a.type != b.type && !(a_list && b_list)) return false;
    switch (a.type) {
    case VT_NONE: return true;
    case VT_BOOL: return a.u.b == b.u.b;
    case VT_INT: return a.u.i == b.u.i;
    case VT_FLOAT: return memcmp(&a.u.f, &b.u.f, sizeof a.u.f) == 0;
    case VT_BIGINT:
    case VT_STR: return a.u.s == b.u.s || (a.u.s->len == b.u.s->len && memcmp(a.u.s->data, b.u.s->data, a.u.s->len) == 0);
    case VT_LIST:
    case VT_TUPLE:
        if (a.u.list == b.u.list) return true;
        if (a.u.list->len != b.u.list->len) return false;
        for (size_t i = 0; i < a.u.list->len; i++)
            if (!value_same(rt, a.u.list->items[i], b.u.list->items[i])) return false;
        return true;
    case VT_DICT: {
        if (a.u.dict == b.u.dict) return true;
        size_t n = dict_len(a.u.dict);
        if (n != dict_len(b.u.dict)) return false;
        const DictEntry *ea = a.u.dict->entries, *eb = b.u.dict->entries;
        for (size_t i = 0; i < n; i++)
            if (!value_same(rt, ea[i].key, eb[i].key) || !value_same(rt, ea[i].val, eb[i].val)) return false;
        return true;
    }
    default: return false;
    }
}

/* A memo entry's identity for schema in c (hash, context): false when the
 * schema is not memoised. */
static bool schema_memo_key(SchemaCx *c, Value schema, uint64_t *hash, const SchemaCx **cx) {
    if (c->depth >= SCHEMA_MEMO_DEPTH || schema.type != VT_DICT) return false;
    uint64_t h = c->closed ? 0xC105EDull : 0x0BE4ull;
    bool has_ref = false;
    if (!value_hash(c->g->rt, schema, &h, &has_ref)) return false;
    *hash = h;
    *cx = has_ref ? c : NULL;
    return true;
}

static SchemaMemoTable *memo_table(Gram *g) {
    if (!g->schema_memo) g->schema_memo = rt_alloc0(g->rt, sizeof(SchemaMemoTable));
    return g->schema_memo;
}

static uint32_t schema_memo_get(SchemaCx *c, Value schema, uint64_t hash, const SchemaCx *cx) {
    SchemaMemoTable *t = memo_table(c->g);
    if (!t->n) return UINT32_MAX;
    for (const SchemaMemo *m = t->buckets[hash & (t->nbuckets - 1)]; m; m = m->next)
        if (m->hash == hash && m->closed == c->closed && m->cx == cx && value_same(c->g->rt, m->schema, schema)) return m->rule;
    return UINT32_MAX;
}

static void schema_memo_put(SchemaCx *c, Value schema, uint64_t hash, const SchemaCx *cx, uint32_t rule) {
    Gram *g = c->g;
    SchemaMemoTable *t = memo_table(g);
    if (t->n >= t->nbuckets) {   /* load <= 1: double the buckets */
        uint32_t nb = t->nbuckets ? t->nbuckets * 2 : 256;
        SchemaMemo **b = rt_alloc0(g->rt, nb * sizeof *b);
        for (uint32_t i = 0; i < t->nbuckets; i++)
            for (SchemaMemo *m = t->buckets[i], *next; m; m = next) {
                next = m->next;
                m->next = b[m->hash & (nb - 1)];
                b[m->hash & (nb - 1)] = m;
            }
        t->buckets = b;
        t->nbuckets = nb;
    }
    SchemaMemo *m = rt_alloc(g->rt, sizeof *m);
    *m = (SchemaMemo){.schema = schema, .cx = cx, .hash = hash, .closed = c->closed, .rule = rule};
    SchemaMemo **slot = &t->buckets[hash & (t->nbuckets - 1)];
    m->next = *slot;
    *slot = m;
    t->n++;
}

uint32_t schema_rule(SchemaCx *c, Value schema, const char *name) {
    Gram *g = c->g;
    uint32_t prim = primitive_rule(c, schema);
    if (prim != UINT32_MAX) return prim;
    if (c->depth >= SCHEMA_MAX_DEPTH)
        rt_throw(g->rt, CF_ERR_LIMIT, "JSON schema nested deeper than %d levels", SCHEMA_MAX_DEPTH);
    /* a schema met before (tools share parameter schemas): its rule, made once */
    uint64_t hash = 0;
    const SchemaCx *memo_cx = NULL;
    bool memo = schema_memo_key(c, schema, &hash, &memo_cx);
    uint32_t made = memo ? schema_memo_get(c, schema, hash, memo_cx) : UINT32_MAX;
    if (made != UINT32_MAX) return made;
    /* a bare $ref is its target's rule */
    Value v;
    if (schema.type == VT_DICT && dict_len(schema.u.dict) == 1 && get_type(schema, "$ref", VT_STR, &v)) {
        c->depth++;
        GExpr *e = schema_expr(c, schema, name);
        c->depth--;
        if (e->kind == GX_REF) return e->u.rule;
    }
    uint32_t id = gram_rule_new(g, name, strlen(name));
    c->depth++;
    GExpr *body = schema_expr(c, schema, g->rules[id].name);
    c->depth--;
    gram_rule_set(g, id, body);
    if (memo) schema_memo_put(c, schema, hash, memo_cx, id);
    return id;
}

/* ---- what typed-XML formats need ---- */

static bool allows_string(SchemaCx *c, Value s, int depth) {
    Value v;
    if (depth > 16) return true;
    s = resolve_ref(c, s, 0);
    if (s.type != VT_DICT) return true;
    if (schema_get(s, "allOf", &v)) s = merge_all_of(c, s);
    if (schema_get(s, "const", &v)) return v.type == VT_STR;
    if (get_type(s, "enum", VT_LIST, &v)) {
        for (size_t i = 0; i < v.u.list->len; i++) if (v.u.list->items[i].type == VT_STR) return true;
        return false;
    }
    Value br;
    if (get_type(s, "anyOf", VT_LIST, &br) || get_type(s, "oneOf", VT_LIST, &br)) {
        for (size_t i = 0; i < br.u.list->len; i++) if (allows_string(c, br.u.list->items[i], depth + 1)) return true;
        return false;
    }
    if (get_type(s, "type", VT_STR, &v)) return str_eqz(v.u.s, "string");
    if (get_type(s, "type", VT_LIST, &v)) {
        for (size_t i = 0; i < v.u.list->len; i++)
            if (v.u.list->items[i].type == VT_STR && str_eqz(v.u.list->items[i].u.s, "string")) return true;
        return false;
    }
    return true;   /* untyped: a string is allowed */
}

bool schema_takes_string(SchemaCx *c, Value schema) { return allows_string(c, schema, 0); }

GExpr *schema_raw_string_choices(SchemaCx *c, Value s) {
    Gram *g = c->g;
    Value v;
    s = resolve_ref(c, s, 0);
    if (s.type != VT_DICT) return NULL;
    if (schema_get(s, "const", &v) && v.type == VT_STR) return gx_lit(g, v.u.s->data, v.u.s->len);
    if (get_type(s, "enum", VT_LIST, &v)) {
        GList alts = {0};
        for (size_t i = 0; i < v.u.list->len; i++) {
            Value it = v.u.list->items[i];
            if (it.type != VT_STR) return NULL;   /* other values are free text too */
            if (it.u.s->len) gl_push(g, &alts, gx_lit(g, it.u.s->data, it.u.s->len));
            else return NULL;
        }
        return gl_alt(g, &alts);
    }
    if (has_any(s, (const char *const[]){"pattern", "format", "minLength", "maxLength", NULL}))
        gram_warn(g, "a raw (typed-XML) string parameter's pattern/format/length is not enforced");
    return NULL;
}
