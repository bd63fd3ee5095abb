/* test_grammar.c — the grammar stage's API (cf_tool_grammar, cf_schema_grammar)
 * on what its callers can get wrong and what a hostile schema can try:
 *
 *  1. Usage errors are values: no tools, a NAME that is not a tool, a format
 *     without calls; tool_choice none gives no grammar.
 *  2. What each tool choice gives: lazy with a trigger (auto), not lazy
 *     (required, NAME), the named tool only; the reasoning state from the
 *     prompt's end (a "pattern" trigger past an open <think>).
 *  3. Every reply format but plain has a grammar in each tool choice, and
 *     the same request gives the same bytes from many threads at once (the
 *     format writers keep no state outside the request).
 *  4. Hostile schemas stay bounded: nesting past the limit fails with
 *     LimitError (or the JSON reader's depth error), huge counts and
 *     unsupported keywords are relaxed with a warning, $ref cycles end, a
 *     small step budget stops a big request with LimitError.
 * Acceptance by real consumers is in tests/grammar/ (llama.cpp's engine,
 * python-lark, jsonschema). Usage: test_grammar */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "chatfmt.h"
#include "check.h"

static const char TOOLS[] =
    "[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"parameters\":{\"type\":\"object\","
    "\"properties\":{\"city\":{\"type\":\"string\"},\"days\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":14}},"
    "\"required\":[\"city\"]}}},"
    "{\"type\":\"function\",\"function\":{\"name\":\"get_time\",\"parameters\":{\"type\":\"object\","
    "\"properties\":{\"tz\":{\"type\":\"string\"}},\"required\":[\"tz\"]}}}]";

static char *tool_grammar(cf_reply_format f, cf_tool_choice choice, const char *name, const char *tail, cf_error *err) {
    cf_grammar_options o;
    memset(&o, 0, sizeof o);
    o.format = f;
    o.tools_json = TOOLS;
    o.tool_choice = choice;
    o.tool_name = name;
    o.prompt_tail = tail;
    return cf_tool_grammar(&o, NULL, err);
}

