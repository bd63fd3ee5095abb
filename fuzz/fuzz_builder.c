/* fuzz_builder.c — libFuzzer: any bytes as a sequence of cf_builder calls
 * (wrong counts, bad UTF-8, non-string keys, NaN, depth, a second top
 * level...). The builder must never crash or leak; a context it accepts
 * must render, and one it refuses must come with an error. */
#include <math.h>
#include "fuzz_common.h"

static cf_template *tpl;
static cf_limits limits;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    static const char text[] = "{% for k, v in data.items() %}{{ k }}={{ v | tojson }};{% endfor %}{{ data }}";
    tpl = fuzz_compile(text, sizeof text - 1, "builder", &limits);
    limits.max_json_depth = 64;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    cf_builder *b = cf_builder_new(&limits);
    if (!b) return 0;
    cf_builder_dict(b, 1);
    cf_builder_str(b, "data", 4);
    size_t i = 0;
    while (i < size) {
        uint8_t op = data[i++];
        size_t arg = i < size ? data[i] : 0;
        switch (op % 8) {
        case 0: cf_builder_null(b); break;
        case 1: cf_builder_bool(b, op & 8); break;
        case 2: cf_builder_int(b, (int64_t)(int8_t)arg * 1000003); i++; break;
        case 3: cf_builder_float(b, (op & 8) ? NAN : (double)arg / 7.0); i++; break;
        case 4: {   /* a string of the next arg bytes (may be bad UTF-8) */
            size_t start = i + 1 < size ? i + 1 : size, n = arg;
            if (n > size - start) n = size - start;
            cf_builder_str(b, (const char *)data + start, n);
            i = start + n;
            break;
        }
        case 5: cf_builder_list(b, arg % 6); i++; break;
        case 6: cf_builder_dict(b, arg % 4); i++; break;
        default: if (cf_builder_failed(b)) i = size; break;
        }
    }
    cf_error err;
    cf_context *ctx = cf_builder_finish(b, &err);
    if (!ctx) {
        fuzz_check_error(&err);
        return 0;
    }
    cf_render_options ro;
    memset(&ro, 0, sizeof ro);
    ro.limits = &limits;
    cf_result r;
    if (cf_render(tpl, ctx, &ro, &r, &err)) {
        FUZZ_CHECK(r.text && r.text[r.len] == 0);
        cf_result_free(&r);
    } else {
        fuzz_check_error(&err);
    }
    cf_context_free(ctx);
    return 0;
}
