/* template.c — compiling: template text -> a cf_template (normalised source,
 * AST) that any number of threads may render at once. */
#include "ast.h"
#include "lexer.h"
#include "unicode.h"
#include <stdlib.h>
#include <string.h>

CF_API cf_template *cf_compile(const char *src, size_t len, const cf_compile_options *opt,
                               cf_error *err) {
    cf_template *volatile t = calloc(1, sizeof(cf_template));
    if (!t) {
        if (err) error_set(err, CF_ERR_MEMORY, 0, 0, "out of memory");
        return NULL;
    }
    if (opt && opt->limits) t->lim = *opt->limits;
    limits_resolve(&t->lim);
    arena_init(&t->arena, t->lim.max_memory);   /* compiling is bounded too */
    RT_PROTECTED(rt, &t->arena, err, &t->lim);
    if (setjmp(jb_rt)) {
        arena_release(&t->arena);
        free(t->name);
        free(t);
        return NULL;
    }
    size_t bad;
    if (!utf8_validate(src, len, &bad)) {
        rt.err->offset = bad;
        rt_throw(&rt, CF_ERR_UNICODE, "'utf-8' codec can't decode byte 0x%02x in position %zu: invalid utf-8",
                 (unsigned char)src[bad], bad);
    }
    if (len > rt.lim.max_json_bytes && len > ((size_t)256 << 20))
        rt_throw(&rt, CF_ERR_LIMIT, "template larger than 256 MiB");
    if (opt && opt->name) {
        t->name = strdup(opt->name);
        if (!t->name) rt_oom(&rt, strlen(opt->name));
    }
    t->source = lex_normalize_source(&rt, src, len);
    parse_template(&rt, t);
    t->source_has_content = cf_memmem(t->source->data, t->source->len, "content", 7) != NULL;
    return t;
}

CF_API void cf_template_free(cf_template *t) {
    if (!t) return;
    arena_release(&t->arena);
    free(t->name);
    free(t);
}

CF_API const char *cf_template_source(const cf_template *t, size_t *len) {
    if (len) *len = t->source->len;
    return t->source->data;
}
