/* test_chain_steps.c — a guarded if/elif chain (src/engine/ast.h:
 * ChainGuards) passes over tests its shared operand rules out, but charges
 * the steps running them would: for each template, the least max_steps it
 * renders under equals that of a twin whose first test is wrapped in
 * `not not (...)`, which takes no guard (so its tests all run) and costs no
 * step of its own. Both must also give the same text. The items repeat
 * their values, so that a value's second run takes the tests it leaves from
 * the pure filter's memo (interp_chain.c: chain_candidates_run); each chain is
 * checked followed by text and as its loop body's last statement (whose
 * branch then runs in the body's place). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "chatfmt.h"
#include "check.h"

static const char CONTEXT[] =
    "{\"ms\": [{\"r\": \"A\"}, {\"r\": \"b\"}, {\"r\": \"C\"}, {\"r\": \"d\"}, {\"r\": \"\"}, {},"
    " {\"r\": null}, {\"r\": \"B\"}, {\"r\": \"a\", \"x\": 1}, {\"r\": \"A\"}, {\"r\": \"b\"},"
    " {\"r\": \"C\"}, {\"r\": \"A\"}, {\"r\": \"zz\"}, {\"r\": \"b\"}, {\"r\": \"zz\"}]}";

/* Each as "FIRST_TEST|REST": the chain is {% if FIRST_TEST %}...REST */
static const char *const CHAINS[][2] = {
    {"m.r|lower == 'a' and m.x",
     "1{% elif m.r|lower == 'a' %}2{% elif m.r|lower == 'b' or m.r|lower == 'c' %}3"
     "{% elif m.r|lower == '' %}4{% else %}5{% endif %}"},
    {"m.r|lower == 'z'",
     "1{% elif not m.r|lower == 'a' %}2{% elif m.r|lower != 'b' %}3{% elif m.r|lower == 'b' %}4{% endif %}"},
    {"m.r|lower == 'q' or m.r|lower == 'a'",
     "1{% elif m.r|lower == 'b' and (m.r|length) in [1, 2] %}2{% elif m.r|lower == 'c' %}3"
     "{% elif m.r|lower == 'd' %}4{% elif m.r|lower == 'e' %}5{% endif %}"},
    /* repeated values (the memo's candidates), long jumps, an unguarded test, the else after all */
    {"m.r|lower == 'q'",
     "1{% elif m.r|lower == 'w' %}2{% elif m.r|lower == 'e' %}3{% elif m.x == 5 %}4{% elif m.r|lower == 'r' %}5"
     "{% elif m.r|lower == 't' %}6{% elif m.r|lower == 'c' %}7{% elif m.r|lower == 'y' %}8{% else %}9{% endif %}"},
    {"m.r|lower == 'q'",
     "1{% elif m.r|lower == 'w' %}2{% elif m.r|lower == 'e' %}3{% elif m.r|lower == 'b' %}4{% elif m.r|lower == 'r' %}5"
     "{% elif m.r|lower == 't' %}6{% elif m.r|lower == 'y' %}7{% endif %}"},
};

/* The least max_steps that renders t (the render's own count), and its text. */
static unsigned long long least_steps(const cf_template *t, const cf_context *ctx, char **text) {
    unsigned long long lo = 1, hi = 1u << 20;
    for (;;) {   /* lo fails (or is 1), hi renders */
        cf_limits lim;
        cf_limits_default(&lim);
        unsigned long long mid = lo + (hi - lo) / 2;
        lim.max_steps = mid;
        cf_render_options opt = {.limits = &lim, .now = "2026-03-14T15:09:26"};
        cf_result r;
        cf_error err;
        bool ok = cf_render(t, ctx, &opt, &r, &err);
        if (ok) {
            hi = mid;
            free(*text);
            *text = strdup(r.text);
            cf_result_free(&r);
        } else {
            lo = mid;
        }
        if (hi - lo <= 1) return hi;
    }
}

int main(void) {
    cf_error err;
    cf_context *ctx = cf_context_from_json(CONTEXT, strlen(CONTEXT), &err);
    if (!check(ctx != NULL, "context: %s", ctx ? "" : err.message)) return check_summary();
    for (size_t i = 0; i < sizeof CHAINS / sizeof CHAINS[0]; i++) {
      for (int last = 0; last < 2; last++) {   /* the chain followed by text, or last in the loop's body */
        char src[2][1024];
        const char *after = last ? "" : ";";
        snprintf(src[0], sizeof src[0], "{%% for m in ms %%}{%% if %s %%}%s%s{%% endfor %%}", CHAINS[i][0], CHAINS[i][1],
                 after);
        snprintf(src[1], sizeof src[1], "{%% for m in ms %%}{%% if not not (%s) %%}%s%s{%% endfor %%}", CHAINS[i][0],
                 CHAINS[i][1], after);
        unsigned long long steps[2] = {0, 0};
        char *text[2] = {NULL, NULL};
        for (int k = 0; k < 2; k++) {
            cf_template *t = cf_compile(src[k], strlen(src[k]), NULL, &err);
            if (!check(t != NULL, "chain %zu: compile: %s", i, t ? "" : err.message)) continue;
            steps[k] = least_steps(t, ctx, &text[k]);
            cf_template_free(t);
        }
        check(text[0] && text[1] && strcmp(text[0], text[1]) == 0, "chain %zu: texts differ: %s / %s", i,
              text[0] ? text[0] : "(none)", text[1] ? text[1] : "(none)");
        check(steps[0] == steps[1] && steps[0] > 1, "chain %zu: least max_steps %llu guarded, %llu as the tests run", i,
              steps[0], steps[1]);
        free(text[0]);
        free(text[1]);
      }
    }
    cf_context_free(ctx);
    return check_summary();
}
