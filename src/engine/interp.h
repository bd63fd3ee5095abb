/* interp.h — the tree-walking interpreter: runs a compiled template's AST
 * against variables, writing Python str() of every printed value. */
#ifndef CF_INTERP_H
#define CF_INTERP_H

#include "ast.h"

typedef struct SpanVec { cf_span *v; size_t n, cap; } SpanVec;

typedef struct RenderInput {
    const struct cf_template *t;
    bool chat_mode;        /* chat[] replaces those names in vars */
    Value chat[CHAT_NVARS];/* VT_MISSING hides the name (continue_final_message) */
    const Dict *vars;      /* caller variables (may be NULL) */
    const Dict *defaults;  /* used where vars has no such name (may be NULL) */
    const char *now;       /* "now" pinned by the options, or NULL (then CHATFMT_NOW) */
} RenderInput;

/* Render into out, with the code point spans of {% generation %} blocks
 * into spans. Throws on error. */
void interp_run(Rt *rt, const RenderInput *in, StrBuf *out, SpanVec *spans);

/* Call any callable value (macro, builtin, bound method, loop). */
Value interp_call(Rt *rt, Value callee, const Args *args);

/* Builtin globals (globals.c): range, dict, namespace, cycler, joiner, lipsum,
 * raise_exception, strftime_now. Returns false when `name` is none of them. */
bool global_lookup(const char *name, size_t n, Value *out);
/* The "now" a render pins (options, else CHATFMT_NOW; NULL: real local time). */
const char *interp_now(Rt *rt);
/* Evaluate an expression of constants while compiling (Jinja2's as_const):
 * false, with nothing raised, when it fails. */
bool interp_eval_constant(Rt *rt, const struct cf_template *t, const Node *n, Value *out);

#endif