static bool has(const char *s, const char *needle) { return s && strstr(s, needle) != NULL; }
static int count(const char *s, const char *needle) {
    int n = 0;
    for (const char *p = s; p && (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
    return n;
}

static void usage_and_choices(void) {
    cf_error err;
    char *g = tool_grammar(CF_REPLY_HERMES, CF_TOOL_CHOICE_NAMED, "no_such_tool", NULL, &err);
    check(!g && err.kind == CF_ERR_USAGE && has(err.message, "no_such_tool"), "unknown NAME: UsageError naming it (%s)", err.message);
    g = tool_grammar(CF_REPLY_PLAIN, CF_TOOL_CHOICE_AUTO, NULL, NULL, &err);
    check(!g && err.kind == CF_ERR_USAGE, "plain format with auto: UsageError");
    g = tool_grammar(CF_REPLY_PLAIN, CF_TOOL_CHOICE_NONE, NULL, NULL, &err);
    check(has(g, "\"grammar\":null") && has(g, "\"lark\":null"), "tool_choice none: no grammar (%s)", g ? g : err.message);
    free(g);
    cf_grammar_options o;
    memset(&o, 0, sizeof o);
    o.format = CF_REPLY_HERMES;
    g = cf_tool_grammar(&o, NULL, &err);
    check(!g && err.kind == CF_ERR_USAGE, "no tools: UsageError");
    o.tools_json = "[1, 2";
    g = cf_tool_grammar(&o, NULL, &err);
    check(!g && err.kind == CF_ERR_JSON, "broken tools JSON: JSONDecodeError (%d)", err.kind);

    g = tool_grammar(CF_REPLY_HERMES, CF_TOOL_CHOICE_AUTO, NULL, NULL, &err);
    check(has(g, "\"grammar_lazy\":true") && has(g, "{\"type\":\"word\",\"value\":\"<tool_call>\"}"),
          "auto: lazy, word trigger <tool_call>");
    check(has(g, "get_time") && has(g, "\"stop_after_first\":false") && has(g, "\"at_least_one\":false"),
          "auto: both tools, structural tag without at_least_one");
    /* days 1..14: the range is in the grammar, not a bare integer */
    check(has(g, "\"1\" [0-4]") || has(g, "[1-9]"), "integer range written out");
    free(g);
    g = tool_grammar(CF_REPLY_HERMES, CF_TOOL_CHOICE_NAMED, "get_time", NULL, &err);
    check(has(g, "\"grammar_lazy\":false") && has(g, "get_time") && !has(g, "get_weather"),
          "NAME: not lazy, that tool only");
    free(g);
    g = tool_grammar(CF_REPLY_GLM45, CF_TOOL_CHOICE_REQUIRED, NULL, "<|assistant|><think>", &err);
    check(has(g, "\"grammar_lazy\":false") && has(g, "root ::= until-think? \\\"</think>\\\"") && count(g, "until-arg-value? \\\"</arg_value>") == 4,   /* grammar + 2 structural tags, 2 tools */
          "glm45 required after an open <think>: reasoning first, then XML parameters (raw text rule shared)");
    free(g);
    g = tool_grammar(CF_REPLY_GLM45, CF_TOOL_CHOICE_AUTO, NULL, "<|assistant|><think>", &err);
    check(has(g, "\"type\":\"pattern\"") && has(g, "</think>[\\\\s\\\\S]*?(<tool_call>)"),
          "auto after an open <think>: a pattern trigger past </think> (%s)", g ? strstr(g, "grammar_triggers") : "");
    free(g);
    g = tool_grammar(CF_REPLY_COMMAND_A, CF_TOOL_CHOICE_AUTO, NULL, NULL, &err);
    check(has(g, "<|START_ACTION|>") && has(g, "\"tool_call_id\"") && has(g, "<|END_OF_TURN_TOKEN|>"),
          "command-a: action block, ids, its stop");
    free(g);
}

static char *schema(const char *s, cf_grammar_syntax syn, const cf_limits *lim, cf_error *err) {
    return cf_schema_grammar(s, strlen(s), syn, lim, NULL, err);
}

static void hostile(void) {
    cf_error err;
    /* nesting far past the limit */
    size_t depth = 100000;
    char *deep = malloc(depth * 16 + 64);
    char *w = deep;
    for (size_t i = 0; i < depth; i++) w += sprintf(w, "{\"items\":");
    w += sprintf(w, "{}");
    for (size_t i = 0; i < depth; i++) *w++ = '}';
    *w = 0;
    char *g = schema(deep, CF_GRAMMAR_GBNF, NULL, &err);
    check(!g && (err.kind == CF_ERR_LIMIT), "100000 nested schemas: LimitError (%d %s)", err.kind, err.message);
    free(deep);
    /* 60 levels: within the limit */
    char mid[2048];
    w = mid;
    for (int i = 0; i < 60; i++) w += sprintf(w, "{\"items\":");
    w += sprintf(w, "{\"type\":\"integer\"}");
    for (int i = 0; i < 60; i++) *w++ = '}';
    *w = 0;
    g = schema(mid, CF_GRAMMAR_GBNF, NULL, &err);
    check(g != NULL, "60 nested arrays convert (%s)", g ? "" : err.message);
    free(g);
    g = schema("{\"type\":\"string\",\"maxLength\":1000000000}", CF_GRAMMAR_GBNF, NULL, &err);
    check(has(g, "maxLength above") && !has(g, "1000000000"), "huge maxLength: relaxed with a warning");
    free(g);
    g = schema("{\"type\":\"array\",\"minItems\":100000,\"items\":{\"type\":\"integer\"}}", CF_GRAMMAR_GBNF, NULL, &err);
    check(has(g, "minItems above"), "huge minItems: relaxed with a warning");
    free(g);
    g = schema("{\"type\":\"string\",\"pattern\":\"^a{1,100000}(?=b)$\"}", CF_GRAMMAR_GBNF, NULL, &err);
    check(has(g, "not enforced") || has(g, "relaxed"), "lookahead pattern: relaxed with a warning");
    free(g);
    g = schema("{\"$ref\":\"#\"}", CF_GRAMMAR_GBNF, NULL, &err);
    check(has(g, "leads only to other $refs"), "a $ref to itself: any value, warned (%s)", g ? g : err.message);
    free(g);
    g = schema("{\"$defs\":{\"a\":{\"$ref\":\"#/$defs/b\"},\"b\":{\"$ref\":\"#/$defs/a\"}},\"$ref\":\"#/$defs/a\"}",
               CF_GRAMMAR_LARK, NULL, &err);
    check(g != NULL, "a $ref loop ends");
    free(g);
    g = schema("{\"$ref\":\"https://example.com/s.json\"}", CF_GRAMMAR_GBNF, NULL, &err);
    check(has(g, "not a local JSON pointer"), "a remote $ref: any value, warned");
    free(g);
    g = schema("{\"type\":\"object\",\"properties\":{\"n\":{\"$ref\":\"#\"}}}", CF_GRAMMAR_GBNF, NULL, &err);
    check(has(g, "ref-root"), "a recursive schema refers to its own rule");
    free(g);
    /* many properties under a small step budget: LimitError, not a long run */
    size_t n = 20000;
    char *wide = malloc(n * 40 + 64);
    w = wide + sprintf(wide, "{\"type\":\"object\",\"properties\":{");
    for (size_t i = 0; i < n; i++) w += sprintf(w, "%s\"p%zu\":{\"type\":\"string\"}", i ? "," : "", i);
    sprintf(w, "}}");
    cf_limits lim;
    memset(&lim, 0, sizeof lim);
    lim.max_steps = 10000;
    g = schema(wide, CF_GRAMMAR_GBNF, &lim, &err);
    check(!g && err.kind == CF_ERR_LIMIT, "20000 properties with 10000 steps: LimitError (%d)", err.kind);
    g = schema(wide, CF_GRAMMAR_GBNF, NULL, &err);
    check(g != NULL, "20000 properties with the default budget convert (%s)", g ? "" : err.message);
    free(g);
    free(wide);
    g = schema("{\"type\":\"integer\",\"minimum\":5,\"maximum\":3}", CF_GRAMMAR_GBNF, NULL, &err);
    check(has(g, "is empty"), "an empty integer range is relaxed, warned");
    free(g);
}

/* ---- 3. every format, from several threads ---- */

enum { THREADS = 4 };

typedef struct FormatRun {
    char *out[CF_REPLY_XLAM + 1];
} FormatRun;

static void *grammar_all_formats(void *arg) {
    FormatRun *run = arg;
    for (int f = CF_REPLY_PLAIN + 1; f <= CF_REPLY_XLAM; f++) {
        cf_error err;
        run->out[f] = tool_grammar((cf_reply_format)f, CF_TOOL_CHOICE_AUTO, NULL, NULL, &err);
    }
    return NULL;
}

static void every_format(void) {
    cf_tool_choice choices[] = {CF_TOOL_CHOICE_AUTO, CF_TOOL_CHOICE_REQUIRED, CF_TOOL_CHOICE_NAMED};
    for (int f = CF_REPLY_PLAIN + 1; f <= CF_REPLY_XLAM; f++)
        for (size_t c = 0; c < sizeof choices / sizeof choices[0]; c++) {
            cf_error err;
            char *g = tool_grammar((cf_reply_format)f, choices[c], "get_time", NULL, &err);
            check(g && has(g, "\"grammar\":\"") && has(g, "get_time") &&
                      (choices[c] == CF_TOOL_CHOICE_NAMED) != has(g, "get_weather"),
                  "%s, choice %zu: a grammar of the tools (%s)", cf_reply_format_name((cf_reply_format)f), c,
                  g ? "no" : err.message);
            free(g);
        }
    FormatRun runs[THREADS];
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, grammar_all_formats, &runs[t]);
    for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    for (int f = CF_REPLY_PLAIN + 1; f <= CF_REPLY_XLAM; f++) {
        bool same = runs[0].out[f] != NULL;
        for (int t = 1; t < THREADS; t++) same = same && runs[t].out[f] && strcmp(runs[0].out[f], runs[t].out[f]) == 0;
        check(same, "%s: the same grammar from %d threads", cf_reply_format_name((cf_reply_format)f), THREADS);
        for (int t = 0; t < THREADS; t++) free(runs[t].out[f]);
    }
}

int main(void) {
    usage_and_choices();
    every_format();
    hostile();
    return check_summary();
}
