/* context.h — the variables of a render (public type cf_context). */
#ifndef CF_CONTEXT_H
#define CF_CONTEXT_H

#include "value.h"

struct cf_context {
    Arena arena;      /* owns vars (unless borrowed) */
    Dict *vars;       /* name -> value */
};

#endif
