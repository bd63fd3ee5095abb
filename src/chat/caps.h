/* caps.h — what a chat template can do, found by probing renders
 * (src/chat/caps.c), and the opt-in polyfills built on it (src/chat/polyfill.c). */
#ifndef CF_CAPS_H
#define CF_CAPS_H

#include "engine/value.h"

struct cf_template;

typedef struct Caps {
    /* content forms a user turn's text renders in (both may be true) */
    bool string_content;      /* "content": "text" */
    bool typed_content;       /* "content": [{"type": "text", "text": ...}] */
    bool system_role;
    bool tools, tool_calls, parallel_tool_calls, tool_call_id, tool_responses;
    bool object_arguments;    /* string `arguments` fail or render unlike the object */
    bool documents;
    const char *reasoning_field;   /* static: "reasoning_content", "reasoning",
                                      "thinking", or NULL */
    const char *thinking_switch;   /* static variable name, or NULL */
    Str *generation_prompt;        /* NULL: add_generation_prompt adds nothing */
    List *stop_strings;            /* of VT_STR */
    int prefix_stable;             /* 1 yes, 0 no, -1 could not tell */
    cf_reply_format reply_format;  /* the format that reads back what the template prints */
} Caps;

/* Probe t (rendering with `defaults` as cf_render_options.defaults; may be
 * NULL). `all` false probes only what the polyfills need: content forms,
 * system role, tool calls and object arguments. Probe failures are answers
 * ("not supported"); only memory exhaustion throws. */
void caps_probe(Rt *rt, const struct cf_template *t, const cf_context *defaults, bool all,
                Caps *out);

/* Polyfills (cf_render_options.polyfill): rewrite a chat's messages so they
 * fit what t can render. Returns messages unchanged when nothing applies.
 * The probe runs once per template (cached in the template, thread-safe). */
Value polyfill_messages(Rt *rt, const struct cf_template *t, const cf_context *defaults,
                        Value messages);

#endif
