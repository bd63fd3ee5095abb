/* fuzz_json.c — libFuzzer: any bytes as JSON. As a context (an object) and
 * as one variable (any value), which a fixed template then prints with
 * str(), tojson and iteration, so the values the reader builds go through
 * repr, escaping and sorting too. And as dataset mode reads it: through one
 * cf_json_cache kept across inputs (its shared members and key guesses
 * carry over, as from row to row), as a document and as a JSON Lines row,
 * each equal to the uncached reading (the same values, read the same way,
 * or a failure). */
#include "fuzz_common.h"
#include "engine/context.h"
#include "engine/value.h"
#include "../tests/same_json_value.h"

static const char TEMPLATE[] =
    "{{ v }}|{{ v|tojson }}|{{ v|tojson(indent=1) }}|{{ v|string|length }}"
    "{% if v is mapping %}{% for k, x in v|dictsort %}{{ k }}{{ x }}{% endfor %}"
    "{% elif v is iterable and v is not string %}{% for x in v %}{{ x }}{% endfor %}{% endif %}";

static cf_template *tmpl;
static cf_limits limits;
static cf_json_cache *cache;

/* want and got hold the same variables. */
static void check_same(const cf_context *want, const cf_context *got) {
    FUZZ_CHECK(same_json_value(v_dict_of(want->vars), v_dict_of(got->vars), 0));
}

/* The cached readers against cf_context_from_json on the same bytes. */
static void check_cached(const char *text, size_t size, const cf_context *plain) {
    cf_error err;
    cf_context *c = cf_context_from_json_cached(text, size, NULL, cache, &err);
    FUZZ_CHECK(!c == !plain);
    if (c) check_same(plain, c);
    else fuzz_check_error(&err);
    cf_context_free(c);
    /* as a row: the text up to its first '\n', when the reader takes it in place */
    size_t line_len = 0;
    c = cf_context_from_jsonl_cached(text, size, &line_len, NULL, cache);
    if (c) {
        const char *nl = memchr(text, '\n', size);
        FUZZ_CHECK(nl && line_len == (size_t)(nl - text));
        size_t len = line_len;
        while (len > 0 && text[len - 1] == '\r') len--;
        cf_context *row = cf_context_from_json(text, len, &err);
        FUZZ_CHECK(row != NULL);
        check_same(row, c);
        cf_context_free(row);
        cf_context_free(c);
    } else {
        FUZZ_CHECK(line_len == SIZE_MAX);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    tmpl = fuzz_compile(TEMPLATE, sizeof TEMPLATE - 1, "fuzz_json", &limits);
    cache = cf_json_cache_new();
    FUZZ_CHECK(cache != NULL);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *text = (const char *)data;
    cf_error err;
    cf_context *c = cf_context_from_json(text, size, &err);
    if (!c) fuzz_check_error(&err);
    check_cached(text, size, c);
    cf_context_free(c);

    c = cf_context_new();
    FUZZ_CHECK(c != NULL);
    if (cf_context_set_json(c, "v", text, size, &err)) {
        FUZZ_CHECK(cf_context_has(c, "v"));
        cf_render_options ro;
        memset(&ro, 0, sizeof ro);
        ro.limits = &limits;
        cf_result r;
        if (cf_render(tmpl, c, &ro, &r, &err)) {
            FUZZ_CHECK(r.text[r.len] == 0);
            cf_result_free(&r);
        } else {
            fuzz_check_error(&err);
        }
    } else {
        fuzz_check_error(&err);
    }
    cf_context_free(c);
    return 0;
}
