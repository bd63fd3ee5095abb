/* api.c — rendering, the public entry points over the stages:
 *   src/engine  template text -> tokens -> AST -> output (cf_compile and
 *               cf_context_* live there, in template.c and context.c);
 *   src/chat    template sources, apply_chat_template's chat mode, caps,
 *               polyfills, the batch protocol;
 *   src/reply   model text -> OpenAI message (cf_parse_reply, streams).
 * Nothing below includes this level: the chat layer's own renders (caps
 * probes, batch cases) go through chat_render, not back up through here. */
#include "chatfmt.h"
#include "chat/chat_render.h"
#include "engine/render.h"

CF_API bool cf_render(const cf_template *t, const cf_context *ctx, const cf_render_options *opt,
                      cf_result *out, cf_error *err) {
    return render_template(t, ctx, opt, NULL, out, err);
}

CF_API bool cf_render_chat(const cf_template *t, const cf_context *ctx,
                           const cf_render_options *opt, cf_result *out, cf_error *err) {
    return chat_render(t, ctx, opt, out, err);
}
