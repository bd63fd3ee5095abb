/* tagged_value.h — shared by tests/test_values.c and tests/test_json.c:
 * a tiny harness (pass/fail counters, guarded calls that catch rt_throw)
 * and the decoder of the tagged JSON form the generator scripts use to
 * describe Python values JSON cannot spell (see tests/gen_value_cases.py). */
#ifndef TAGGED_VALUE_H
#define TAGGED_VALUE_H

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/json.h"
#include "engine/value.h"

static int tv_passed, tv_failed;

static void tv_check(bool ok, const char *what, const char *got, const char *want) {
    if (ok) {
        tv_passed++;
        return;
    }
    tv_failed++;
    if (tv_failed <= 40) fprintf(stderr, "FAIL %s\n   got: %s\n  want: %s\n", what, got, want);
}

static void tv_check_str(const char *what, const char *got, const char *want) {
    tv_check(strcmp(got, want) == 0, what, got, want);
}

/* Run fn(rt, ctx); false when it threw (the error is in rt->err). */
typedef void (*TvFn)(Rt *rt, void *ctx);
static bool tv_guarded(Rt *rt, TvFn fn, void *ctx) {
    jmp_buf jb, *saved = rt->jb;
    rt->jb = &jb;
    if (setjmp(jb)) {
        rt->jb = saved;
        return false;
    }
    fn(rt, ctx);
    rt->jb = saved;
    return true;
}

/* "!Kind: message" — how the cases spell an expected exception. */
static void tv_error_text(StrBuf *sb, const cf_error *err) {
    sb_printf(sb, "!%s: %s", cf_error_kind_name(err->kind), err->message);
}

/* The same from a case's {"error_type": ..., "msg": ...}. */
static void tv_expected_error(StrBuf *sb, Value e) {
    Value type, msg;
    dict_get_str(e.u.dict, "error_type", 10, &type);
    dict_get_str(e.u.dict, "msg", 3, &msg);
    sb_printf(sb, "!%s: %s", type.u.s->data, msg.u.s->data);
}

static Value tv_decode(Rt *rt, Value t);

static List *tv_decode_list(Rt *rt, const List *src) {
    List *l = list_new(rt, src->len);
    for (size_t i = 0; i < src->len; i++) list_push(rt, l, tv_decode(rt, src->items[i]));
    return l;
}

static Dict *tv_decode_dict(Rt *rt, const Dict *src) {
    Dict *d = dict_new(rt, 0);
    for (size_t i = 0; i < dict_len(src); i++) dict_set(rt, d, dict_key_at(src, i), tv_decode(rt, dict_val_at(src, i)));
    return d;
}

static Value tv_decode(Rt *rt, Value t) {
    if (t.type == VT_LIST) return v_list_of(tv_decode_list(rt, t.u.list));
    if (t.type != VT_DICT) return t;
    const Dict *d = t.u.dict;
    Value x;
    if (dict_get_str(d, "$float", 6, &x)) return v_float(strtod(x.u.s->data, NULL));
    if (dict_get_str(d, "$tuple", 6, &x)) return v_tuple_of(tv_decode_list(rt, x.u.list));
    if (dict_get_str(d, "$markup", 7, &x)) return v_markup(x);
    if (dict_get_str(d, "$undefined", 10, &x)) return v_undef(x.type == VT_STR ? x.u.s : NULL);
    if (dict_get_str(d, "$dict", 5, &x)) {
        Dict *out = dict_new(rt, 0);
        for (size_t i = 0; i < x.u.list->len; i++) {
            const List *pair = x.u.list->items[i].u.list;
            dict_set(rt, out, tv_decode(rt, pair->items[0]), tv_decode(rt, pair->items[1]));
        }
        return v_dict_of(out);
    }
    if (dict_get_str(d, "$ns", 3, &x)) {
        Value ns = v_dict_of(tv_decode_dict(rt, x.u.dict));
        ns.type = VT_NAMESPACE;
        return ns;
    }
    if (dict_get_str(d, "$view", 5, &x)) {
        Value of;
        dict_get_str(d, "of", 2, &of);
        const Dict *src = tv_decode(rt, of).u.dict;
        List *l = list_new(rt, dict_len(src));
        Value view = v_list_of(l);
        for (size_t i = 0; i < dict_len(src); i++) {
            if (str_eqz(x.u.s, "items")) {
                List *pair = list_new(rt, 2);
                list_push(rt, pair, dict_key_at(src, i));
                list_push(rt, pair, dict_val_at(src, i));
                list_push(rt, l, v_tuple_of(pair));
            } else {
                list_push(rt, l, str_eqz(x.u.s, "keys") ? dict_key_at(src, i) : dict_val_at(src, i));
            }
        }
        view.flags = str_eqz(x.u.s, "items") ? VF_VIEW_ITEMS : str_eqz(x.u.s, "keys") ? VF_VIEW_KEYS : VF_VIEW_VALUES;
        return view;
    }
    return v_dict_of(tv_decode_dict(rt, d));
}

