/* cmd_formats.c — `chatfmt formats`: every reply format with a one-line
 * example of what a model writes in it. */
#include <stdio.h>
#include <string.h>
#include "cli.h"

int cmd_formats(int argc, char **argv) {
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs("usage: chatfmt formats\n"
              "List the reply formats `chatfmt parse --format NAME` reads, one a line:\n"
              "its name, then an example of a reply in it (R reasoning, C content, f a tool,\n"
              "k/v an argument). `chatfmt caps TEMPLATE` says which one a template uses.\n",
              stdout);
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "chatfmt: error: UsageError: formats takes no arguments (got '%s')\n", argv[1]);
        return 2;
    }
    for (int f = 0; f < CF_REPLY_FORMAT_COUNT; f++)
        printf("%-15s %s\n", cf_reply_format_name((cf_reply_format)f),
               cf_reply_format_example((cf_reply_format)f));
    return 0;
}
