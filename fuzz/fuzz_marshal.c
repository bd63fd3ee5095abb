/* fuzz_marshal.c — libFuzzer: any bytes as the Python-marshal variables of
 * cf_render_data (the binding's fast path), rendered by a fixed template
 * that prints, serialises and walks them. The reader must decline what it
 * cannot represent (CF_RENDER_UNSUPPORTED), never crash; JSON input through
 * the same entry point must agree with cf_context_from_json. */
#include "fuzz_common.h"

static const char TEMPLATE[] =
    "{{ v }}|{{ v|tojson }}|{{ messages|length if messages is defined }}"
    "{% if v is mapping %}{% for k, x in v|dictsort %}{{ k }}{{ x }}{% endfor %}"
    "{% elif v is iterable and v is not string %}{% for x in v %}{{ x }}{% endfor %}{% endif %}";

static cf_template *tmpl;
static cf_limits limits;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    tmpl = fuzz_compile(TEMPLATE, sizeof TEMPLATE - 1, "fuzz_marshal", &limits);
    return 0;
}

static void render_as(int flags, const uint8_t *data, size_t size) {
    char small[256];
    cf_render_buffer b;
    memset(&b, 0, sizeof b);
    b.text = small;
    b.cap = sizeof small;
    cf_render_options ro;
    memset(&ro, 0, sizeof ro);
    ro.limits = &limits;
    int n = cf_render_data(&b, tmpl, &ro, flags, (const char *)data, size);
    if (n == -1) fuzz_check_error(&b.err);
    else if (n == CF_RENDER_BIG) { FUZZ_CHECK(b.big.text && b.big.len == b.len); cf_result_free(&b.big); }
    else FUZZ_CHECK(n == CF_RENDER_UNSUPPORTED ? (flags & CF_DATA_FORMAT_MASK) == CF_DATA_MARSHAL
                                                : n >= 0 && (size_t)n == b.len && b.len <= b.cap);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    render_as(CF_DATA_MARSHAL, data, size);
    render_as(CF_DATA_MARSHAL | CF_DATA_CHAT, data, size);
    render_as(CF_DATA_JSON, data, size);
    return 0;
}
