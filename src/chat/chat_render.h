/* chat_render.h — rendering in chat mode (apply_chat_template's semantics),
 * the entry the chat layer's own callers (caps probes, batch) use below the
 * public API. */
#ifndef CF_CHAT_RENDER_H
#define CF_CHAT_RENDER_H

#include "chatfmt.h"

bool chat_render(const cf_template *t, const cf_context *ctx, const cf_render_options *opt,
                 cf_result *out, cf_error *err);

#endif
