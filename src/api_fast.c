/* api_fast.c — one-call rendering for language bindings: the variables come
 * in serialized (JSON, or Python's marshal format, which CPython writes
 * several times faster than JSON), the output goes out in the caller's
 * buffer. A binding pays one foreign call per render instead of five.
 *
 * The marshal reader accepts exactly the data whose JSON spelling
 * cf_context_from_json would read into the same values (str keys; str, int,
 * float, bool, None, list, dict values), and tuples, which stay tuples (JSON
 * would make them lists). Anything else — NaN, a
 * non-str key, a lone surrogate, bytes, a set, a cycle, a limit — is not an
 * error here but CF_RENDER_UNSUPPORTED: the caller encodes the data as JSON
 * and calls again, and the JSON path reports what is wrong in its own words.
 * That keeps one behaviour whichever encoding the binding picked. */
#include "chatfmt.h"
#include "engine/ast.h"
#include "engine/context.h"
#include "engine/json.h"
#include "engine/unicode.h"
#include <stdlib.h>
#include <string.h>

/* ======================================================================
 * Python marshal (format version 4), JSON-like subset
 * ====================================================================== */

enum {
    M_NULL = '0', M_NONE = 'N', M_FALSE = 'F', M_TRUE = 'T', M_INT = 'i', M_LONG = 'l',
    M_BINARY_FLOAT = 'g', M_UNICODE = 'u', M_INTERNED = 't', M_ASCII = 'a', M_ASCII_INTERNED = 'A',
    M_SHORT_ASCII = 'z', M_SHORT_ASCII_INTERNED = 'Z', M_TUPLE = '(', M_SMALL_TUPLE = ')',
    M_LIST = '[', M_DICT = '{', M_REF = 'r', M_FLAG_REF = 0x80
};

typedef struct Unmarshal {
    Rt *rt;
    const unsigned char *p, *end;
    unsigned depth;
    Value *refs;            /* objects written with FLAG_REF, in order; VT_MISSING while
                               a container is still being read (a reference to it is a cycle) */
    size_t nrefs, refs_cap;
    Value *stack;           /* dict keys and values until the dict closes */
    size_t top, stack_cap;
    StrCarver carver;
} Unmarshal;

/* Not representable as cf_context_from_json would read it: unwind to the
 * entry point, which answers CF_RENDER_UNSUPPORTED. */
static _Noreturn void unsupported(Unmarshal *m) {
    rt_throw(m->rt, CF_ERR_FORMAT, "marshal data outside the JSON model");
}

static inline const unsigned char *take(Unmarshal *m, size_t n) {
    if ((size_t)(m->end - m->p) < n) unsupported(m);
    const unsigned char *at = m->p;
    m->p += n;
    return at;
}

