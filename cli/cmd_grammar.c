/* cmd_grammar.c — `chatfmt grammar`: the decoding grammar for a request's
 * tools in the template's reply format (GBNF with lazy triggers for
 * llama.cpp, Lark for llguidance, an xgrammar structural tag for vLLM and
 * SGLang), or one JSON Schema as a grammar (--schema, --schema-batch). */
#include "cli.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void grammar_usage(FILE *to) {
    fputs("usage: chatfmt grammar TEMPLATE --tools FILE [options]\n"
          "       chatfmt grammar --format NAME --tools FILE [options]\n"
          "       chatfmt grammar --schema FILE|- [--syntax gbnf|lark]\n"
          "       chatfmt grammar --schema-batch FILE.jsonl|- [--syntax gbnf|lark]\n"
          "\n"
          "Print, as JSON, the grammar that constrains a model's reply to calls of the\n"
          "given tools in the template's reply format: grammar (GBNF, llama.cpp),\n"
          "grammar_lazy, grammar_triggers, preserved_tokens, additional_stops,\n"
          "structural_tag (xgrammar), lark (llguidance), warnings.\n"
          "\n"
          "options:\n"
          "  --tools FILE                    OpenAI tools array (JSON)\n"
          "  --tool-choice auto|required|none|NAME   (default auto)\n"
          "  --parallel-tool-calls true|false        (default true)\n"
          "  --emit gbnf|lark|structural-tag|all     what to fill in (default all)\n"
          "  --format NAME                   any reply format of `chatfmt formats` (overrides detection)\n"
          "  -D, --define KEY=JSON           a template variable for the prompt, e.g.\n"
          "                                  -D enable_thinking=false\n"
          "  --prompt FILE                   the rendered prompt (its end says whether\n"
          "                                  reasoning is open); instead of rendering TEMPLATE's\n"
          "  --reasoning-open                the reply starts inside reasoning\n"
          "  --schema FILE                   one JSON Schema: {\"grammar\", \"warnings\"}\n"
          "  --schema-batch FILE             one schema per line in, one such object per line out\n"
          "                                  (a schema that fails gives {\"error\": ...})\n"
          "  --syntax gbnf|lark              the grammar's spelling for --schema (default gbnf)\n"
          "  --max-string BYTES, --max-memory BYTES, --max-steps N, --max-json-depth N\n", to);
}

typedef struct GrammarArgs {
    const char *template_path, *schema_path, *batch_path;
    const char *choice, *emit, *syntax;
    bool single_call;
    CliReplyRequest req;
} GrammarArgs;

static int grammar_args(int argc, char **argv, GrammarArgs *a) {
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        int shared = cli_reply_option(argc, argv, &i, &a->req);
        if (shared < 0) return 2;
        if (shared) continue;
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            grammar_usage(stdout);
            return 1;
        } else if (!strcmp(o, "--schema") && next) {
            a->schema_path = argv[++i];
        } else if (!strcmp(o, "--schema-batch") && next) {
            a->batch_path = argv[++i];
        } else if (!strcmp(o, "--syntax") && next) {
            a->syntax = argv[++i];
        } else if (!strcmp(o, "--tool-choice") && next) {
            a->choice = argv[++i];
        } else if (!strcmp(o, "--emit") && next) {
            a->emit = argv[++i];
        } else if (!strcmp(o, "--parallel-tool-calls") && next) {
            const char *v = argv[++i];
            if (strcmp(v, "true") && strcmp(v, "false")) {
                fprintf(stderr, "chatfmt: error: UsageError: --parallel-tool-calls wants true or false\n");
                return 2;
            }
            a->single_call = !strcmp(v, "false");
        } else if (o[0] != '-' && !a->template_path) {
            a->template_path = o;
        } else {
            fprintf(stderr, "chatfmt: error: UsageError: unexpected argument '%s'\n", o);
            grammar_usage(stderr);
            return 2;
        }
    }
    if (!a->schema_path && !a->batch_path && (!a->req.tools_path || (!a->template_path && !a->req.format_name))) {
        grammar_usage(stderr);
        return 2;
    }
    return 0;
}

/* ---- the prompt's end, rendered from the template ---- */

enum { TAIL_BYTES = 256 };

/* Format (unless --format) and the generation prompt's end. 0 ok, 1 error. */
static int read_template(const GrammarArgs *a, const char *tools, size_t tools_len, cf_reply_format *fmt,
                         char *tail) {
    cf_error err;
    cf_load_options lo;
    memset(&lo, 0, sizeof lo);
    lo.has_tools = true;
    cf_source src;
    if (!cf_source_load(a->template_path, &lo, &src, &err)) {
        cli_print_error(&err, a->template_path, NULL, 0);
        return 1;
    }
    cf_compile_options co = {&a->req.lim, a->template_path};
    cf_template *t = cf_compile(src.text, src.len, &co, &err);
    /* as parse --template: by probing renders; a template that does not
     * compile: its text's signature */
    if (!a->req.format_name) *fmt = t ? cf_reply_format_of(t, src.tokens) : cf_reply_format_detect(src.text, src.len);
    if (!a->req.prompt_path) {
        cf_context *ctx = cli_probe_context(a->req.tools_path, tools, tools_len, a->req.defines, a->req.ndefines);
        cf_render_options ro;
        memset(&ro, 0, sizeof ro);
        ro.limits = &a->req.lim;
        ro.defaults = src.tokens;
        cf_result res;
        if (t && ctx && cf_render_chat(t, ctx, &ro, &res, &err)) {
            size_t k = res.len < TAIL_BYTES ? res.len : TAIL_BYTES;
            memcpy(tail, res.text + res.len - k, k);
            tail[k] = 0;
            cf_result_free(&res);
        } else if (ctx) {
            fprintf(stderr, "chatfmt: warning: cannot render the template's generation prompt (%s: %s); "
                            "reasoning may or may not come first\n",
                    cf_error_kind_name(err.kind), err.message);
        }
        cf_context_free(ctx);
    }
    cf_template_free(t);
    cf_source_free(&src);
    return 0;
}

