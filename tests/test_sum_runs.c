/* test_sum_runs.c — an output's sum writes a run of constant str operands
 * as one piece (src/engine/parser.c: join_constant_runs), yet fails the
 * string limit where adding them one by one would: for every max_string
 * from a little below the operands' total to past it, each template gives
 * the same text, or the same error at the same line and column, as a twin
 * whose constants are `'..'|string` (not constants: never joined). The `+`
 * signs start their lines, so the twins' `+` nodes stand at the same place. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "chatfmt.h"
#include "check.h"

/* Each with CONST for the spelling of a constant operand ('..' or '..'|string). */
static const char *const SUMS[] = {
    "{{ s\n+ %s\n+ %s\n+ %s }}",
    "{{ %s\n+ s\n+ %s\n+ %s\n+ s }}",
    "{{ s\n+ %s\n+ s\n+ %s\n+ %s\n+ s\n+ %s }}",
    "{{- %s\n+ %s\n+ s -}}",
};
static const char *const PIECES[] = {"ab", "cdef", "g", "hijklmnop"};

typedef struct Outcome { bool ok; char text[256]; int line, column; char message[1100]; } Outcome;

static Outcome render_with(const char *src, const cf_context *ctx, size_t max_string) {
    Outcome o = {0};
    cf_error err;
    cf_template *t = cf_compile(src, strlen(src), NULL, &err);
    if (!t) {
        snprintf(o.message, sizeof o.message, "compile: %s", err.message);
        return o;
    }
    cf_limits lim;
    cf_limits_default(&lim);
    lim.max_string = max_string;
    cf_render_options opt = {.limits = &lim, .now = "2026-03-14T15:09:26"};
    cf_result r;
    o.ok = cf_render(t, ctx, &opt, &r, &err);
    if (o.ok) {
        snprintf(o.text, sizeof o.text, "%s", r.text);
        cf_result_free(&r);
    } else {
        o.line = err.line;
        o.column = err.column;
        snprintf(o.message, sizeof o.message, "%s", err.message);
    }
    cf_template_free(t);
    return o;
}

/* SUMS[i] with each %s the next piece, quoted, with `suffix` after it. */
static void spell(char *out, size_t cap, const char *sum, const char *suffix) {
    char quoted[4][64];
    for (int k = 0; k < 4; k++) snprintf(quoted[k], sizeof quoted[k], "'%s'%s", PIECES[k], suffix);
    snprintf(out, cap, sum, quoted[0], quoted[1], quoted[2], quoted[3]);
}

int main(void) {
    cf_context *ctx = cf_context_new();
    if (!check(ctx && cf_context_set_string(ctx, "s", "0123456789", 10), "context")) return check_summary();
    for (size_t i = 0; i < sizeof SUMS / sizeof SUMS[0]; i++) {
        char joined[512], apart[512];
        spell(joined, sizeof joined, SUMS[i], "");
        spell(apart, sizeof apart, SUMS[i], "|string");
        for (size_t max = 10; max <= 60; max++) {
            Outcome a = render_with(joined, ctx, max), b = render_with(apart, ctx, max);
            check(a.ok == b.ok && strcmp(a.text, b.text) == 0 && a.line == b.line && a.column == b.column &&
                      strcmp(a.message, b.message) == 0,
                  "sum %zu, max_string %zu: %s %d:%d %s%s / %s %d:%d %s%s", i, max, a.ok ? "ok" : "error", a.line,
                  a.column, a.message, a.text, b.ok ? "ok" : "error", b.line, b.column, b.message, b.text);
        }
    }
    cf_context_free(ctx);
    return check_summary();
}
