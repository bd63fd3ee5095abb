/* cmd_templates.c — `chatfmt list-templates` (the built-in templates) and
 * `chatfmt repair` (a template source's text with web-copy damage undone). */
#include "cli.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool wants_help(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return true;
    }
    return false;
}

int cmd_list_templates(int argc, char **argv) {
    if (wants_help(argc, argv)) {
        puts("usage: chatfmt list-templates\n"
             "\n"
             "Prints the names of the built-in templates, one per line. Any of them can be\n"
             "given where a command takes a TEMPLATE (a path by that name wins).");
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "chatfmt: error: UsageError: list-templates takes no arguments\n");
        return 2;
    }
    for (const char *const *name = cf_builtin_names(); *name; name++) puts(*name);
    return fflush(stdout) == 0 ? 0 : 1;
}

static void repair_usage(FILE *to) {
    fputs("usage: chatfmt repair [--template-name NAME] [--tools] TEMPLATE|-\n"
          "\n"
          "Prints the template text with web-copy damage undone (line numbers glued to\n"
          "each line, markdown table rows '| ... | |', a model hub page's header lines);\n"
          "what was repaired goes to stderr. TEMPLATE is anything a command accepts (a\n"
          "file, tokenizer_config.json, model folder, GGUF file, built-in name), or -\n"
          "for standard input. A template whose <tags> were stripped as HTML cannot be\n"
          "repaired; it is printed as it is, with a warning.\n"
          "\n"
          "options:\n"
          "  --template-name NAME  pick a named template (tokenizer_config list, GGUF)\n"
          "  --tools               pick the template used when tools are given (tool_use)\n", to);
}

/* Each warning line to stderr as "chatfmt: LINE". */
static void print_notes(const char *notes) {
    while (notes && *notes) {
        const char *nl = strchr(notes, '\n');
        int n = nl ? (int)(nl - notes) : (int)strlen(notes);
        fprintf(stderr, "chatfmt: %.*s\n", n, notes);
        notes += n + (nl != NULL);
    }
}

int cmd_repair(int argc, char **argv) {
    cf_load_options opt = {0};
    const char *what = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            repair_usage(stdout);
            return 0;
        } else if (!strcmp(a, "--template-name") && i + 1 < argc) {
            opt.template_name = argv[++i];
        } else if (!strcmp(a, "--tools")) {
            opt.has_tools = true;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "chatfmt: error: UsageError: unknown option '%s'\n", a);
            repair_usage(stderr);
            return 2;
        } else if (!what) {
            what = a;
        } else {
            fprintf(stderr, "chatfmt: error: UsageError: repair takes one TEMPLATE\n");
            return 2;
        }
    }
    if (!what) {
        repair_usage(stderr);
        return 2;
    }
    cf_source src;
    cf_error err;
    bool ok;
    if (!strcmp(what, "-")) {
        size_t len;
        char *text = cli_read_file(what, &len);
        if (!text) return 1;
        ok = cf_source_from_text(text, len, &opt, &src, &err);
        free(text);
    } else {
        ok = cf_source_load(what, &opt, &src, &err);
    }
    if (!ok) {
        cli_print_error(&err, what, NULL, 0);
        return 1;
    }
    print_notes(src.warnings);
    if (!src.warnings || !strstr(src.warnings, "repaired:")) fputs("chatfmt: nothing to repair\n", stderr);
    bool written = cli_write(src.text, src.len) && fflush(stdout) == 0;
    cf_source_free(&src);
    return written ? 0 : 1;
}
