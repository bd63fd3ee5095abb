/* test_methods.c — Python method calls (methods.c) against the results
 * Python 3.11 + Jinja2's immutable sandbox give, as recorded by
 * tests/gen_methods_cases.py in tests/methods_cases.h.
 *
 * Values travel in the generator's text encoding: cases are decoded into
 * Values, the method is called, and the result is encoded back and compared
 * as a string. Prints "N passed, N failed"; exits 1 on any failure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/builtins.h"

typedef struct MethodCase {
    const char *recv, *name, *args, *kwargs, *expected;
} MethodCase;

#include "methods_cases.h"

/* ---- decoding ---- */

static size_t read_count(const char **p, char stop) {
    size_t n = 0;
    while (**p != stop) n = n * 10 + (size_t)(*(*p)++ - '0');
    (*p)++;
    return n;
}

static Value decode(Rt *rt, const char **p) {
    char tag = *(*p)++;
    switch (tag) {
    case 'n': return v_none();
    case 'b': return v_bool(*(*p)++ == '1');
    case 'i': {
        const char *end = strchr(*p, ';');
        Value v = v_bigint(rt, *p, (size_t)(end - *p));
        *p = end + 1;
        return v;
    }
    case 'f': {
        const char *end = strchr(*p, ';');
        char buf[64];
        snprintf(buf, sizeof buf, "%.*s", (int)(end - *p), *p);
        *p = end + 1;
        return v_float(strcmp(buf, "inf") == 0 ? HUGE_VAL
                       : strcmp(buf, "-inf") == 0 ? -HUGE_VAL
                       : strcmp(buf, "nan") == 0 ? NAN
                       : strtod(buf, NULL));
    }
    case 's': case 'm': {
        size_t n = read_count(p, ':');
        Value v = v_str(rt, *p, n);
        *p += n;
        return tag == 'm' ? v_markup(v) : v;
    }
    case 'l': case 't': {
        size_t n = read_count(p, ':');
        List *l = list_new(rt, n);
        for (size_t i = 0; i < n; i++) list_push(rt, l, decode(rt, p));
        return tag == 'l' ? v_list_of(l) : v_tuple_of(l);
    }
    case 'd': {
        size_t n = read_count(p, ':');
        Dict *d = dict_new(rt, n);
        for (size_t i = 0; i < n; i++) {
            Value k = decode(rt, p);
            dict_set(rt, d, k, decode(rt, p));
        }
        return v_dict_of(d);
    }
    default:
        fprintf(stderr, "bad encoding tag '%c'\n", tag);
        exit(2);
    }
}

/* ---- encoding ---- */

static void encode(Rt *rt, StrBuf *sb, Value v) {
    switch ((ValueType)v.type) {
    case VT_NONE: sb_putc(sb, 'n'); break;
    case VT_BOOL: sb_puts(sb, v.u.b ? "b1" : "b0"); break;
    case VT_INT: sb_printf(sb, "i%lld;", (long long)v.u.i); break;
    case VT_BIGINT: sb_printf(sb, "i%s;", v.u.s->data); break;
    case VT_FLOAT:
        sb_putc(sb, 'f');
        fmt_float_repr(sb, v.u.f);
        sb_putc(sb, ';');
        break;
    case VT_STR:
        sb_printf(sb, "%c%zu:", (v.flags & VF_MARKUP) ? 'm' : 's', v.u.s->len);
        sb_put(sb, v.u.s->data, v.u.s->len);
        break;
    case VT_LIST: case VT_TUPLE: {
        List *l = v.u.list;
        if (v.flags & VF_VIEW_ITEMS) sb_puts(sb, "Vi");
        else if (v.flags & VF_VIEW_KEYS) sb_puts(sb, "Vk");
        else if (v.flags & VF_VIEW_VALUES) sb_puts(sb, "Vv");
        else sb_putc(sb, v.type == VT_LIST ? 'l' : 't');
        sb_printf(sb, "%zu:", l->len);
        for (size_t i = 0; i < l->len; i++) encode(rt, sb, l->items[i]);
        break;
    }
    case VT_DICT: {
        size_t n = dict_len(v.u.dict);
        sb_printf(sb, "d%zu:", n);
        for (size_t i = 0; i < n; i++) {
            encode(rt, sb, dict_key_at(v.u.dict, i));
            encode(rt, sb, dict_val_at(v.u.dict, i));
        }
        break;
    }
    default:
        sb_printf(sb, "<type %d>", v.type);
        break;
    }
}

/* ---- running ---- */

