/* same_json_value.h — are two values the JSON reader built the same value,
 * read the same way? Types, flags, bytes (and code point counts where both
 * are counted), items in order, and the JSON text kept for tojson with its
 * steps and height (which decide what tojson copies and charges). Not
 * cf_context_to_json: that copies the kept text, whatever the values.
 * Shared by the cached readers' unit test (tests/test_json_cache.c) and
 * their fuzzer (fuzz/fuzz_json.c). */
#ifndef CHATFMT_TESTS_SAME_JSON_VALUE_H
#define CHATFMT_TESTS_SAME_JSON_VALUE_H
#include <stdbool.h>
#include <string.h>
#include "engine/value.h"

static inline bool same_json_source(const JsonSource *a, const JsonSource *b) {
    if (!a || !b) return a == b;
    return a->len == b->len && a->steps == b->steps && a->height == b->height && !memcmp(a->text, b->text, a->len);
}

static bool same_json_value(Value a, Value b, int depth) {
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
        if (a.u.list->len != b.u.list->len || !same_json_source(a.u.list->json, b.u.list->json)) return false;
        for (size_t i = 0; i < a.u.list->len; i++)
            if (!same_json_value(a.u.list->items[i], b.u.list->items[i], depth + 1)) return false;
        return true;
    case VT_DICT:
        if (dict_len(a.u.dict) != dict_len(b.u.dict) ||
            !same_json_source(dict_json_source(a.u.dict), dict_json_source(b.u.dict)))
            return false;
        for (size_t i = 0; i < dict_len(a.u.dict); i++)
            if (!same_json_value(dict_key_at(a.u.dict, i), dict_key_at(b.u.dict, i), depth + 1) ||
                !same_json_value(dict_val_at(a.u.dict, i), dict_val_at(b.u.dict, i), depth + 1))
                return false;
        return true;
    default: return false;   /* (the reader makes nothing else) */
    }
}
#endif