/* ---- schemas ---- */

static bool syntax_of(const char *name, cf_grammar_syntax *out) {
    if (!name || !strcmp(name, "gbnf")) *out = CF_GRAMMAR_GBNF;
    else if (!strcmp(name, "lark")) *out = CF_GRAMMAR_LARK;
    else {
        fprintf(stderr, "chatfmt: error: UsageError: --syntax wants gbnf or lark\n");
        return false;
    }
    return true;
}

static void print_error_line(const cf_error *err) {
    printf("{\"error\": {\"type\": \"%s\", \"message\": \"", cf_error_kind_name(err->kind));
    for (const char *p = err->message; *p; p++) {
        if (*p == '"' || *p == '\\') putchar('\\');
        if ((unsigned char)*p >= 0x20) putchar(*p);
    }
    puts("\"}}");
}

static int run_schemas(const GrammarArgs *a) {
    cf_grammar_syntax syntax;
    if (!syntax_of(a->syntax, &syntax)) return 2;
    size_t len;
    char *text = cli_read_file(a->schema_path ? a->schema_path : a->batch_path, &len);
    if (!text) return 1;
    int rc = 0;
    cf_error err;
    if (a->schema_path) {
        size_t n;
        char *g = cf_schema_grammar(text, len, syntax, &a->req.lim, &n, &err);
        if (!g) {
            cli_print_error(&err, a->schema_path, NULL, 0);
            rc = 1;
        } else {
            rc = cli_write(g, n) && cli_write("\n", 1) ? 0 : 1;
            free(g);
        }
        free(text);
        return rc;
    }
    for (char *line = text; line < text + len;) {
        char *nl = memchr(line, '\n', (size_t)(text + len - line));
        size_t n = nl ? (size_t)(nl - line) : (size_t)(text + len - line);
        if (n) {
            size_t out_n;
            char *g = cf_schema_grammar(line, n, syntax, &a->req.lim, &out_n, &err);
            if (!g) print_error_line(&err);
            else {
                if (!cli_write(g, out_n) || !cli_write("\n", 1)) rc = 1;
                free(g);
            }
        }
        line += n + 1;
    }
    free(text);
    return fflush(stdout) == 0 ? rc : 1;
}

int cmd_grammar(int argc, char **argv) {
    GrammarArgs a;
    int r = grammar_args(argc, argv, &a);
    if (r) return r == 1 ? 0 : 2;
    if (a.schema_path || a.batch_path) return run_schemas(&a);

    cf_grammar_options opt;
    memset(&opt, 0, sizeof opt);
    opt.limits = &a.req.lim;
    opt.reasoning_open = a.req.reasoning_open;
    opt.single_call = a.single_call;
    if (a.req.format_name && !cf_reply_format_from_name(a.req.format_name, &opt.format)) {
        fprintf(stderr, "chatfmt: error: UsageError: unknown format '%s' (chatfmt formats lists them)\n", a.req.format_name);
        return 2;
    }
    if (!a.choice || !strcmp(a.choice, "auto")) opt.tool_choice = CF_TOOL_CHOICE_AUTO;
    else if (!strcmp(a.choice, "required")) opt.tool_choice = CF_TOOL_CHOICE_REQUIRED;
    else if (!strcmp(a.choice, "none")) opt.tool_choice = CF_TOOL_CHOICE_NONE;
    else {
        opt.tool_choice = CF_TOOL_CHOICE_NAMED;
        opt.tool_name = a.choice;
    }
    if (!a.emit || !strcmp(a.emit, "all")) opt.emit = CF_EMIT_ALL;
    else if (!strcmp(a.emit, "gbnf")) opt.emit = CF_EMIT_GBNF;
    else if (!strcmp(a.emit, "lark")) opt.emit = CF_EMIT_LARK;
    else if (!strcmp(a.emit, "structural-tag")) opt.emit = CF_EMIT_STRUCTURAL_TAG;
    else {
        fprintf(stderr, "chatfmt: error: UsageError: --emit wants gbnf, lark, structural-tag or all\n");
        return 2;
    }
    size_t tools_len;
    char *tools = cli_read_file(a.req.tools_path, &tools_len);
    if (!tools) return 1;
    opt.tools_json = tools;
    int rc = 1;
    char tail[TAIL_BYTES + 1] = "";
    if (a.template_path && read_template(&a, tools, tools_len, &opt.format, tail) != 0) goto done;
    if (a.req.prompt_path) {
        size_t plen;
        char *prompt = cli_read_file(a.req.prompt_path, &plen);
        if (!prompt) goto done;
        size_t k = plen < TAIL_BYTES ? plen : TAIL_BYTES;
        memcpy(tail, prompt + plen - k, k);
        tail[k] = 0;
        free(prompt);
    }
    opt.prompt_tail = tail[0] ? tail : NULL;
    cf_error err;
    size_t n;
    char *out = cf_tool_grammar(&opt, &n, &err);
    if (!out) {
        cli_print_error(&err, a.req.tools_path, NULL, 0);
        goto done;
    }
    rc = cli_write(out, n) && cli_write("\n", 1) && fflush(stdout) == 0 ? 0 : 1;
    free(out);
done:
    free(tools);
    return rc;
}
