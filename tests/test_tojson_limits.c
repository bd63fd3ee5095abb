/* test_tojson_limits.c — `{{ x|tojson }}` is written to the output through
 * a buffer the render reuses (src/engine/interp.c: output_tojson), not as a
 * str of its own. The limits must not see the difference: for every
 * max_string and max_output around the sizes involved, and max_steps around
 * the render's count, each template renders (or fails, with the same error
 * kind and message) exactly as its twin `{{ x|tojson ~ '' }}`, whose dump
 * is the filter's own str, concatenated and then written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "chatfmt.h"
#include "check.h"

static const char CONTEXT[] =
    "{\"x\": {\"name\": \"get_weather\", \"description\": \"Get the weather \\u00e9\", \"parameters\":"
    " {\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}, \"required\": [\"city\"]}},"
    " \"xs\": [[1, 2, 3], {\"a\": \"b\"}, \"text\", null]}";

/* %s: where the dump goes ("x|tojson" or "x|tojson ~ ''" and the like) */
static const char *const SHAPES[] = {
    "{{ %s }}",
    "0123456789{{ %s }}!",
    "{%% for x in xs %%}[{{ %s }}]{%% endfor %%}",
    "{%% macro m(x) %%}<{{ %s }}>{%% endmacro %%}{{ m(x) }}{{ m(xs) }}",
    "{%% set s %%}{{ %s }}{{ %s }}{%% endset %%}{{ s }}",
};
static const char *const DUMPS[][2] = {
    {"x|tojson", "x|tojson ~ ''"},
    {"x|tojson(indent=1)", "x|tojson(indent=1) ~ ''"},
    {"xs|tojson(ensure_ascii=True)", "xs|tojson(ensure_ascii=True) ~ ''"},
};

typedef struct Outcome { bool ok; char text[4096]; cf_error_kind kind; char message[1024]; } Outcome;

static void render(const cf_template *t, const cf_context *ctx, const cf_limits *lim, Outcome *o) {
    cf_render_options opt = {.limits = lim, .now = "2026-03-14T15:09:26"};
    cf_result r;
    cf_error err;
    memset(o, 0, sizeof *o);
    o->ok = cf_render(t, ctx, &opt, &r, &err);
    if (o->ok) {
        snprintf(o->text, sizeof o->text, "%s", r.text);
        cf_result_free(&r);
    } else {
        o->kind = err.kind;
        snprintf(o->message, sizeof o->message, "%s", err.message);
    }
}

int main(void) {
    cf_error err;
    cf_context *ctx = cf_context_from_json(CONTEXT, strlen(CONTEXT), &err);
    if (!check(ctx != NULL, "context: %s", ctx ? "" : err.message)) return check_summary();
    size_t compared = 0, failing = 0;
    for (size_t s = 0; s < sizeof SHAPES / sizeof SHAPES[0]; s++) {
        for (size_t d = 0; d < sizeof DUMPS / sizeof DUMPS[0]; d++) {
            cf_template *t[2];
            char src[2][512];
            for (int k = 0; k < 2; k++) {
                snprintf(src[k], sizeof src[k], SHAPES[s], DUMPS[d][k], DUMPS[d][k]);
                t[k] = cf_compile(src[k], strlen(src[k]), NULL, &err);
                check(t[k] != NULL, "compile %s: %s", src[k], t[k] ? "" : err.message);
            }
            if (!t[0] || !t[1]) continue;
            /* max_string, max_output and max_steps each swept alone, the others at their defaults */
            for (int which = 0; which < 3; which++) {
                for (unsigned v = 1; v <= 700; v += which == 2 ? 1 : 3) {
                    cf_limits lim;
                    cf_limits_default(&lim);
                    if (which == 0) lim.max_string = v;
                    else if (which == 1) lim.max_output = v;
                    else lim.max_steps = v;
                    Outcome o[2];
                    render(t[0], ctx, &lim, &o[0]);
                    render(t[1], ctx, &lim, &o[1]);
                    compared++;
                    failing += !o[0].ok;
                    bool same = o[0].ok == o[1].ok &&
                                (o[0].ok ? strcmp(o[0].text, o[1].text) == 0
                                         : o[0].kind == o[1].kind && strcmp(o[0].message, o[1].message) == 0);
                    if (!check(same, "%s with %s = %u: %s / %s", src[0],
                               which == 0 ? "max_string" : which == 1 ? "max_output" : "max_steps", v,
                               o[0].ok ? o[0].text : o[0].message, o[1].ok ? o[1].text : o[1].message))
                        break;
                }
            }
            cf_template_free(t[0]);
            cf_template_free(t[1]);
        }
    }
    /* the sweeps must reach both sides of each limit */
    check(failing > compared / 10 && failing < compared, "renders failing by a limit: %zu of %zu", failing, compared);
    cf_context_free(ctx);
    return check_summary();
}
