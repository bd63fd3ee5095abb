/* schema.c — what the tools' JSON schemas say about an argument: formats
 * that write values untyped (GLM, typed XML) read them back by it. */
#include <string.h>
#include "reply.h"

enum { MAX_SCHEMA_DEPTH = 32 };

static bool get(Value obj, const char *key, Value *out) {
    return obj.type == VT_DICT && dict_get_str(obj.u.dict, key, strlen(key), out);
}

Value tool_properties(Parser *p, const char *name, size_t n) {
    if (p->tools.type != VT_LIST) return v_none();
    const List *tools = p->tools.u.list;
    for (size_t k = 0; k < tools->len; k++) {
        Value fn = tools->items[k], inner, nm, params, props;
        if (get(fn, "function", &inner) && inner.type == VT_DICT) fn = inner;
        if (!get(fn, "name", &nm) || nm.type != VT_STR || nm.u.s->len != n ||
            memcmp(nm.u.s->data, name, n) != 0)
            continue;
        if (get(fn, "parameters", &params) && get(params, "properties", &props) &&
            props.type == VT_DICT)
            return props;
        return v_none();
    }
    return v_none();
}

static bool list_has_string(Value list, const char *equal_to) {
    if (list.type != VT_LIST) return false;
    for (size_t k = 0; k < list.u.list->len; k++) {
        Value v = list.u.list->items[k];
        if (v.type == VT_STR && (!equal_to || str_eqz(v.u.s, equal_to))) return true;
    }
    return false;
}

static bool allows_string_at(Value schema, int depth) {
    Value v;
    if (schema.type != VT_DICT || depth > MAX_SCHEMA_DEPTH) return false;
    if (get(schema, "type", &v))
        return v.type == VT_STR ? str_eqz(v.u.s, "string") : list_has_string(v, "string");
    if (get(schema, "enum", &v)) return list_has_string(v, NULL);
    if (get(schema, "const", &v)) return v.type == VT_STR;
    static const char *const alternatives[] = {"anyOf", "oneOf"};
    for (int a = 0; a < 2; a++) {
        if (!get(schema, alternatives[a], &v) || v.type != VT_LIST) continue;
        for (size_t k = 0; k < v.u.list->len; k++)
            if (allows_string_at(v.u.list->items[k], depth + 1)) return true;
    }
    return false;
}

bool schema_allows_string(Value schema) { return allows_string_at(schema, 0); }

bool property_allows_string(Value props, const char *key, size_t n) {
    Value schema = v_none();
    if (props.type == VT_DICT) dict_get_str(props.u.dict, key, n, &schema);
    return schema_allows_string(schema);
}
