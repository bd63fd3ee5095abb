/* main.c — the chatfmt command: dispatch to subcommands, shared helpers. */
#include "cli.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

char *cli_read_file(const char *path, size_t *len) {
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "chatfmt: error: IOError: cannot open %s: %s\n", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    for (;;) {
        if (!buf) break;
        size_t k = fread(buf + n, 1, cap - n, f);
        n += k;
        if (n < cap) break;
        char *nb = realloc(buf, cap * 2 + 1);
        if (!nb) { free(buf); buf = NULL; break; }
        buf = nb;
        cap *= 2;
    }
    bool failed = f != stdin ? ferror(f) : false;
    if (f != stdin) fclose(f);
    if (!buf || failed) {
        free(buf);
        fprintf(stderr, "chatfmt: error: IOError: cannot read %s\n", path);
        return NULL;
    }
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}

void cli_print_error(const cf_error *err, const char *file, const char *src, size_t srclen) {
    fprintf(stderr, "chatfmt: error: %s: %s", cf_error_kind_name(err->kind), err->message);
    if (err->line > 0) {
        fprintf(stderr, " (%s:%d:%d)\n", file ? file : "<template>", err->line, err->column);
        if (src) {
            /* print the offending source line and a caret under the column */
            int line = 1;
            size_t i = 0;
            while (i < srclen && line < err->line) { if (src[i] == '\n') line++; i++; }
            size_t e = i;
            while (e < srclen && src[e] != '\n' && src[e] != '\r') e++;
            if (line == err->line && e - i < 400) {
                fprintf(stderr, "  %.*s\n  ", (int)(e - i), src + i);
                for (int c = 1; c < err->column && i + (size_t)c - 1 < e; c++)
                    fputc(src[i + (size_t)c - 1] == '\t' ? '\t' : ' ', stderr);
                fputs("^\n", stderr);
            }
        }
    } else {
        fputc('\n', stderr);
    }
}

void cli_print_warnings(const char *notes) {
    while (notes && *notes) {
        const char *nl = strchr(notes, '\n');
        size_t n = nl ? (size_t)(nl - notes) : strlen(notes);
        if (n) fprintf(stderr, "chatfmt: warning: %.*s\n", (int)n, notes);
        notes += n + (nl ? 1 : 0);
    }
}

bool cli_write(const char *p, size_t n) {
    return fwrite(p, 1, n, stdout) == n;
}

static void usage(FILE *to) {
    fputs("usage: chatfmt <command> [options]\n"
          "\n"
          "Render LLM chat templates exactly like Hugging Face transformers, and parse\n"
          "model replies back into OpenAI messages.\n"
          "\n"
          "commands:\n"
          "  render          render a template with a context (chat mode by default)\n"
          "  parse           parse a model reply into an assistant message\n"
          "  caps            probe what a template supports (JSON)\n"
          "  grammar         the decoding grammar for a request's tools (GBNF, Lark, structural tag)\n"
          "  formats         list the reply formats parse reads, with an example each\n"
          "  list-templates  list the built-in templates\n"
          "  repair          print a web-copied template with its damage undone\n"
          "\n"
          "Run 'chatfmt <command> --help' for a command's options.\n", to);
}

int main(int argc, char **argv) {
    if (argc < 2) { usage(stderr); return 2; }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) { usage(stdout); return 0; }
    if (!strcmp(cmd, "--version")) { printf("chatfmt %s\n", CHATFMT_VERSION); return 0; }
    if (!strcmp(cmd, "render")) return cmd_render(argc - 1, argv + 1);
    if (!strcmp(cmd, "parse")) return cmd_parse(argc - 1, argv + 1);
    if (!strcmp(cmd, "list-templates")) return cmd_list_templates(argc - 1, argv + 1);
    if (!strcmp(cmd, "repair")) return cmd_repair(argc - 1, argv + 1);
    if (!strcmp(cmd, "caps")) return cmd_caps(argc - 1, argv + 1);
    if (!strcmp(cmd, "grammar")) return cmd_grammar(argc - 1, argv + 1);
    if (!strcmp(cmd, "formats")) return cmd_formats(argc - 1, argv + 1);
    fprintf(stderr, "chatfmt: error: UsageError: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
}

/* The probe conversation's context: one user turn, a generation prompt,
 * the tools and the -D variables. NULL after printing an error. */
cf_context *cli_probe_context(const char *tools_path, const char *tools, size_t tools_len,
                              const char *const *defines, int ndefines) {
    static const char probe[] =
        "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"add_generation_prompt\":true}";
    cf_error err;
    cf_context *ctx = cf_context_from_json(probe, sizeof probe - 1, &err);
    if (!ctx) return NULL;
    if (tools && !cf_context_set_json(ctx, "tools", tools, tools_len, &err)) {
        cli_print_error(&err, tools_path, NULL, 0);
        cf_context_free(ctx);
        return NULL;
    }
    for (int k = 0; k < ndefines; k++) {
        const char *d = defines[k], *eq = strchr(d, '=');
        char key[256];
        size_t kl = eq ? (size_t)(eq - d) : 0;
        if (!eq || kl >= sizeof key) {
            fprintf(stderr, "chatfmt: error: UsageError: -D wants KEY=JSON, got '%s'\n", d);
            cf_context_free(ctx);
            return NULL;
        }
        memcpy(key, d, kl);
        key[kl] = 0;
        /* not JSON: the text as a string, as a shell user means it */
        if (!cf_context_set_json(ctx, key, eq + 1, strlen(eq + 1), &err) &&
            !cf_context_set_string(ctx, key, eq + 1, strlen(eq + 1))) {
            cf_context_free(ctx);
            return NULL;
        }
    }
    return ctx;
}
