/* bench_render.c — per-render time of chatfmt on batch cases (the same
 * JSONL the reference benchmark reads): templates compiled and contexts
 * parsed once, then every case rendered REPEAT times; prints the median
 * microseconds per case over 5 runs, and peak heap of one render of an
 * optional --peak case. Uses internal headers to reuse the JSON reader.
 * CHATFMT_BENCH_NO_JSON_SOURCE=1 drops the JSON text the reader keeps with
 * each list and dict (JsonSource), so tojson dumps every value as it does
 * for contexts built without JSON (the Python binding's).
 * With --by-template (third argument), it then times each template's cases
 * on their own and prints "template PATH US_PER_CASE" for each (best of 3). */
#include "chatfmt.h"
#include "engine/context.h"
#include "engine/json.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct Case {
    cf_template *t;
    bool owner;          /* t is this case's own (others share it) */
    char *text;          /* the owner's template text, to find it again */
    size_t text_len;
    cf_context ctx;
    bool raw;
    char *name;          /* the case's template path (or id), for --by-template */
} Case;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)len + 1);
    if (!b || fread(b, 1, (size_t)len, f) != (size_t)len) { fclose(f); free(b); return NULL; }
    fclose(f);
    b[len] = 0;
    *n = (size_t)len;
    return b;
}

static void drop_json_sources(Value v) {
    if (v.type == VT_LIST || v.type == VT_TUPLE) {
        v.u.list->json = NULL;
        for (size_t i = 0; i < v.u.list->len; i++) drop_json_sources(v.u.list->items[i]);
    } else if (v.type == VT_DICT) {
        dict_set_json_source(v.u.dict, NULL);
        for (size_t i = 0; i < dict_len(v.u.dict); i++) drop_json_sources(dict_val_at(v.u.dict, i));
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: bench_render CASES.jsonl [REPEAT [--by-template]]\n"); return 2; }
    int repeat = argc > 2 ? atoi(argv[2]) : 200;
    bool by_template = argc > 3 && strcmp(argv[3], "--by-template") == 0;
    size_t n;
    char *all = slurp(argv[1], &n);
    if (!all) { perror(argv[1]); return 1; }
    Case *cases = NULL;
    size_t ncases = 0, cap = 0;
    for (char *line = strtok(all, "\n"); line; line = strtok(NULL, "\n")) {
        if (ncases == cap) { cap = cap ? cap * 2 : 64; cases = realloc(cases, cap * sizeof(Case)); }
        Case *c = &cases[ncases];
        memset(c, 0, sizeof *c);
        arena_init(&c->ctx.arena, 0);
        jmp_buf jb;
        cf_error err;
        Rt rt;
        memset(&rt, 0, sizeof rt);
        rt.arena = &c->ctx.arena;
        rt.jb = &jb;
        rt.err = &err;
        limits_resolve(&rt.lim);
        if (setjmp(jb)) { fprintf(stderr, "bad case: %s\n", err.message); return 1; }
        Value v = json_parse(&rt, line, strlen(line));
        if (getenv("CHATFMT_BENCH_NO_JSON_SOURCE")) drop_json_sources(v);
        Value tp = {0}, tt, cv, raw;
        char *text = NULL;
        size_t tlen = 0;
        if (dict_get_str(v.u.dict, "template_text", 13, &tt) && tt.type == VT_STR) { text = strdup(tt.u.s->data); tlen = tt.u.s->len; }
        else if (dict_get_str(v.u.dict, "template", 8, &tp) && tp.type == VT_STR) text = slurp(tp.u.s->data, &tlen);
        if (!text) { fprintf(stderr, "no template\n"); return 1; }
        Value id;
        c->name = strdup(tp.type == VT_STR ? tp.u.s->data
                         : dict_get_str(v.u.dict, "id", 2, &id) && id.type == VT_STR ? id.u.s->data : "?");
        /* one compiled template per distinct text, shared by its cases (as
         * bench_jinja2.py's cache and any server do) */
        c->t = NULL;
        for (size_t k = 0; k < ncases && !c->t; k++)
            if (cases[k].text_len == tlen && memcmp(cases[k].text, text, tlen) == 0) c->t = cases[k].t;
        if (c->t) {
            free(text);
        } else {
            c->t = cf_compile(text, tlen, NULL, &err);
            if (!c->t) { free(text); free(c->name); continue; }   /* compile errors are not render time */
            c->owner = true;
            c->text = text;
            c->text_len = tlen;
        }
        c->ctx.vars = dict_get_str(v.u.dict, "context", 7, &cv) ? cv.u.dict : dict_new(&rt, 0);
        c->raw = dict_get_str(v.u.dict, "raw", 3, &raw) && v_truthy(raw);
        ncases++;
    }
    double runs[5];
    size_t rendered = 0;
    for (int r = 0; r < 5; r++) {
        double t0 = now_s();
        for (int k = 0; k < repeat; k++) {
            for (size_t i = 0; i < ncases; i++) {
                cf_result res;
                cf_error err;
                bool ok = cases[i].raw ? cf_render(cases[i].t, &cases[i].ctx, NULL, &res, &err)
                                       : cf_render_chat(cases[i].t, &cases[i].ctx, NULL, &res, &err);
                if (ok) { rendered++; cf_result_free(&res); }
            }
        }
        runs[r] = (now_s() - t0) / (double)(repeat * (int)ncases) * 1e6;
    }
    qsort(runs, 5, sizeof runs[0], cmp_double);
    printf("render_us_per_case %.3f\n", runs[2]);
    /* each template's cases (those sharing its compiled template) alone */
    for (size_t i = 0; by_template && i < ncases; i++) {
        if (!cases[i].owner) continue;
        double best = 0;
        for (int r = 0; r < 3; r++) {
            size_t count = 0;
            double t0 = now_s();
            for (int k = 0; k < repeat; k++) {
                for (size_t j = i; j < ncases; j++) {
                    if (cases[j].t != cases[i].t) continue;
                    cf_result res;
                    cf_error err;
                    bool ok = cases[j].raw ? cf_render(cases[j].t, &cases[j].ctx, NULL, &res, &err)
                                           : cf_render_chat(cases[j].t, &cases[j].ctx, NULL, &res, &err);
                    if (ok) cf_result_free(&res);
                    count++;
                }
            }
            double us = (now_s() - t0) / (double)count * 1e6;
            if (r == 0 || us < best) best = us;
        }
        printf("template %s %.3f\n", cases[i].name, best);
    }
    for (size_t i = 0; i < ncases; i++) {
        if (cases[i].owner) {
            cf_template_free(cases[i].t);
            free(cases[i].text);
        }
        arena_release(&cases[i].ctx.arena);
        free(cases[i].name);
    }
    free(cases);
    free(all);
    return rendered ? 0 : 1;
}
