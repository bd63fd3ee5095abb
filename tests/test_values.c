/* test_values.c — runtime.c and value.c against Python.
 * Table cases: tests/data/value_cases.jsonl (from tests/gen_value_cases.py).
 * Run from the repository root: build/tests/test_values [cases.jsonl] */
#include <math.h>
#include "tagged_value.h"

/* ---- table-driven cases ---- */

typedef struct OpCtx {
    Value a, b;
    const char *op;     /* "str", "repr", ... */
    const char *cmp;    /* comparison operator for "cmp" */
    StrBuf *out;
} OpCtx;

static void write_bool(StrBuf *sb, bool b) { sb_puts(sb, b ? "True" : "False"); }

static void fail_undefined(Rt *rt, void *p) { v_undefined_fail(rt, *(Value *)p); }

static void write_lookup(Rt *rt, StrBuf *sb, Value r) {
    if (r.type == VT_UNDEFINED) {
        sb_puts(sb, "undefined");
        if (tv_guarded(rt, fail_undefined, &r)) sb_puts(sb, "(did not throw)");
        else tv_error_text(sb, rt->err);
    } else if (r.type == VT_CALLABLE) {
        sb_puts(sb, "callable");
    } else {
        sb_puts(sb, "repr:");
        v_write_repr(rt, sb, r);
    }
}

static void run_op(Rt *rt, void *p) {
    OpCtx *c = p;
    StrBuf *sb = c->out;
    const char *op = c->op;
    if (!strcmp(op, "str")) v_write_str(rt, sb, c->a);
    else if (!strcmp(op, "repr")) v_write_repr(rt, sb, c->a);
    else if (!strcmp(op, "truthy")) write_bool(sb, v_truthy(c->a));
    else if (!strcmp(op, "len")) sb_printf(sb, "%lld", (long long)v_len(rt, c->a));
    else if (!strcmp(op, "iter")) v_write_repr(rt, sb, v_list_of(v_iterate(rt, c->a)));
    else if (!strcmp(op, "hashable")) write_bool(sb, v_hashable(c->a));
    else if (!strcmp(op, "eq")) {
        bool eq = v_equal(c->a, c->b);
        write_bool(sb, eq);
        if (v_equal(c->b, c->a) != eq) sb_puts(sb, " (asymmetric)");
        if (eq && v_hashable(c->a) && v_hashable(c->b) && v_hash(c->a) != v_hash(c->b))
            sb_puts(sb, " (hashes differ)");
    } else if (!strcmp(op, "cmp")) {
        int r = v_compare(rt, c->a, c->b, c->cmp);
        const char *o = c->cmp;
        bool res = !strcmp(o, "<") ? r < 0 : !strcmp(o, "<=") ? r <= 0 : !strcmp(o, ">") ? r > 0 : r >= 0;
        write_bool(sb, res);
    } else if (!strcmp(op, "getattr")) {
        write_lookup(rt, sb, v_getattr(rt, c->a, c->b.u.s->data, c->b.u.s->len));
    } else if (!strcmp(op, "getitem")) {
        write_lookup(rt, sb, v_getitem(rt, c->a, c->b));
    } else if (!strcmp(op, "float")) {
        fmt_float_repr(sb, c->a.u.f);
    } else if (!strcmp(op, "bigint")) {
        v_write_str(rt, sb, v_bigint(rt, c->a.u.s->data, c->a.u.s->len));
    }
}

/* Expected outcome in the same textual form run_op produces. */
static void expected_text(StrBuf *sb, Value expect) {
    switch (expect.type) {
    case VT_STR: sb_put(sb, expect.u.s->data, expect.u.s->len); return;
    case VT_BOOL: write_bool(sb, expect.u.b); return;
    case VT_INT: sb_printf(sb, "%lld", (long long)expect.u.i); return;
    case VT_DICT: {
        Value x;
        if (dict_get_str(expect.u.dict, "callable", 8, &x)) sb_puts(sb, "callable");
        else if (dict_get_str(expect.u.dict, "repr", 4, &x)) { sb_puts(sb, "repr:"); sb_puts(sb, x.u.s->data); }
        else if (dict_get_str(expect.u.dict, "undefined", 9, &x)) { sb_puts(sb, "undefined"); tv_expected_error(sb, x); }
        else tv_expected_error(sb, expect);
        return;
    }
    default: sb_puts(sb, "?"); return;
    }
}

