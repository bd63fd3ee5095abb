/* cli.h — shared helpers of the chatfmt command-line tool. Each subcommand
 * lives in its own cli/cmd_*.c file and is registered in cli/main.c. */
#ifndef CF_CLI_H
#define CF_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include "chatfmt.h"

/* Read a whole file ("-" = stdin). Returns malloc'd NUL-terminated buffer or
 * NULL (and prints "chatfmt: error: ..." to stderr). */
char *cli_read_file(const char *path, size_t *len);
/* Print "chatfmt: error: KIND: message (file:line:col)" plus the source line
 * and a caret when line/col are known. src may be NULL. */
void cli_print_error(const cf_error *err, const char *file, const char *src, size_t srclen);
/* Print newline-separated notes, each as "chatfmt: warning: NOTE". */
void cli_print_warnings(const char *notes);
/* The probe conversation parse and grammar render for the prompt's end: one
 * user turn, a generation prompt, the tools (may be NULL) and -D KEY=JSON
 * variables. NULL after printing an error. */
cf_context *cli_probe_context(const char *tools_path, const char *tools, size_t tools_len,
                              const char *const *defines, int ndefines);
/* Write all bytes to stdout; false on I/O error. */
bool cli_write(const char *p, size_t n);
/* Parse a --max-* option into lim (cli/options.c): 1 if consumed (with
 * its value), 0 if not a limit option, -1 on a bad value. */
int cli_limit_option(const char *opt, const char *val, cf_limits *lim);

enum { CLI_MAX_DEFINES = 64 };
/* What `parse` and `grammar` both read: the reply format (or the template's
 * rendered prompt that picks it), the tools and the safety limits. */
typedef struct CliReplyRequest {
    const char *format_name, *tools_path, *prompt_path;
    const char *defines[CLI_MAX_DEFINES];   /* -D KEY=JSON, as given */
    int ndefines;
    bool reasoning_open;
    cf_limits lim;
} CliReplyRequest;
/* argv[*i] as one of those options (--format, --tools, --prompt, -D,
 * --reasoning-open, --max-*): 1 consumed (*i moved past its value), 0 not
 * one of them, -1 a usage error (printed). */
int cli_reply_option(int argc, char **argv, int *i, CliReplyRequest *r);

int cmd_render(int argc, char **argv);      /* cli/cmd_render.c */
int cmd_parse(int argc, char **argv);       /* cli/cmd_parse.c (replies) */
int cmd_list_templates(int argc, char **argv); /* cli/cmd_templates.c (loaders) */
int cmd_repair(int argc, char **argv);      /* cli/cmd_templates.c (loaders) */
int cmd_caps(int argc, char **argv);        /* cli/cmd_caps.c */
int cmd_grammar(int argc, char **argv);     /* cli/cmd_grammar.c (grammars) */
int cmd_formats(int argc, char **argv);     /* cli/cmd_formats.c (replies) */
/* `chatfmt render TEMPLATE --jsonl IN.jsonl ...`: dataset mode (cli/cmd_dataset.c);
 * argv as given to cmd_render. */
int cmd_dataset(int argc, char **argv);

#endif
