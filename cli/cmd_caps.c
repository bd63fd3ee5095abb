/* cmd_caps.c — `chatfmt caps`: what a template can do, as JSON. */
#include "cli.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void caps_usage(FILE *to) {
    fputs("usage: chatfmt caps [options] TEMPLATE\n"
          "\n"
          "Probes TEMPLATE (a .jinja file, tokenizer_config.json, model folder, GGUF\n"
          "file or built-in name) by rendering small conversations through it, and\n"
          "prints what it supports as JSON: system role, tools, tool calls (parallel,\n"
          "ids, responses), reasoning, documents, content forms, object arguments,\n"
          "the thinking switch, the generation prompt, the reply format, stop strings\n"
          "and whether renders are prefix-stable (KV-cache reuse across turns).\n"
          "Special tokens of the source (bos_token, eos_token, ...) are used.\n"
          "\n"
          "options:\n"
          "  --template-name NAME     pick a named template (tokenizer_config list, GGUF)\n"
          "  --tools                  pick the tool_use template of a named list\n"
          "  --no-repair              do not undo web-copy damage in the template\n"
          "  --max-steps N, ...       safety limits for each probe render (as render)\n", to);
}

int cmd_caps(int argc, char **argv) {
    cf_load_options lo;
    memset(&lo, 0, sizeof lo);
    cf_limits lim;
    memset(&lim, 0, sizeof lim);
    const char *what = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { caps_usage(stdout); return 0; }
        else if (!strcmp(a, "--template-name") && next) { lo.template_name = next; i++; }
        else if (!strcmp(a, "--tools")) lo.has_tools = true;
        else if (!strcmp(a, "--no-repair")) lo.no_repair = true;
        else if (!strncmp(a, "--max-", 6)) {
            if (cli_limit_option(a, next, &lim) <= 0) {
                fprintf(stderr, "chatfmt: error: UsageError: bad option %s\n", a);
                return 2;
            }
            i++;
        } else if (a[0] == '-' || what) {
            fprintf(stderr, "chatfmt: error: UsageError: unexpected argument %s\n", a);
            caps_usage(stderr);
            return 2;
        } else what = a;
    }
    if (!what) { caps_usage(stderr); return 2; }

    cf_error err;
    cf_source src;
    if (!cf_source_load(what, &lo, &src, &err)) {
        cli_print_error(&err, what, NULL, 0);
        return 1;
    }
    cli_print_warnings(src.warnings);
    int rc = 1;
    cf_compile_options co = {&lim, what};
    cf_template *t = cf_compile(src.text, src.len, &co, &err);
    if (!t) {
        cli_print_error(&err, what, src.text, src.len);
    } else {
        char *json = cf_caps_json(t, src.tokens, &err);
        if (!json) {
            cli_print_error(&err, what, NULL, 0);
        } else {
            bool ok = cli_write(json, strlen(json)) && cli_write("\n", 1);
            rc = ok && fflush(stdout) == 0 ? 0 : 1;
            free(json);
        }
        cf_template_free(t);
    }
    cf_source_free(&src);
    return rc;
}