static inline uint32_t read_u32(Unmarshal *m) {
    const unsigned char *b = take(m, 4);
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* A count of items that each take at least one more byte of input. */
static size_t read_count(Unmarshal *m, bool one_byte) {
    size_t n = one_byte ? *take(m, 1) : read_u32(m);
    if (n > (size_t)(m->end - m->p) || n > 0x7fffffff) unsupported(m);
    return n;
}

static void grow(Unmarshal *m, Value **v, size_t *cap, size_t need) {
    size_t cap2 = *cap ? *cap * 2 : 64;
    while (cap2 < need) cap2 *= 2;
    *v = rt_realloc(m->rt, *v, *cap * sizeof(Value), cap2 * sizeof(Value));
    *cap = cap2;
}

static inline size_t ref_reserve(Unmarshal *m) {
    if (m->nrefs == m->refs_cap) grow(m, &m->refs, &m->refs_cap, m->nrefs + 1);
    m->refs[m->nrefs] = v_missing();
    return m->nrefs++;
}

/* TYPE_LONG: |n| 15-bit digits, least significant first; the sign of n is
 * the number's. Only int64 values: JSON reads anything wider as a bigint. */
static Value read_long(Unmarshal *m) {
    int32_t n = (int32_t)read_u32(m);
    size_t ndigits = n < 0 ? 0 - (size_t)(int64_t)n : (size_t)n;
    if (ndigits == 0 || ndigits > 5) unsupported(m);
    const unsigned char *d = take(m, 2 * ndigits);
    uint64_t mag = 0;
    for (size_t k = ndigits; k-- > 0;) {
        unsigned digit = (unsigned)d[2 * k] | (unsigned)d[2 * k + 1] << 8;
        if (digit > 0x7fff || mag >> (64 - 15)) unsupported(m);
        mag = mag << 15 | digit;
    }
    if (n > 0 && mag <= (uint64_t)INT64_MAX) return v_int((int64_t)mag);
    if (n < 0 && mag <= (uint64_t)INT64_MAX + 1) return v_int(mag ? -(int64_t)(mag - 1) - 1 : 0);
    unsupported(m);
}

static Value read_float(Unmarshal *m) {
    const unsigned char *b = take(m, 8);
    uint64_t bits = 0;
    for (int k = 7; k >= 0; k--) bits = bits << 8 | b[k];
    double f;
    memcpy(&f, &bits, sizeof f);
    if (f - f != 0) unsupported(m);   /* NaN or infinity: not JSON (allow_nan=False) */
    return v_float(f);
}

static Value read_string(Unmarshal *m, size_t len, bool ascii) {
    const unsigned char *s = take(m, len);
    Str *str = json_str_carve(m->rt, &m->carver, (const char *)s, len);
    if (utf8_is_ascii((const char *)s, len)) {
        str->nchars = (int64_t)len;
    } else {
        if (ascii) unsupported(m);   /* an "ascii" string that is not: malformed */
        /* surrogatepass wrote lone surrogates as CESU bytes: not valid UTF-8 */
        if (!utf8_validate(str->data, len, NULL)) unsupported(m);
        str->nchars = (int64_t)utf8_count(str->data, len);
    }
    return v_str_of(str);
}

static Value read_value(Unmarshal *m);

static Value read_sequence(Unmarshal *m, size_t n) {
    List *l = list_new(m->rt, n);
    for (size_t i = 0; i < n; i++) l->items[i] = read_value(m);
    l->len = n;
    return v_list_of(l);
}

static Value read_dict(Unmarshal *m) {
    size_t base = m->top;
    for (;;) {
        if (m->p < m->end && *m->p == M_NULL) {
            m->p++;
            break;
        }
        Value key = read_value(m);
        if (key.type != VT_STR) unsupported(m);   /* JSON would turn 1 into "1" */
        Value val = read_value(m);
        if (m->top + 2 > m->stack_cap) grow(m, &m->stack, &m->stack_cap, m->top + 2);
        m->stack[m->top++] = key;
        m->stack[m->top++] = val;
    }
    size_t npairs = (m->top - base) / 2;
    Dict *d = dict_from_str_pairs(m->rt, npairs ? m->stack + base : NULL, npairs);
    m->top = base;
    return v_dict_of(d);
}

static Value read_value(Unmarshal *m) {
    unsigned char code = *take(m, 1);
    bool flagged = code & M_FLAG_REF;
    code &= (unsigned char)~M_FLAG_REF;
    size_t slot = 0;
    Value v;
    switch (code) {
    case M_NONE: return v_none();
    case M_FALSE: return v_bool(false);
    case M_TRUE: return v_bool(true);
    case M_REF: {
        uint32_t i = read_u32(m);
        if (i >= m->nrefs || m->refs[i].type == VT_MISSING) unsupported(m);
        return m->refs[i];
    }
    case M_INT: v = v_int((int32_t)read_u32(m)); break;
    case M_LONG: v = read_long(m); break;
    case M_BINARY_FLOAT: v = read_float(m); break;
    case M_SHORT_ASCII: case M_SHORT_ASCII_INTERNED: v = read_string(m, *take(m, 1), true); break;
    case M_ASCII: case M_ASCII_INTERNED: v = read_string(m, read_u32(m), true); break;
    case M_UNICODE: case M_INTERNED: v = read_string(m, read_u32(m), false); break;
    case M_SMALL_TUPLE: case M_TUPLE: case M_LIST: case M_DICT:
        /* containers take their reference number before their items */
        if (flagged) slot = ref_reserve(m);
        if (++m->depth > m->rt->lim.max_json_depth) unsupported(m);
        v = code == M_DICT ? read_dict(m) : read_sequence(m, read_count(m, code == M_SMALL_TUPLE));
        if (code == M_TUPLE || code == M_SMALL_TUPLE) v.type = VT_TUPLE;   /* as Jinja2 sees it: (1, 2) */
        m->depth--;
        if (flagged) m->refs[slot] = v;
        return v;
    default: unsupported(m);
    }
    if (flagged) {
        slot = ref_reserve(m);
        m->refs[slot] = v;
    }
    return v;
}

/* Read a whole marshal document; its top level must be a dict. */
static Value unmarshal(Rt *rt, const char *data, size_t len) {
    if (len > rt->lim.max_json_bytes) rt_throw(rt, CF_ERR_FORMAT, "marshal data too large");
    Unmarshal m;
    memset(&m, 0, sizeof m);
    m.rt = rt;
    m.p = (const unsigned char *)data;
    m.end = m.p + len;
    Value v = read_value(&m);
    if (v.type != VT_DICT || m.p != m.end) unsupported(&m);
    return v;
}

/* ======================================================================
 * cf_render_data
 * ====================================================================== */

/* Parse `data` into ctx (arena already initialised). Returns 0, -1 with
 * b->err filled (JSON), or CF_RENDER_UNSUPPORTED (marshal). */
static int parse_variables(cf_context *ctx, int format, const char *data, size_t len, const cf_limits *lim,
                           cf_error *err) {
    jmp_buf jb;
    Rt rt;
    memset(&rt, 0, sizeof rt);
    rt.arena = &ctx->arena;
    rt.jb = &jb;
    rt.err = err;
    rt.lim = *lim;
    if (setjmp(jb)) return format == CF_DATA_MARSHAL ? CF_RENDER_UNSUPPORTED : -1;
    if (format == CF_DATA_MARSHAL) {
        ctx->vars = unmarshal(&rt, data, len).u.dict;
    } else {
        Value v = json_parse(&rt, data, len);
        if (v.type != VT_DICT) rt_throw(&rt, CF_ERR_TYPE, "context must be a JSON object, not %s", v_type_name(v));
        ctx->vars = v.u.dict;
    }
    return 0;
}

CF_API int cf_render_data(cf_render_buffer *b, const cf_template *t, const cf_render_options *opt, int flags,
                          const char *data, size_t len) {
    b->len = 0;
    memset(&b->big, 0, sizeof b->big);
    b->err.kind = CF_OK;
    b->err.line = b->err.column = 0;
    b->err.offset = 0;
    b->err.message[0] = 0;
    int format = flags & CF_DATA_FORMAT_MASK;
    if (!t || (format != CF_DATA_JSON && format != CF_DATA_MARSHAL) || (!data && len)) {
        error_set(&b->err, CF_ERR_USAGE, 0, 0, "cf_render_data: bad arguments");
        return -1;
    }
    cf_limits lim = opt && opt->limits ? *opt->limits : t->lim;
    limits_resolve(&lim);
    cf_context ctx;
    _Alignas(ARENA_ALIGN) unsigned char first_chunk[CONTEXT_FIRST_CHUNK];
    arena_init_borrowed(&ctx.arena, 0, first_chunk, sizeof first_chunk);   /* as context_alloc */
    ctx.vars = NULL;
    int r = parse_variables(&ctx, format, data, len, &lim, &b->err);
    if (r != 0) {
        arena_release(&ctx.arena);
        if (r == CF_RENDER_UNSUPPORTED) memset(&b->err, 0, sizeof b->err);
        return r;
    }
    cf_result res;
    bool ok = (flags & CF_DATA_CHAT) ? cf_render_chat(t, &ctx, opt, &res, &b->err)
                                     : cf_render(t, &ctx, opt, &res, &b->err);
    arena_release(&ctx.arena);
    if (!ok) return -1;
    b->len = res.len;
    free(res.spans);   /* not part of this call's answer (cf_render_chat has them) */
    res.spans = NULL;
    res.nspans = 0;
    if (res.len <= b->cap && res.len <= 0x7fffffff) {
        if (res.len) memcpy(b->text, res.text, res.len);
        cf_result_free(&res);
        return (int)b->len;
    }
    b->big = res;
    return CF_RENDER_BIG;
}

/* ======================================================================
 * cf_json_quote
 * ====================================================================== */

CF_API size_t cf_json_quote(const char *s, size_t n, char *out, size_t cap) {
    if (cap < 2 || (cap - 2) / 6 < n) {   /* under the 6 * n + 2 that always suffice: measure first */
        size_t need = json_quoted_len(s, n);
        if (need > cap) return need;
    }
    return json_quote_to(out, s, n);
}
