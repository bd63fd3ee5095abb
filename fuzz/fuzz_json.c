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

static const char TEMPLATE[] =
    "{{ v }}|{{ v|tojson }}|{{ v|tojson(indent=1) }}|{{ v|string|length }}"
    "{% if v is mapping %}{% for k, x in v|dictsort %}{{ k }}{{ x }}{% endfor %}"
    "{% elif v is iterable and v is not string %}{% for x in v %}{{ x }}{% endfor %}{% endif %}";

static cf_template *tmpl;
static cf_limits limits;
static cf_json_cache *cache;

static bool same_source(const JsonSource *a, const JsonSource *b) {
    if (!a || !b) return a == b;
    return a->len == b->len && a->steps == b->steps && a->height == b->height && !memcmp(a->text, b->text, a->len);
}

/* a and b are the same value, read the same way: types, bytes (and code
 * point counts), items in order, and the JSON text kept for tojson. (Not
 * cf_context_to_json: it copies that kept text, whatever the values.) */
static bool same_value(Value a, Value b, int depth) {
    if (a.type != b.type || a.flags != b.flags || depth > 100000) return false;
    switch (a.type) {
    case VT_STR:
    case VT_BIGINT:
        return a.u.s->len == b.u.s->len && !memcmp(a.u.s->data, b.u.s->data, a.u.s->len) &&
               (a.u.s->nchars < 0 || b.u.s->nchars < 0 || a.u.s->nchars == b.u.s->nchars);
    case VT_INT: return a.u.i == b.u.i;
    case VT_FLOAT: return !memcmp(&a.u.f, &b.u.f, sizeof a.u.f);
    case VT_BOOL: return a.u.b == b.u.b;
    case VT_NONE: return true;
    case VT_LIST:
        if (a.u.list->len != b.u.list->len || !same_source(a.u.list->json, b.u.list->json)) return false;
        for (size_t i = 0; i < a.u.list->len; i++)
            if (!same_value(a.u.list->items[i], b.u.list->items[i], depth + 1)) return false;
        return true;
    case VT_DICT:
        if (dict_len(a.u.dict) != dict_len(b.u.dict) || !same_source(dict_json_source(a.u.dict), dict_json_source(b.u.dict)))
            return false;
        for (size_t i = 0; i < dict_len(a.u.dict); i++)
            if (!same_value(dict_key_at(a.u.dict, i), dict_key_at(b.u.dict, i), depth + 1) ||
                !same_value(dict_val_at(a.u.dict, i), dict_val_at(b.u.dict, i), depth + 1))
                return false;
        return true;
    default: return false;   /* (the reader makes nothing else) */
    }
}

/* want and got hold the same variables. */
static void check_same(const cf_context *want, const cf_context *got) {
    FUZZ_CHECK(same_value(v_dict_of(want->vars), v_dict_of(got->vars), 0));
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
