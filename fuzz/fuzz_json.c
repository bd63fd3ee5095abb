/* fuzz_json.c — libFuzzer: any bytes as JSON. As a context (an object) and
 * as one variable (any value), which a fixed template then prints with
 * str(), tojson and iteration, so the values the reader builds go through
 * repr, escaping and sorting too. */
#include "fuzz_common.h"

static const char TEMPLATE[] =
    "{{ v }}|{{ v|tojson }}|{{ v|tojson(indent=1) }}|{{ v|string|length }}"
    "{% if v is mapping %}{% for k, x in v|dictsort %}{{ k }}{{ x }}{% endfor %}"
    "{% elif v is iterable and v is not string %}{% for x in v %}{{ x }}{% endfor %}{% endif %}";

static cf_template *tmpl;
static cf_limits limits;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    tmpl = fuzz_compile(TEMPLATE, sizeof TEMPLATE - 1, "fuzz_json", &limits);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *text = (const char *)data;
    cf_error err;
    cf_context *c = cf_context_from_json(text, size, &err);
    if (c) cf_context_free(c);
    else fuzz_check_error(&err);

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
