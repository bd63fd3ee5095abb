/* fuzz_builder.c — libFuzzer: any bytes as a sequence of cf_builder calls
 * (wrong counts, bad UTF-8, non-string keys, NaN, depth, a second top
 * level...). The builder must never crash or leak; a context it accepts
 * must render, and one it refuses must come with an error. */
#include <math.h>
#include <string.h>
#include "fuzz_common.h"

static cf_template *tpl;
static cf_limits limits;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    static const char text[] = "{% for k, v in data.items() %}{{ k }}={{ v | tojson }};{% endfor %}{{ data }}";
    tpl = fuzz_compile(text, sizeof text - 1, "builder", &limits);
    limits.max_json_depth = 64;
    return 0;
}

/* Values go one call each, or (op bit 0x80) through a small cf_builder_feed
 * array, flushed when full and before any single call, so the order holds. */
typedef struct Pending { cf_builder *b; cf_builder_item items[5]; size_t n; } Pending;

static void flush(Pending *p) {
    cf_builder_feed(p->b, p->items, p->n);
    p->n = 0;
}

static cf_builder_item *queue(Pending *p, cf_builder_item_kind kind) {
    if (p->n == 5) flush(p);
    cf_builder_item *it = &p->items[p->n++];
    memset(it, 0, sizeof *it);
    it->kind = kind;
    return it;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    cf_builder *b = cf_builder_new(&limits);
    if (!b) return 0;
    Pending p = {b, {{0}}, 0};
    cf_builder_dict(b, 1);
    cf_builder_str(b, "data", 4);
    size_t i = 0;
    while (i < size) {
        uint8_t op = data[i++];
        size_t arg = i < size ? data[i] : 0;
        bool fed = op & 0x80;
        if (!fed && p.n) flush(&p);
        switch (op % 8) {
        case 0: if (fed) queue(&p, CF_ITEM_NULL); else cf_builder_null(b); break;
        case 1: if (fed) queue(&p, CF_ITEM_BOOL)->n = op & 8; else cf_builder_bool(b, op & 8); break;
        case 2: {
            int64_t v = (int64_t)(int8_t)arg * 1000003;
            if (fed) queue(&p, CF_ITEM_INT)->u.i = v; else cf_builder_int(b, v);
            i++;
            break;
        }
        case 3: {
            double v = (op & 8) ? NAN : (double)arg / 7.0;
            if (fed) queue(&p, CF_ITEM_FLOAT)->u.f = v; else cf_builder_float(b, v);
            i++;
            break;
        }
        case 4: {   /* a string of the next arg bytes (may be bad UTF-8) */
            size_t start = i + 1 < size ? i + 1 : size, n = arg;
            if (n > size - start) n = size - start;
            if (fed) {   /* ASCII bytes as CF_ITEM_ASCII on op bit 8 (the data stays in place), as
                            CF_ITEM_KEY on bits 8 and 16 (its promises may be broken: duplicate or
                            misplaced keys stay memory-safe); other bytes as CF_ITEM_UTF8 on bit 16
                            (valid UTF-8 or not: memory-safe either way) */
                bool ascii = op & 8;
                for (size_t k = 0; ascii && k < n; k++) ascii = data[start + k] < 0x80;
                cf_builder_item *it = queue(&p, !ascii ? ((op & 16) ? CF_ITEM_UTF8 : CF_ITEM_STR)
                                                : (op & 16) ? CF_ITEM_KEY : CF_ITEM_ASCII);
                it->u.s = (const char *)data + start;
                it->n = n;
            } else {
                cf_builder_str(b, (const char *)data + start, n);
            }
            i = start + n;
            break;
        }
        case 5: if (fed) queue(&p, CF_ITEM_LIST)->n = arg % 6; else cf_builder_list(b, arg % 6); i++; break;
        case 6: if (fed) queue(&p, CF_ITEM_DICT)->n = arg % 4; else cf_builder_dict(b, arg % 4); i++; break;
        default:
            if (fed) queue(&p, (cf_builder_item_kind)(arg % 12));   /* 11 is no kind: a usage error */
            else if (cf_builder_failed(b)) i = size;
            break;
        }
    }
    flush(&p);
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
