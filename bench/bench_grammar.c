/* bench_grammar.c — cf_tool_grammar on a 60-tool request, per reply format:
 * microseconds per call (median of 7 runs of N calls, CPU time of the
 * thread: a shared machine's load does not count), GBNF alone (what
 * llama-server takes), Lark alone (llguidance), the structural tag alone
 * (vLLM, SGLang), and everything (GBNF, Lark, structural tag). The tools are shaped as tool
 * schemas are: 2-6 parameters of strings, integers with ranges, enums,
 * arrays and a nested object, some required. Then every other format with
 * calls, with the default output (all three), and the slowest of all.
 *   bench_grammar [CALLS [FORMAT]]   (make bench runs it; target < 1000 us a call) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "chatfmt.h"

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static char *sixty_tools(void) {
    size_t cap = 1 << 17, n = 0;
    char *s = malloc(cap);
    n += (size_t)sprintf(s + n, "[");
    for (int t = 0; t < 60; t++) {
        n += (size_t)sprintf(s + n, "%s{\"type\":\"function\",\"function\":{\"name\":\"tool_%02d_%s\",\"description\":\"Tool number %d\","
                                    "\"parameters\":{\"type\":\"object\",\"properties\":{",
                             t ? "," : "", t, t % 3 ? "lookup" : "update", t);
        int params = 2 + t % 5;
        for (int p = 0; p < params; p++) {
            const char *sch;
            switch ((t + p) % 6) {
            case 0: sch = "{\"type\":\"string\",\"description\":\"a name\"}"; break;
            case 1: sch = "{\"type\":\"integer\",\"minimum\":1,\"maximum\":500}"; break;
            case 2: sch = "{\"type\":\"string\",\"enum\":[\"celsius\",\"fahrenheit\",\"kelvin\"]}"; break;
            case 3: sch = "{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"maxItems\":8}"; break;
            case 4: sch = "{\"type\":\"object\",\"properties\":{\"lat\":{\"type\":\"number\"},\"lon\":{\"type\":\"number\"}},\"required\":[\"lat\",\"lon\"]}"; break;
            default: sch = "{\"type\":[\"string\",\"null\"],\"format\":\"date\"}"; break;
            }
            n += (size_t)sprintf(s + n, "%s\"param_%d\":%s", p ? "," : "", p, sch);
        }
        n += (size_t)sprintf(s + n, "},\"required\":[\"param_0\"%s]}}}", params > 2 ? ",\"param_2\"" : "");
    }
    sprintf(s + n, "]");
    return s;
}

/* Microseconds of CPU a call (the median of 7 runs of `calls`), or -1. */
static double median_us(cf_reply_format format, unsigned emit, const char *tools, int calls, size_t *bytes) {
    cf_grammar_options o;
    memset(&o, 0, sizeof o);
    o.format = format;
    o.tools_json = tools;
    o.emit = emit;
    double runs[7];
    for (int r = 0; r < 7; r++) {
        double t0 = now_us();
        for (int i = 0; i < calls; i++) {
            cf_error err;
            size_t len;
            char *g = cf_tool_grammar(&o, &len, &err);
            if (!g) {
                fprintf(stderr, "bench_grammar: %s: %s\n", cf_reply_format_name(format), err.message);
                return -1;
            }
            *bytes = len;
            free(g);
        }
        runs[r] = (now_us() - t0) / calls;
    }
    qsort(runs, 7, sizeof runs[0], cmp);
    return runs[3];
}

int main(int argc, char **argv) {
    int calls = argc > 1 ? atoi(argv[1]) : 200;
    char *tools = sixty_tools();
    /* hand-made syntaxes, described formats (JSON and typed XML) and hand-written families */
    static const cf_reply_format formats[] = {CF_REPLY_HERMES,    CF_REPLY_GLM45,   CF_REPLY_COMMAND_A, CF_REPLY_QWEN3_CODER,
                                              CF_REPLY_NEMOTRON_V2, CF_REPLY_MISTRAL, CF_REPLY_PYTHONIC, CF_REPLY_GEMMA4};
    enum { NFORMATS = sizeof formats / sizeof formats[0] };
    static const unsigned emits[] = {CF_EMIT_GBNF, CF_EMIT_LARK, CF_EMIT_STRUCTURAL_TAG, CF_EMIT_ALL};
    static const char *const emit_names[] = {"gbnf", "lark", "structural-tag", "all"};
    enum { NEMITS = sizeof emits / sizeof emits[0] };
    const char *only = argc > 2 ? argv[2] : NULL;   /* one format (profiling) */
    double worst = 0;
    const char *worst_name = "";
    for (size_t f = 0; f < NFORMATS; f++) {
        if (only && strcmp(only, cf_reply_format_name(formats[f])) != 0) continue;
        for (size_t e = 0; e < NEMITS; e++) {
            size_t bytes;
            double us = median_us(formats[f], emits[e], tools, calls, &bytes);
            if (us < 0) return 1;
            if (emits[e] == CF_EMIT_ALL && us > worst) {
                worst = us;
                worst_name = cf_reply_format_name(formats[f]);
            }
            printf("grammar_60_tools_us %s %s %.1f   (%zu bytes of JSON out; target < 1000)\n",
                   cf_reply_format_name(formats[f]), emit_names[e], us, bytes);
        }
    }
    /* the other formats: what `chatfmt grammar` gives by default */
    for (int f = CF_REPLY_PLAIN + 1; !only && f < CF_REPLY_FORMAT_COUNT; f++) {
        bool listed = false;
        for (size_t k = 0; k < NFORMATS; k++) listed = listed || formats[k] == (cf_reply_format)f;
        if (listed) continue;
        size_t bytes;
        double us = median_us((cf_reply_format)f, CF_EMIT_ALL, tools, calls / 4 ? calls / 4 : 1, &bytes);
        if (us < 0) return 1;
        if (us > worst) {
            worst = us;
            worst_name = cf_reply_format_name((cf_reply_format)f);
        }
        printf("grammar_60_tools_us %s all %.1f   (%zu bytes of JSON out; target < 1000)\n",
               cf_reply_format_name((cf_reply_format)f), us, bytes);
    }
    if (!only) printf("grammar_60_tools_us_slowest_all %s %.1f   (target < 1000)\n", worst_name, worst);
    free(tools);
    return 0;
}