static char *run_case(const MethodCase *c) {
    Arena arena;
    arena_init(&arena, 0);
    jmp_buf jb;
    cf_error err;
    memset(&err, 0, sizeof err);
    Rt rt;
    memset(&rt, 0, sizeof rt);
    rt.arena = &arena;
    rt.jb = &jb;
    rt.err = &err;
    limits_resolve(&rt.lim);
    char *actual;
    if (setjmp(jb) == 0) {
        const char *p = c->recv;
        Value self = decode(&rt, &p);
        p = c->args;
        List *pos = decode(&rt, &p).u.list;
        p = c->kwargs;
        Dict *kw = decode(&rt, &p).u.dict;
        size_t nkw = dict_len(kw);
        Str **names = rt_alloc(&rt, (nkw + 1) * sizeof *names);
        Value *vals = rt_alloc(&rt, (nkw + 1) * sizeof *vals);
        for (size_t i = 0; i < nkw; i++) {
            names[i] = dict_key_at(kw, i).u.s;
            vals[i] = dict_val_at(kw, i);
        }
        Args args = {(int)pos->len, pos->items, (int)nkw, (Str *const *)names, vals};
        Value out;
        StrBuf sb;
        sb_init(&rt, &sb, 64);
        if (method_call(&rt, self, c->name, strlen(c->name), &args, &out)) encode(&rt, &sb, out);
        else sb_putc(&sb, 'U');
        actual = strdup(sb_to_str(&sb)->data);
    } else {
        size_t n = strlen(err.message) + 64;
        actual = malloc(n);
        snprintf(actual, n, "E%s:%s", cf_error_kind_name(err.kind), err.message);
    }
    arena_release(&arena);
    return actual;
}

/* chatfmt's own bounds (no Python counterpart): adversarial calls must end
 * in LimitError instead of running unbounded. */
static int check_limit(const char *what, const char *hay, size_t hay_n, const char *method,
                       Value (*arg)(Rt *rt)) {
    Arena arena;
    arena_init(&arena, 0);
    jmp_buf jb;
    cf_error err;
    memset(&err, 0, sizeof err);
    Rt rt;
    memset(&rt, 0, sizeof rt);
    rt.arena = &arena;
    rt.jb = &jb;
    rt.err = &err;
    rt.lim.max_steps = 100000;
    rt.lim.max_string = 1 << 20;
    limits_resolve(&rt.lim);
    int ok = 0;
    if (setjmp(jb) == 0) {
        StrBuf sb;
        sb_init(&rt, &sb, hay_n);
        for (size_t i = 0; i < hay_n; i++) sb_putc(&sb, hay[i % strlen(hay)]);
        Value self = sb_to_value(&sb);
        Value pos[1] = {arg(&rt)};
        Args args = {1, pos, 0, NULL, NULL};
        Value out;
        method_call(&rt, self, method, strlen(method), &args, &out);
        printf("FAIL limit %s: no LimitError\n", what);
    } else {
        ok = err.kind == CF_ERR_LIMIT;
        if (!ok) printf("FAIL limit %s: %s\n", what, err.message);
    }
    arena_release(&arena);
    return ok;
}

static Value long_needle(Rt *rt) {
    StrBuf sb;
    sb_init(rt, &sb, 4096);
    for (int i = 0; i < 4000; i++) sb_putc(&sb, 'a');
    sb_putc(&sb, 'b');
    return sb_to_value(&sb);
}

static Value huge_width(Rt *rt) { return v_int((int64_t)1 << 40); }

int main(int argc, char **argv) {
    bool verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
    int passed = 0, failed = 0;
    size_t n = sizeof method_cases / sizeof *method_cases;
    for (size_t i = 0; i < n; i++) {
        const MethodCase *c = &method_cases[i];
        char *actual = run_case(c);
        if (strcmp(actual, c->expected) == 0) {
            passed++;
        } else {
            if (failed < 40 || verbose)
                printf("FAIL %s.%s args=%s kwargs=%s\n  expected %s\n  got      %s\n", c->recv,
                       c->name, c->args, c->kwargs, c->expected, actual);
            failed++;
        }
        free(actual);
    }
    int limits[] = {
        check_limit("quadratic find", "a", 1 << 20, "find", long_needle),
        check_limit("quadratic rsplit", "a", 1 << 20, "rsplit", long_needle),
        check_limit("huge center", "x", 1, "center", huge_width),
        check_limit("huge zfill", "1", 1, "zfill", huge_width),
    };
    for (size_t i = 0; i < sizeof limits / sizeof *limits; i++) limits[i] ? passed++ : failed++;
    size_t index_bad = str_method_index_mismatches();   /* the str methods' index, written as data */
    if (index_bad) printf("FAIL str method index: %zu entries disagree with the method table\n", index_bad);
    index_bad ? failed++ : passed++;
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