/* Read a whole file (malloc'd, NUL-terminated); NULL if unreadable. */
static char *tv_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(buf);
        return NULL;
    }
    fclose(f);
    buf[n] = '\0';
    *len = (size_t)n;
    return buf;
}

/* A fresh runtime over `arena` with default limits. */
static void tv_rt_init(Rt *rt, Arena *arena, jmp_buf *jb, cf_error *err) {
    memset(rt, 0, sizeof *rt);
    memset(err, 0, sizeof *err);
    cf_limits_default(&rt->lim);
    arena_init(arena, rt->lim.max_memory);
    rt->arena = arena;
    rt->jb = jb;
    rt->err = err;
}

typedef void (*TvCaseFn)(Rt *rt, Value c, const char *line);

#if defined(__GNUC__)
#define TV_NOINLINE __attribute__((noinline))
#else
#define TV_NOINLINE
#endif

/* One case in its own arena. Kept out of line so that setjmp's function has
 * no locals that change after it (gcc -Wclobbered). */
static TV_NOINLINE void tv_run_line(TvCaseFn fn, const char *line, size_t n) {
    Arena arena;
    jmp_buf jb;
    cf_error err;
    Rt rt;
    tv_rt_init(&rt, &arena, &jb, &err);
    char *what = malloc(n + 1);
    memcpy(what, line, n);
    what[n] = '\0';
    if (setjmp(jb)) {
        tv_check(false, what, err.message, "(case could not be run)");
    } else {
        Value c = json_parse(&rt, what, n);
        fn(&rt, c, what);
    }
    free(what);
    arena_release(&arena);
}

/* Run every JSON line of `path` through fn. */
static int tv_run_file(const char *path, TvCaseFn fn) {
    size_t len;
    char *text = tv_read_file(path, &len);
    if (!text) {
        fprintf(stderr, "cannot read %s (run from the repository root)\n", path);
        tv_failed++;
        return 0;
    }
    int count = 0;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        if (n) {
            tv_run_line(fn, line, n);
            count++;
        }
        line += n + (end != NULL);
    }
    free(text);
    return count;
}

/* Run fn with a fresh runtime; an uncaught throw counts as a failure. */
static TV_NOINLINE void tv_run_direct(void (*fn)(Rt *rt)) {
    Arena arena;
    jmp_buf jb;
    cf_error err;
    Rt rt;
    tv_rt_init(&rt, &arena, &jb, &err);
    if (setjmp(jb)) tv_check(false, "direct tests", err.message, "no uncaught error");
    else fn(&rt);
    arena_release(&arena);
}

static Value tv_field(Value c, const char *name) {
    Value v = v_missing();
    dict_get_str(c.u.dict, name, strlen(name), &v);
    return v;
}

#endif
