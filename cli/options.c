/* options.c — command-line options more than one subcommand reads: the
 * safety limits (--max-*) and what a reply request is made of (parse and
 * grammar take the same template, format, tools, prompt and -D options). */
#include "cli.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_limit_option(const char *opt, const char *val, cf_limits *lim) {
    struct { const char *name; int kind; void *field; } table[] = {
        {"--max-steps", 0, &lim->max_steps},
        {"--max-recursion", 1, &lim->max_recursion},
        {"--max-parse-depth", 1, &lim->max_parse_depth},
        {"--max-output", 2, &lim->max_output},
        {"--max-string", 2, &lim->max_string},
        {"--max-items", 2, &lim->max_items},
        {"--max-memory", 2, &lim->max_memory},
        {"--max-range", 1, &lim->max_range},
        {"--max-json-depth", 1, &lim->max_json_depth},
        {"--max-json-bytes", 2, &lim->max_json_bytes},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (strcmp(opt, table[i].name) != 0) continue;
        if (!val) return -1;
        char *end;
        unsigned long long v = strtoull(val, &end, 10);
        if (*end || v == 0) return -1;
        if (table[i].kind == 0) *(uint64_t *)table[i].field = v;
        else if (table[i].kind == 1) *(uint32_t *)table[i].field = v > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)v;
        else *(size_t *)table[i].field = (size_t)v;
        return 1;
    }
    return 0;
}

int cli_reply_option(int argc, char **argv, int *i, CliReplyRequest *r) {
    const char *o = argv[*i], *next = *i + 1 < argc ? argv[*i + 1] : NULL;
    if (!strcmp(o, "--reasoning-open")) {
        r->reasoning_open = true;
        return 1;
    }
    const char **slot = !strcmp(o, "--format") ? &r->format_name
                        : !strcmp(o, "--tools")  ? &r->tools_path
                        : !strcmp(o, "--prompt") ? &r->prompt_path
                                                 : NULL;
    if (slot && next) {
        *slot = argv[++*i];
        return 1;
    }
    if ((!strcmp(o, "-D") || !strcmp(o, "--define")) && next) {
        if (r->ndefines == CLI_MAX_DEFINES) {
            fprintf(stderr, "chatfmt: error: UsageError: too many -D options\n");
            return -1;
        }
        r->defines[r->ndefines++] = argv[++*i];
        return 1;
    }
    if (!strncmp(o, "--max-", 6)) {
        if (cli_limit_option(o, next, &r->lim) <= 0) {
            fprintf(stderr, "chatfmt: error: UsageError: bad option %s\n", o);
            return -1;
        }
        ++*i;
        return 1;
    }
    return 0;
}
