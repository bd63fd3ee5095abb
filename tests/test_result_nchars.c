/* test_result_nchars.c — cf_result.nchars: what a render says it knows of
 * its output's characters without reading it back. The property callers
 * rely on (a Python str is made as ASCII from it, unscanned): nchars ==
 * len only when every byte is ASCII, and, when not 0, nchars is the
 * output's count of code points. Each case also says whether the render
 * is expected to know (the template's text, strings read from JSON and
 * their sums, captures and macros of them) or not (a filter's new string,
 * tojson), so that a claim lost shows as well as a wrong one.
 * Run from the repository root: build/tests/test_result_nchars */
#include <string.h>
#include "chatfmt.h"
#include "check.h"

static size_t count_code_points(const char *s, size_t n) {
    size_t c = 0;
    for (size_t i = 0; i < n; i++) c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

static bool all_ascii(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] >= 0x80) return false;
    return true;
}

enum { UNKNOWN, KNOWN };

typedef struct Case {
    const char *name, *template, *json;
    bool chat;
    int expect;   /* KNOWN: nchars counted (== len when ASCII); UNKNOWN: 0 */
} Case;

static const Case CASES[] = {
    {"text only", "plain text", "{}", false, KNOWN},
    {"text not ASCII", "caf\xc3\xa9", "{}", false, UNKNOWN},
    {"empty", "", "{}", false, KNOWN},
    {"variable from JSON", "[{{ x }}]", "{\"x\": \"abc\"}", false, KNOWN},
    {"variable not ASCII", "[{{ x }}]", "{\"x\": \"\\u00e9t\\u00e9\"}", false, UNKNOWN},
    {"variable escaped in JSON to ASCII", "[{{ x }}]", "{\"x\": \"a\\nb\"}", false, KNOWN},
    {"sum written out", "{{ '<' + x + '>' + y }}", "{\"x\": \"a\", \"y\": \"b\"}", false, KNOWN},
    {"sum with a part not ASCII", "{{ '<' + x + '>' + y }}", "{\"x\": \"a\", \"y\": \"\\u4e2d\"}", false, UNKNOWN},
    {"sum set then written", "{% set s = 'a' + x + 'b' + x %}{{ s }}", "{\"x\": \"q\"}", false, KNOWN},
    {"sum of two", "{% set s = x + 'b' %}{{ s }}", "{\"x\": \"q\"}", false, KNOWN},
    {"concat with ~", "{{ 'a' ~ x ~ 'b' }}", "{\"x\": \"q\"}", false, KNOWN},
    {"concat with an int", "{{ 'a' ~ 1 ~ 'b' }}", "{}", false, UNKNOWN},
    {"int written", "n={{ 3 }}", "{}", false, UNKNOWN},
    {"macro call", "{% macro m(v) %}<{{ v }}>{% endmacro %}{{ m(x) }}{{ m('y') }}", "{\"x\": \"q\"}", false,
     KNOWN},
    {"macro of a string not ASCII", "{% macro m(v) %}<{{ v }}>{% endmacro %}{{ m(x) }}.", "{\"x\": \"\\u00ff\"}",
     false, UNKNOWN},
    {"block set", "{% set b %}[{{ x }}]{% endset %}{{ b }}{{ b }}", "{\"x\": \"q\"}", false, KNOWN},
    {"filter's new string", "{{ x | upper }}", "{\"x\": \"q\"}", false, UNKNOWN},
    {"tojson", "{{ x | tojson }}", "{\"x\": {\"a\": 1}}", false, UNKNOWN},
    {"ASCII before and after a write not known", "ab{{ x | upper }}cd", "{\"x\": \"q\"}", false, UNKNOWN},
    /* (known-ASCII pieces after a write that is not known add to both counts
     * alike: never equal again) */
    {"ASCII pieces after a str not ASCII", "{{ x }}{{ y }}{{ y }}{{ y }}", "{\"x\": \"\\u00e9\", \"y\": \"abcd\"}",
     false, UNKNOWN},
    {"ASCII pieces after a capture not ASCII", "{% set b %}{{ x }}{% endset %}{{ b }}{{ y }}{{ y }}",
     "{\"x\": \"\\u00e9\", \"y\": \"ab\"}", false, UNKNOWN},
    {"lazy capture of a str not ASCII, then ASCII", "{% set b %}{{ x }}{{ y }}{% endset %}{{ b }}",
     "{\"x\": \"\\u00e9\", \"y\": \"ab\"}", false, UNKNOWN},
    {"lazy capture of ASCII, then ASCII", "{% set b %}{{ y }}{{ y }}{% endset %}{{ b }}", "{\"y\": \"ab\"}", false,
     KNOWN},
    /* a sum cut back at an operand that is not a plain str: the text so far
     * becomes the left operand of a real +, written again after */
    {"sum cut back", "{{ 'ab' + x + ('<i>' | safe) + 'c' }}", "{\"x\": \"q\"}", false, UNKNOWN},
    {"sum cut back, not ASCII after", "{{ 'ab' + x + ('\xc3\xa9' | safe) + 'c' }}", "{\"x\": \"q\"}", false,
     UNKNOWN},
    {"chat", "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}",
     "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}", true, KNOWN},
    {"chat, continue_final_message",
     "{% for m in messages %}<{{ m.role }}>{{ m.content }}</s>{% endfor %}",
     "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}, {\"role\": \"assistant\", \"content\": \"ok\"}],"
     " \"continue_final_message\": true}",
     true, KNOWN},
    {"chat, continue_final_message not ASCII",
     "{% for m in messages %}<{{ m.role }}>{{ m.content }}</s>{% endfor %}",
     "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}, {\"role\": \"assistant\", \"content\": \"\\u00e9\"}],"
     " \"continue_final_message\": true}",
     true, UNKNOWN},
    /* spans: the library counts the code points anyway, and says so */
    {"generation spans", "<s>{% for m in messages %}{% generation %}x{{ m.content }}{% endgeneration %}{% endfor %}",
     "{\"messages\": [{\"role\": \"user\", \"content\": \"\\u00e9\"}]}", true, KNOWN},
};

int main(void) {
    for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
        const Case *c = &CASES[k];
        cf_error err;
        cf_template *t = cf_compile(c->template, strlen(c->template), NULL, &err);
        cf_context *ctx = t ? cf_context_from_json(c->json, strlen(c->json), &err) : NULL;
        if (!check(t && ctx, "%s: compile or context: %s", c->name, err.message)) {
            cf_template_free(t);
            continue;
        }
        cf_result r;
        memset(&r, 0xAB, sizeof r);   /* (every field set by the render) */
        bool ok = (c->chat ? cf_render_chat : cf_render)(t, ctx, NULL, &r, &err);
        if (check(ok, "%s: render: %s", c->name, err.message)) {
            check(r.nchars != r.len || all_ascii(r.text, r.len), "%s: nchars == len but not ASCII", c->name);
            check(r.nchars == 0 || r.nchars == count_code_points(r.text, r.len), "%s: nchars %zu, %zu code points",
                  c->name, r.nchars, count_code_points(r.text, r.len));
            if (c->expect == KNOWN)
                check(r.nchars == count_code_points(r.text, r.len), "%s: not known (nchars %zu, len %zu)", c->name,
                      r.nchars, r.len);
            else
                check(r.nchars == 0, "%s: known, unexpectedly (nchars %zu, len %zu)", c->name, r.nchars, r.len);
            cf_result_free(&r);
        }
        cf_context_free(ctx);
        cf_template_free(t);
    }
    return check_summary();
}
