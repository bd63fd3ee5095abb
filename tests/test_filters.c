/* test_filters.c — src/engine/format.c's helpers (Python int/float conversions, `%`
 * formatting, str.format, escape) and a sample of filters called directly,
 * against what Python 3.11 + Jinja2 3.1 give (tests/filters_cases.h, written
 * by tests/gen_filters_cases.py). The whole-template coverage of every
 * filter and test lives in tests/unit/filters.jsonl.
 *
 * Prints "N passed, N failed"; exits 1 on any failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/builtins.h"
#include "engine/json.h"

typedef struct FilterCase { const char *kind, *a, *b, *expected; } FilterCase;

#include "filters_cases.h"

typedef struct Env {
    Arena arena;
    jmp_buf jb;
    cf_error err;
    Rt rt;
} Env;

static void env_init(Env *e) {
    memset(e, 0, sizeof *e);
    arena_init(&e->arena, 0);
    e->rt.arena = &e->arena;
    e->rt.jb = &e->jb;
    e->rt.err = &e->err;
    limits_resolve(&e->rt.lim);
}

static Value json(Rt *rt, const char *text) { return json_parse(rt, text, strlen(text)); }

/* "m:" prefix marks a Markup string */
static Value text_arg(Rt *rt, const char *s) {
    if (strncmp(s, "m:", 2) == 0) return v_markup(v_strz(rt, s + 2));
    return v_strz(rt, s);
}

static Args positional(const List *l) {
    Args a = {(int)l->len, l->items, 0, NULL, NULL};
    return a;
}

static void show(Rt *rt, StrBuf *sb, Value v) {
    if (v.type == VT_STR && (v.flags & VF_MARKUP)) sb_puts(sb, "m:");
    v_write_str(rt, sb, v);
}

/* The case's result in the generator's spelling. */
static void run(Rt *rt, const FilterCase *c, StrBuf *sb) {
    const char *k = c->kind;
    if (strcmp(k, "int_from_float") == 0) {
        show(rt, sb, py_int_from_float(rt, strtod(c->a, NULL)));
    } else if (strcmp(k, "parse_int") == 0) {
        Value out;
        if (py_parse_int(rt, c->a, strlen(c->a), atoi(c->b), &out)) show(rt, sb, out);
        else sb_putc(sb, 'E');
    } else if (strcmp(k, "parse_float") == 0) {
        double d;
        if (py_parse_float(rt, c->a, strlen(c->a), &d)) v_write_repr(rt, sb, v_float(d));
        else sb_putc(sb, 'E');
    } else if (strcmp(k, "percent") == 0) {
        Value args = json(rt, c->b[0] == '!' ? c->b + 1 : c->b);
        if (args.type == VT_LIST && c->b[0] != '!') args.type = VT_TUPLE;
        show(rt, sb, py_percent_format(rt, text_arg(rt, c->a), args));
    } else if (strcmp(k, "format") == 0) {
        Args a = positional(json(rt, c->b).u.list);
        show(rt, sb, py_str_format(rt, text_arg(rt, c->a), &a));
    } else if (strcmp(k, "escape") == 0) {
        show(rt, sb, markup_escape(rt, v_strz(rt, c->a)));
    } else if (strncmp(k, "filter:", 7) == 0) {
        FilterFn f = filter_lookup(k + 7, strlen(k + 7));
        Args a = positional(json(rt, c->b).u.list);
        Value r = f(rt, json(rt, c->a), &a);
        r.flags &= (uint8_t)~VF_GENERATOR;   /* the generator script lists generators, as list() */
        v_write_str(rt, sb, r);
    } else {
        fprintf(stderr, "unknown case kind %s\n", k);
        exit(2);
    }
}

static char *run_case(const FilterCase *c) {
    Env e;
    env_init(&e);
    char *actual;
    if (setjmp(e.jb) == 0) {
        StrBuf sb;
        sb_init(&e.rt, &sb, 64);
        run(&e.rt, c, &sb);
        actual = strdup(sb_to_str(&sb)->data);
    } else {
        size_t n = strlen(e.err.message) + 64;
        actual = malloc(n);
        /* spelled here until cf_error_kind_name knows the newer kinds */
        const char *kind = e.err.kind == CF_ERR_TEMPLATE_RUNTIME ? "TemplateRuntimeError"
                                                                  : cf_error_kind_name(e.err.kind);
        snprintf(actual, n, "E%s:%s", kind, e.err.message);
    }
    arena_release(&e.arena);
    return actual;
}

/* Jinja2 exception classes chatfmt folds into a parent kind. */
static bool same_result(const char *expected, const char *actual) {
    if (strcmp(expected, actual) == 0) return true;
    static const char *const folded[][2] = {
        {"EFilterArgumentError:", "ETemplateRuntimeError:"},
    };
    for (size_t i = 0; i < sizeof folded / sizeof folded[0]; i++) {
        size_t n = strlen(folded[i][0]), m = strlen(folded[i][1]);
        if (strncmp(expected, folded[i][0], n) == 0 && strncmp(actual, folded[i][1], m) == 0)
            return strcmp(expected + n, actual + m) == 0;
    }
    return false;
}

/* Huge widths must fail fast with LimitError, not fill memory. */
static bool check_limit(const char *label, Value (*call)(Rt *, const char *), const char *fmt) {
    Env e;
    env_init(&e);
    clock_t t0 = clock();
    bool ok = false;
    if (setjmp(e.jb) == 0) call(&e.rt, fmt);
    else ok = e.err.kind == CF_ERR_LIMIT;
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    arena_release(&e.arena);
    if (!ok || secs > 1.0) printf("FAIL limit %s (%s, %.2fs)\n", label, ok ? "slow" : "no LimitError", secs);
    return ok && secs <= 1.0;
}

static Value call_percent(Rt *rt, const char *fmt) { return py_percent_format(rt, v_strz(rt, fmt), v_int(1)); }

static Value call_format(Rt *rt, const char *fmt) {
    Value one = v_int(1);
    Args a = {1, &one, 0, NULL, NULL};
    return py_str_format(rt, v_strz(rt, fmt), &a);
}

int main(int argc, char **argv) {
    bool verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
    int passed = 0, failed = 0;
    for (size_t i = 0; i < sizeof filter_cases / sizeof *filter_cases; i++) {
        const FilterCase *c = &filter_cases[i];
        char *actual = run_case(c);
        if (same_result(c->expected, actual)) {
            passed++;
        } else {
            if (failed < 40 || verbose)
                printf("FAIL %s a=%s b=%s\n  expected %s\n  got      %s\n", c->kind, c->a, c->b, c->expected, actual);
            failed++;
        }
        free(actual);
    }
    bool limits[] = {
        check_limit("%-width", call_percent, "%999999999999d"),
        check_limit("%-precision", call_percent, "%.999999999999f"),
        check_limit("format width", call_format, "{:999999999999}"),
        check_limit("format precision", call_format, "{:.999999999999f}"),
        check_limit("format zero-padded grouping", call_format, "{:0999999999999,}"),
    };
    for (size_t i = 0; i < sizeof limits / sizeof *limits; i++) limits[i] ? passed++ : failed++;
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