static double float_from_hex_bits(const char *hex) {
    uint64_t bits = strtoull(hex, NULL, 16);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

static void run_case(Rt *rt, Value c, const char *line) {
    Value op = tv_field(c, "op");
    OpCtx ctx = {v_missing(), v_missing(), op.u.s->data, NULL, NULL};
    if (str_eqz(op.u.s, "float")) ctx.a = v_float(float_from_hex_bits(tv_field(c, "bits").u.s->data));
    else if (str_eqz(op.u.s, "bigint")) ctx.a = tv_field(c, "digits");
    else if (tv_field(c, "v").type != VT_MISSING) ctx.a = tv_decode(rt, tv_field(c, "v"));
    else ctx.a = tv_decode(rt, tv_field(c, "a"));
    if (tv_field(c, "b").type != VT_MISSING) ctx.b = tv_decode(rt, tv_field(c, "b"));
    if (tv_field(c, "name").type != VT_MISSING) ctx.b = tv_field(c, "name");
    if (tv_field(c, "key").type != VT_MISSING) ctx.b = tv_decode(rt, tv_field(c, "key"));
    Value cmp = tv_field(c, "cmp");
    if (cmp.type == VT_STR) ctx.cmp = cmp.u.s->data;

    StrBuf got, want;
    sb_init(rt, &got, 64);
    sb_init(rt, &want, 64);
    ctx.out = &got;
    if (!tv_guarded(rt, run_op, &ctx)) {
        got.len = 0;
        tv_error_text(&got, rt->err);
    }
    expected_text(&want, tv_field(c, "expect"));
    tv_check_str(line, sb_to_str(&got)->data, sb_to_str(&want)->data);
}

/* ---- direct tests of things the table cannot express ---- */

static Args pos_args(int n, const Value *v) {
    Args a = {n, v, 0, NULL, NULL};
    return a;
}

static void expect_throw(Rt *rt, TvFn fn, void *ctx, const char *what, const char *want) {
    StrBuf sb;
    sb_init(rt, &sb, 64);
    if (tv_guarded(rt, fn, ctx)) sb_puts(&sb, "(no error)");
    else tv_error_text(&sb, rt->err);
    tv_check_str(what, sb_to_str(&sb)->data, want);
}

typedef struct BindCtx { Args args; int nparams; const char *const *names; Value out[4]; } BindCtx;
static void do_bind(Rt *rt, void *p) {
    BindCtx *b = p;
    args_bind(rt, &b->args, "foo", b->nparams, b->names, b->out);
}
static void do_none(Rt *rt, void *p) { args_none(rt, &((BindCtx *)p)->args, "str.upper"); }

static void test_args(Rt *rt) {
    static const char *const names[] = {"a", "b"};
    Value pos[3] = {v_int(1), v_int(2), v_int(3)};
    Str *kw_b = str_new(rt, "b", 1), *kw_a = str_new(rt, "a", 1), *kw_x = str_new(rt, "x", 1);
    BindCtx b = {pos_args(3, pos), 2, names, {{0}}};
    expect_throw(rt, do_bind, &b, "too many", "!TypeError: foo() takes at most 2 arguments (3 given)");
    b.nparams = 1;
    b.args.npos = 2;
    expect_throw(rt, do_bind, &b, "too many 1", "!TypeError: foo() takes at most 1 argument (2 given)");
    b.nparams = 2;
    Str *kwn1[] = {kw_x};
    Value kwv1[] = {v_int(9)};
    b.args = (Args){1, pos, 1, kwn1, kwv1};
    expect_throw(rt, do_bind, &b, "unexpected kw", "!TypeError: foo() got an unexpected keyword argument 'x'");
    Str *kwn2[] = {kw_a};
    b.args = (Args){1, pos, 1, kwn2, kwv1};
    expect_throw(rt, do_bind, &b, "dup kw", "!TypeError: foo() got multiple values for argument 'a'");
    Str *kwn3[] = {kw_b};
    b.args = (Args){1, pos, 1, kwn3, kwv1};
    bool ok = tv_guarded(rt, do_bind, &b);
    tv_check(ok && b.out[0].u.i == 1 && b.out[1].u.i == 9, "bind pos+kw", "", "");
    b.args = (Args){0, pos, 0, NULL, NULL};
    ok = tv_guarded(rt, do_bind, &b);
    tv_check(ok && b.out[0].type == VT_MISSING && b.out[1].type == VT_MISSING, "bind none", "", "");
    b.args = (Args){1, pos, 0, NULL, NULL};
    expect_throw(rt, do_none, &b, "args_none", "!TypeError: str.upper() takes no arguments (1 given)");
    b.args = (Args){0, pos, 1, kwn3, kwv1};
    expect_throw(rt, do_none, &b, "args_none kw", "!TypeError: str.upper() takes no keyword arguments");
}

static void big_alloc(Rt *rt, void *p) { rt_alloc(rt, *(size_t *)p); }
static void push_many(Rt *rt, void *p) {
    List *l = list_new(rt, 0);
    for (int i = 0; i < 1000; i++) list_push(rt, l, v_int(i));
}
static void unhashable_key(Rt *rt, void *p) { dict_set(rt, p, v_list_of(list_new(rt, 0)), v_none()); }
static void long_string(Rt *rt, void *p) {
    StrBuf sb;
    sb_init(rt, &sb, 0);
    for (int i = 0; i < 100; i++) sb_puts(&sb, "0123456789");
}

static void test_runtime(Rt *rt) {
    tv_check_str("kind name", cf_error_kind_name(CF_ERR_UNDEFINED), "UndefinedError");
    tv_check_str("kind name ok", cf_error_kind_name(CF_OK), "OK");
    tv_check_str("kind name usage", cf_error_kind_name(CF_ERR_USAGE), "UsageError");
    cf_limits l;
    cf_limits_default(&l);
    tv_check(l.max_steps == 10000000 && l.max_recursion == 500 && l.max_items == 4000000 &&
                 l.max_string == ((size_t)16 << 20) &&
                 l.max_memory == ((size_t)256 << 20) && l.max_range == 100000 && l.max_json_depth == 512 &&
                 l.max_json_bytes == ((size_t)256 << 20) && l.max_output == ((size_t)64 << 20),
             "limits default", "", "");

    /* arena: alignment, in-place growth, limit */
    Arena a;
    arena_init(&a, 1 << 20);
    char *p1 = arena_try_alloc(&a, 3), *p2 = arena_try_alloc(&a, 17);
    tv_check(((uintptr_t)p1 % 16) == 0 && ((uintptr_t)p2 % 16) == 0 && p2 - p1 == 16, "arena align", "", "");
    tv_check(arena_try_alloc(&a, 2 << 20) == NULL, "arena limit", "", "");
    void *big = arena_try_alloc(&a, 300000);   /* dedicated chunk behind the head */
    char *p3 = arena_try_alloc(&a, 1);
    tv_check(big != NULL && p3 - p2 == 32, "arena big chunk keeps head", "", "");
    arena_release(&a);

    Arena small;
    cf_error err;
    jmp_buf jb;
    Rt r2 = *rt;
    arena_init(&small, 100000);
    r2.arena = &small;
    r2.jb = &jb;
    r2.err = &err;
    size_t n = 200000;
    expect_throw(&r2, big_alloc, &n, "memory limit",
                 "!LimitError: memory limit of 100000 bytes exceeded (raise it with --max-memory / cf_limits.max_memory)");
    arena_release(&small);

    char *s = rt_alloc(rt, 10);
    tv_check(rt_realloc(rt, s, 10, 100) == s, "realloc in place", "", "");

    Rt r3 = *rt;
    r3.lim.max_items = 100;
    expect_throw(&r3, push_many, NULL, "max_items",
                 "!LimitError: container of more than 100 items (raise it with --max-items / cf_limits.max_items)");
    r3 = *rt;
    r3.lim.max_string = 500;
    expect_throw(&r3, long_string, NULL, "max_string",
                 "!LimitError: string length limit of 500 bytes exceeded (raise it with --max-string / cf_limits.max_string)");
    expect_throw(rt, unhashable_key, dict_new(rt, 0), "unhashable", "!TypeError: unhashable type: 'list'");

    /* a big string grows in its own chunk without leaving copies behind */
    size_t before = rt->arena->used_total;
    StrBuf sb;
    sb_init(rt, &sb, 0);
    for (int i = 0; i < (1 << 20); i++) sb_putc(&sb, (char)('a' + i % 26));
    Str *grown = sb_to_str(&sb);
    bool same = grown->len == (1u << 20);
    for (size_t i = 0; same && i < grown->len; i++) same = grown->data[i] == (char)('a' + i % 26);
    tv_check(same && rt->arena->used_total - before < (3u << 20), "big strbuf", "", "");

    /* a block of 256 KiB or more has a mapped chunk: it grows in the page
     * slack in place, beyond it into a new mapping, its bytes kept */
    Arena m;
    arena_init(&m, 0);
    Rt r4 = *rt;
    r4.arena = &m;
    unsigned char *blk = rt_alloc(&r4, 300000);
    for (size_t i = 0; i < 300000; i++) blk[i] = (unsigned char)(i * 7);
    unsigned char *slack = rt_realloc(&r4, blk, 300000, 300100);
    unsigned char *moved = rt_realloc(&r4, slack, 300100, 900000);
    bool kept = slack == blk && moved != NULL;
    for (size_t i = 0; kept && i < 300000; i++) kept = moved[i] == (unsigned char)(i * 7);
    memset(moved + 300000, 1, 600000);
    tv_check(kept, "mapped chunk grows, bytes kept", "", "");
    /* past 4 MiB an arena is heavy: small blocks then come from 4 MiB chunks,
     * and a block of 64 KiB or more has a chunk of its own */
    for (int i = 0; i < 80; i++) rt_alloc(&r4, 60000);
    char *h1 = rt_alloc(&r4, 9000), *h2 = rt_alloc(&r4, 9000), *h3 = rt_alloc(&r4, 600000);
    char *h4 = rt_alloc(&r4, 3000000), *h5 = rt_alloc(&r4, 9000);
    tv_check(m.used_total > ((size_t)4 << 20) && h2 - h1 == 9008 && h5 - h2 == 9008 && h3 && h4,
             "heavy arena chunks", "", "");
    memset(h3, 2, 600000);
    memset(h4, 3, 3000000);
    /* a block given back: its chunk is kept (still charged) and the next
     * block of about its size reuses it; the last block of the head rolls back */
    size_t charged = m.used_total;
    rt_free(&r4, h4, 3000000);
    char *h6 = rt_alloc(&r4, 2900000);
    tv_check(h6 == h4 && m.used_total == charged - 100000, "a spare chunk reused", "", "");
    rt_free(&r4, h5, 9000);
    tv_check(rt_alloc(&r4, 9000) == h5 && m.used_total == charged - 100000, "the head's last block rolled back", "",
             "");
    rt_free(&r4, h1, 9000);   /* (neither: stays until the release) */
    tv_check(m.used_total == charged - 100000, "a block inside the head stays", "", "");
    arena_release(&m);

    /* spare chunks never make an allocation fail: they are dropped first */
    Arena lim;
    arena_init(&lim, (size_t)8 << 20);
    bool fits = arena_try_alloc(&lim, 100) != NULL;
    void *b1 = arena_try_alloc(&lim, (size_t)5 << 20);
    arena_free(&lim, b1, (size_t)5 << 20);
    bool spare = lim.spare != NULL && lim.used_total > ((size_t)5 << 20);
    void *b2 = arena_try_alloc(&lim, (size_t)6 << 20);
    tv_check(fits && b1 && spare && b2 && !lim.spare && lim.used_total < ((size_t)7 << 20),
             "spares dropped under the limit", "", "");
    arena_release(&lim);

    /* a lazy buffer holds one string whole; a second piece copies it in */
    Str *word = str_new(rt, "whole", 5);
    StrBuf lz;
    sb_init_lazy(rt, &lz);
    sb_put_str(&lz, word);
    tv_check(sb_to_str(&lz) == word, "lazy buffer: one string, no copy", "", "");
    sb_init_lazy(rt, &lz);
    sb_put_str(&lz, word);
    sb_put_str(&lz, word);
    sb_put(&lz, "!", 1);
    Str *two = sb_to_str(&lz);
    tv_check(two != word && two->len == 11 && memcmp(two->data, "wholewhole!", 12) == 0, "lazy buffer: pieces",
             two->data, "wholewhole!");
    sb_init_lazy(rt, &lz);
    Str *none = sb_to_str(&lz);
    tv_check(none->len == 0 && none->data[0] == 0, "lazy buffer: nothing written", "", "");
}

static void test_dict(Rt *rt) {
    Dict *d = dict_new(rt, 0);
    for (int i = 0; i < 2000; i++) dict_set(rt, d, v_int(i), v_int(i * 2));
    dict_set(rt, d, v_float(5.0), v_int(-1));     /* same key as 5 */
    dict_set(rt, d, v_bool(true), v_int(-2));     /* same key as 1 */
    dict_set(rt, d, v_strz(rt, "k"), v_int(7));
    bool ok = dict_len(d) == 2001;
    Value v;
    ok = ok && dict_get(d, v_int(5), &v) && v.u.i == -1 && dict_key_at(d, 5).type == VT_INT;
    ok = ok && dict_get(d, v_float(1.0), &v) && v.u.i == -2;
    ok = ok && dict_get(d, v_int(1999), &v) && v.u.i == 3998 && !dict_get(d, v_int(2000), NULL);
    ok = ok && dict_get_str(d, "k", 1, &v) && v.u.i == 7 && !dict_get_str(d, "kk", 2, NULL);
    ok = ok && dict_del(d, v_int(0)) && dict_len(d) == 2000 && !dict_get(d, v_int(0), NULL);
    ok = ok && dict_get(d, v_int(1500), &v) && v.u.i == 3000 && dict_key_at(d, 0).u.i == 1;
    ok = ok && !dict_get(d, v_list_of(list_new(rt, 0)), NULL);
    tv_check(ok, "dict big", "", "");

    Dict *small = dict_new(rt, 0);
    dict_set(rt, small, v_strz(rt, "a"), v_int(1));
    dict_set(rt, small, v_strz(rt, "b"), v_int(2));
    dict_set(rt, small, v_strz(rt, "a"), v_int(3));
    StrBuf sb;
    sb_init(rt, &sb, 0);
    v_write_repr(rt, &sb, v_dict_of(small));
    tv_check_str("dict replace keeps position", sb_to_str(&sb)->data, "{'a': 3, 'b': 2}");

    Str *st = str_new(rt, "h\xc3\xa9llo", 6);
    tv_check(str_nchars(st) == 5 && str_eqz(st, "h\xc3\xa9llo") && str_hash(st) == str_hash(str_new(rt, st->data, 6)),
             "str basics", "", "");
    StrBuf b;
    sb_init(rt, &b, 0);
    sb_put_cp(&b, 0x1F600);
    sb_printf(&b, "%d-%s", 42, "x");
    for (int i = 0; i < 50; i++) sb_printf(&b, "%0300d", i);
    Str *bs = sb_to_str(&b);
    tv_check(bs->len == 4 + 4 + 50 * 300 && memcmp(bs->data, "\xF0\x9F\x98\x80" "42-x", 8) == 0 &&
                 bs->data[bs->len] == '\0', "strbuf", "", "");
    Value t = v_to_str(rt, v_markup(v_strz(rt, "m")));
    tv_check(t.type == VT_STR && t.flags == 0, "v_to_str drops markup", "", "");
    Value u = v_undef_msg(rt, "'%s' is undefined", "x");
    tv_check_str("v_undef_msg", u.u.s->data, "'x' is undefined");
}

/* known_keys.c is generated with its hashes and code point counts: they
 * must be what str_hash and str_nchars compute, and a dict built from
 * pairs (the JSON reader's) or by slot (the builder's) keys with them. */
static void test_known_keys(Rt *rt) {
    size_t n = known_key_count();
    bool ok = n > 10;
    for (size_t i = 0; i < n; i++) {
        Str *k = known_key_at(i);
        Str *copy = str_new(rt, k->data, k->len);
        ok = ok && k->hash == str_hash(copy) && (size_t)k->nchars == str_nchars(copy) &&
             known_key(copy, str_hash(copy)) == k;
        if (!ok) {
            tv_check(false, "known key", k->data, "hash, length or lookup");
            return;
        }
    }
    tv_check(ok, "known keys: hashes and lookups", "", "");
    for (size_t i = 0; i < n; i++) {   /* zero-padded to 16 bytes; the short ones found by their words */
        Str *k = known_key_at(i);
        bool padded = true;
        for (size_t j = k->len; j < 16; j++) padded = padded && k->data[j] == 0;
        tv_check(padded, "known key padded to 16 bytes", k->data, "");
        tv_check((known_long_key(k->data, k->len) == k) == (k->len > 15), "known_long_key", k->data, "");
#if KNOWN_SHORT_KEYS
        uint64_t w[2];
        memcpy(w, k->data, 16);
        tv_check((known_short_key(w[0], w[1]) == k) == (k->len <= 15), "known_short_key", k->data, "");
#endif
    }
#if KNOWN_SHORT_KEYS
    {
        char rolex[16] = "rolex", rol[16] = "rol";
        uint64_t w[2], r[2];
        memcpy(w, rolex, 16);
        memcpy(r, rol, 16);
        tv_check(!known_short_key(w[0], w[1]) && !known_short_key(r[0], r[1]), "known_short_key of others", "", "");
    }
#endif
    tv_check(!known_long_key("reasoning_contenT", 17) && !known_long_key("add_generation_prompt", 20) &&
                 !known_long_key("add_generation_prompts", 22),
             "known_long_key of others", "", "");
    Str *other = str_new(rt, "rolex", 5);
    tv_check(!known_key(other, str_hash(other)), "unknown key", "rolex", "");

    Value kv[4] = {v_strz(rt, "role"), v_strz(rt, "user"), v_strz(rt, "rolex"), v_int(1)};
    Dict *d = dict_from_str_pairs(rt, kv, 2);
    Str *role = str_new(rt, "role", 4);
    Str *known_role = known_key(role, str_hash(role));
    Value got;
    tv_check(known_role && dict_key_at(d, 0).u.s == known_role && dict_key_at(d, 1).u.s == kv[2].u.s &&
                 dict_get_key(d, known_role, &got) && str_eqz(got.u.s, "user") && dict_get_key(d, role, &got),
             "dict_from_str_pairs keys with known Strs", "", "");
    Dict *b = dict_new_str_pairs(rt, 1);
    *dict_str_slot(rt, b, v_strz(rt, "content")) = v_int(2);
    Str *content = str_new(rt, "content", 7);
    tv_check(dict_key_at(b, 0).u.s == known_key(content, str_hash(content)), "dict_str_slot keys with known Strs", "",
             "");
    Dict *e = dict_new(rt, 0);
    dict_set(rt, e, v_strz(rt, "x"), v_int(0));
    dict_set(rt, e, v_strz(rt, "tool_calls"), v_int(3));
    Str *tc = str_new(rt, "tool_calls", 10);
    tv_check(dict_key_at(e, 1).u.s == known_key(tc, str_hash(tc)) && dict_key_at(e, 0).u.s != NULL,
             "dict_set keys with known Strs", "", "");

    /* the JSON reader: short and long known keys, escaped ones, repeated ones
     * and others; a value that spells a key stays a value of its own */
    const char *doc = "[{\"role\": \"role\", \"x\": 1, \"reasoning_content\": 2, \"r\\u006fle\": 3},"
                      " {\"role\": 4, \"add_generation_prompt\": 5, \"x\": 6}]";
    Value parsed = json_parse(rt, doc, strlen(doc));
    Dict *d0 = parsed.u.list->items[0].u.dict, *d1 = parsed.u.list->items[1].u.dict;
    Str *rc = str_new(rt, "reasoning_content", 17), *agp = str_new(rt, "add_generation_prompt", 21);
    tv_check(dict_len(d0) == 3 && dict_key_at(d0, 0).u.s == known_role &&
                 dict_key_at(d0, 2).u.s == known_key(rc, str_hash(rc)) && dict_get_key(d0, known_role, &got) &&
                 got.type == VT_INT && got.u.i == 3 && dict_key_at(d1, 0).u.s == known_role &&
                 dict_key_at(d1, 1).u.s == known_key(agp, str_hash(agp)) && dict_key_at(d1, 2).u.s->hash != 0 &&
                 !known_key(dict_key_at(d1, 2).u.s, str_hash(dict_key_at(d1, 2).u.s)),
             "JSON reader keys with known Strs", doc, "");
}

/* cf_memmem and cf_memrmem against searches position by position: needles of 0..20 bytes
 * over haystacks of 0..80 bytes of a small alphabet (so that first and last
 * bytes match often), each at every offset of a buffer (the 16-byte blocks
 * start anywhere), plus one search past 16-byte blocks to a tail match. */
static const char *naive_memmem(const char *h, size_t hn, const char *nd, size_t nn) {
    for (size_t i = 0; i + nn <= hn; i++)
        if (memcmp(h + i, nd, nn) == 0) return h + i;
    return NULL;
}

static const char *naive_memrmem(const char *h, size_t hn, const char *nd, size_t nn) {
    if (nn > hn) return NULL;
    for (size_t i = hn - nn + 1; i-- > 0;)
        if (memcmp(h + i, nd, nn) == 0) return h + i;
    return NULL;
}

static void test_memmem(Rt *rt) {
    char buf[128], nd[32];
    uint32_t seed = 12345;
    int bad = 0, tried = 0;
    for (int round = 0; round < 20000; round++) {
        seed = seed * 1103515245u + 12345u;
        size_t hn = (seed >> 8) % 81, nn = (seed >> 16) % 21, off = (seed >> 24) % 32;
        for (size_t i = 0; i < hn; i++) {
            seed = seed * 1103515245u + 12345u;
            buf[off + i] = "abc"[(seed >> 16) % 3];
        }
        for (size_t i = 0; i < nn; i++) {
            seed = seed * 1103515245u + 12345u;
            nd[i] = (seed >> 16) % 4 ? buf[off + ((seed >> 20) % (hn ? hn : 1))] : "abc"[(seed >> 24) % 3];
        }
        bad += cf_memmem(buf + off, hn, nd, nn) != naive_memmem(buf + off, hn, nd, nn);
        bad += cf_memrmem(buf + off, hn, nd, nn) != naive_memrmem(buf + off, hn, nd, nn);
        tried++;
    }
    tv_check(bad == 0 && tried == 20000, "cf_memmem, cf_memrmem = naive searches", "", "");
    const char *hay = "contents of the template: message['content'] and more text after it; content";
    tv_check(cf_memmem(hay, strlen(hay), "content'", 8) == strstr(hay, "content'"), "cf_memmem block", "", "");
    tv_check(cf_memmem(hay, strlen(hay), "t; content", 10) == strstr(hay, "t; content"), "cf_memmem tail", "", "");
    tv_check(cf_memmem(hay, strlen(hay), "contentx", 8) == NULL, "cf_memmem absent", "", "");
    tv_check(cf_memrmem(hay, strlen(hay), "content", 7) == hay + strlen(hay) - 7, "cf_memrmem last", "", "");
}

static void direct_tests(Rt *rt) {
    test_memmem(rt);
    test_args(rt);
    test_runtime(rt);
    test_dict(rt);
    test_known_keys(rt);
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "tests/data/value_cases.jsonl";
    int n = tv_run_file(path, run_case);
    tv_run_direct(direct_tests);
    fprintf(stderr, "%d table cases\n", n);
    printf("%d passed, %d failed\n", tv_passed, tv_failed);
    return tv_failed ? 1 : 0;
}
