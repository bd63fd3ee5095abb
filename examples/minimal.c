/* minimal.c — `minimal TEMPLATE CONTEXT.json` prints the prompt exactly as
 * `chatfmt render TEMPLATE CONTEXT.json` (and transformers'
 * apply_chat_template) would. TEMPLATE: a .jinja file, tokenizer_config.json,
 * model folder, .gguf or built-in name.
 *
 *   cc examples/minimal.c $(pkg-config --cflags --libs chatfmt) -o minimal */
#include <chatfmt.h>
#include <stdio.h>
#include <stdlib.h>

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;
    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && (buf = malloc((size_t)n + 1))) {
        rewind(f);
        *len = fread(buf, 1, (size_t)n, f);
    }
    if (f) fclose(f);
    return buf;
}

int main(int argc, char **argv) {
    size_t len = 0;
    char *json = argc == 3 ? read_file(argv[2], &len) : NULL;
    if (!json) {
        fprintf(stderr, "usage: minimal TEMPLATE CONTEXT.json\n");
        return 2;
    }
    cf_error err = {0};
    cf_source src = {0};
    cf_template *t = NULL;
    cf_result out = {0};

    cf_context *ctx = cf_context_from_json(json, len, &err);
    /* a tokenizer_config's "tool_use" template is picked when there are tools */
    cf_load_options load = {.has_tools = ctx && cf_context_has_value(ctx, "tools")};
    bool ok = ctx && cf_source_load(argv[1], &load, &src, &err);
    if (ok) ok = (t = cf_compile(src.text, src.len, NULL, &err)) != NULL;
    if (ok) {
        cf_render_options opt = {.defaults = src.tokens};   /* bos_token etc. from the source */
        ok = cf_render_chat(t, ctx, &opt, &out, &err);
    }
    if (ok) fwrite(out.text, 1, out.len, stdout);
    else fprintf(stderr, "minimal: %s: %s\n", cf_error_kind_name(err.kind), err.message);

    cf_result_free(&out);
    cf_template_free(t);
    cf_source_free(&src);
    cf_context_free(ctx);
    free(json);
    return ok ? 0 : 1;
}
