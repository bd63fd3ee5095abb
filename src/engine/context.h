/* context.h — the variables of a render (public type cf_context). */
#ifndef CF_CONTEXT_H
#define CF_CONTEXT_H

#include "value.h"
#include "json_reuse.h"

struct cf_context {
    Arena arena;      /* owns vars (unless borrowed) */
    Dict *vars;       /* name -> value */
    /* values shared with a cf_json_cache that vars holds (released on free) */
    ReusedValue *held[JSON_REUSE_SLOTS];
    int nheld;
};

/* A heap context (vars NULL) whose arena starts in the same allocation:
 * a conversation's values take a few KiB, so most contexts cost one
 * malloc and one free. NULL when out of memory. */
cf_context *context_alloc(size_t memory_limit);
/* Bytes of a context's (or a stack context's) first arena chunk. */
#define CONTEXT_FIRST_CHUNK 16384

#endif
