/* context.c — a render's variables (cf_context): from JSON, or set one by
 * one; each context owns an arena its values live in. */
#include "context.h"
#include "json.h"
#include "unicode.h"
#include <stdlib.h>
#include <string.h>

cf_context *context_alloc(size_t memory_limit) {
    size_t head = (sizeof(cf_context) + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    cf_context *c = context_block_take();
    if (!c) c = malloc(head + CONTEXT_FIRST_CHUNK);   /* (malloc aligns to 16) */
    if (!c) return NULL;
    arena_init_borrowed(&c->arena, memory_limit, (unsigned char *)c + head, CONTEXT_FIRST_CHUNK);
    c->vars = NULL;
    c->nheld = 0;
    return c;
}

CF_API cf_context *cf_context_new(void) {
    cf_context *volatile c = context_alloc(0);
    if (!c) return NULL;
    RT_PROTECTED(rt, &c->arena, NULL, NULL);
    if (setjmp(jb_rt)) {
        arena_release(&c->arena);
        free(c);
        return NULL;
    }
    c->vars = dict_new(&rt, 16);
    return c;
}

CF_API cf_context *cf_context_from_json(const char *json, size_t len, cf_error *err) {
    return cf_context_from_json_limits(json, len, NULL, err);
}

CF_API cf_context *cf_context_from_json_limits(const char *json, size_t len, const cf_limits *limits,
                                               cf_error *err) {
    cf_context *volatile c = context_alloc(0);
    if (!c) {
        if (err) error_set(err, CF_ERR_MEMORY, 0, 0, "out of memory");
        return NULL;
    }
    RT_PROTECTED(rt, &c->arena, err, limits);
    if (setjmp(jb_rt)) {
        cf_context_free(c);
        return NULL;
    }
    Value v = json_parse(&rt, json, len);
    if (v.type != VT_DICT) rt_throw(&rt, CF_ERR_TYPE, "context must be a JSON object, not %s", v_type_name(v));
    c->vars = v.u.dict;
    return c;
}

static bool context_set(cf_context *c, const char *name, Value (*make)(Rt *, const void *, size_t),
                        const void *arg, size_t len, const cf_limits *limits, cf_error *err) {
    RT_PROTECTED(rt, &c->arena, err, limits);
    if (setjmp(jb_rt)) return false;
    Value v = make(&rt, arg, len);
    dict_set(&rt, c->vars, v_strz(&rt, name), v);
    return true;
}

static Value make_json(Rt *rt, const void *p, size_t n) { return json_parse(rt, p, n); }
static Value make_str(Rt *rt, const void *p, size_t n) {
    size_t bad;
    if (!utf8_validate(p, n, &bad)) {
        rt->err->offset = bad;
        rt_throw(rt, CF_ERR_UNICODE, "invalid UTF-8 at byte %zu", bad);
    }
    return v_str(rt, p, n);
}
static Value make_bool(Rt *rt, const void *p, size_t n) { return v_bool(n != 0); }
static Value make_int(Rt *rt, const void *p, size_t n) { return v_int(*(const int64_t *)p); }

CF_API bool cf_context_set_json(cf_context *c, const char *name, const char *json, size_t len, cf_error *err) {
    return context_set(c, name, make_json, json, len, NULL, err);
}
CF_API bool cf_context_set_json_limits(cf_context *c, const char *name, const char *json, size_t len,
                                       const cf_limits *limits, cf_error *err) {
    return context_set(c, name, make_json, json, len, limits, err);
}
CF_API bool cf_context_set_string(cf_context *c, const char *name, const char *s, size_t len) {
    return context_set(c, name, make_str, s, len, NULL, NULL);
}
CF_API bool cf_context_set_bool(cf_context *c, const char *name, bool v) {
    return context_set(c, name, make_bool, NULL, v ? 1 : 0, NULL, NULL);
}
CF_API bool cf_context_set_int(cf_context *c, const char *name, int64_t v) {
    return context_set(c, name, make_int, &v, sizeof v, NULL, NULL);
}
CF_API bool cf_context_has(const cf_context *c, const char *name) {
    Value v;
    return dict_get_str(c->vars, name, strlen(name), &v);
}
CF_API bool cf_context_has_value(const cf_context *c, const char *name) {
    Value v;
    return dict_get_str(c->vars, name, strlen(name), &v) && v.type != VT_NONE;
}
CF_API void cf_context_remove(cf_context *c, const char *name) {
    RT_PROTECTED(rt, &c->arena, NULL, NULL);
    if (setjmp(jb_rt)) return;
    dict_del(c->vars, v_strz(&rt, name));
}
/* The variables as one JSON object (json.dumps, ensure_ascii off): what
 * cf_context_from_json reads back into the same variables (tuples become
 * lists). The Python binding pickles a template's special tokens so. */
CF_API char *cf_context_to_json(const cf_context *c, size_t *len, cf_error *err) {
    Arena arena;
    arena_init(&arena, 0);
    RT_PROTECTED(rt, &arena, err, NULL);
    if (setjmp(jb_rt)) {
        arena_release(&arena);
        return NULL;
    }
    StrBuf sb;
    sb_init(&rt, &sb, 256);
    JsonDumpOpts o;
    json_opts_default(&o);
    o.ensure_ascii = false;
    json_dump(&rt, &sb, c && c->vars ? v_dict_of(c->vars) : v_dict_of(dict_new(&rt, 0)), &o);
    char *json = malloc(sb.len + 1);
    if (!json) rt_oom(&rt, sb.len + 1);
    memcpy(json, sb.p, sb.len);
    json[sb.len] = 0;
    if (len) *len = sb.len;
    arena_release(&arena);
    return json;
}

CF_API void cf_context_free(cf_context *c) {
    if (!c) return;
    arena_release(&c->arena);
    for (int k = 0; k < c->nheld; k++) json_reused_release(c->held[k]);
    if (!context_block_put(c)) free(c);
}
