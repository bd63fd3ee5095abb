/* render.h — running a compiled template as one protected operation: its
 * arena, output buffer and error sink, the result handed to the caller. The
 * chat layer (src/chat/chat_render.c) wraps the same run with hooks that
 * prepare the variables before it and trim the output after it, so the
 * engine knows nothing of chat semantics. */
#ifndef CF_RENDER_H
#define CF_RENDER_H

#include "interp.h"

typedef struct RenderHooks {
    /* Before the run: may fill in->chat_mode / in->chat from in->vars. */
    void (*prepare)(Rt *rt, RenderInput *in, void *state);
    /* After the run: how many bytes of out to keep (<= out->len). */
    size_t (*trim)(Rt *rt, const StrBuf *out, void *state);
    void *state;
} RenderHooks;

/* Render t over ctx (may be NULL) with opt (may be NULL); hooks NULL is raw
 * mode. false + err on any error (the result is then empty). */
bool render_template(const cf_template *t, const cf_context *ctx, const cf_render_options *opt,
                     const RenderHooks *hooks, cf_result *out, cf_error *err);

#endif
