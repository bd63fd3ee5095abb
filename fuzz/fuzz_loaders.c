/* fuzz_loaders.c — libFuzzer: any bytes as a template source file (GGUF,
 * tokenizer_config.json or a plain template: cf_source_load tells them
 * apart by content), then as text through the web-copy repair.
 * Byte 0 bit 0 sets has_tools (picks "tool_use" among named templates). */
#include "fuzz_common.h"
#include <stdio.h>
#include <unistd.h>

static char path[64];
static int fd = -1;

static void remove_file(void) { unlink(path); }

/* In memory (/dev/shm) where there is one: on a disk the file's rewrite on
 * every input made the run wait on the disk. The loader is given
 * /proc/self/fd/N, not the file's random name: the names it compares reach
 * libFuzzer's comparison traces, and make fuzz-ci must try the same inputs
 * every run. */
int LLVMFuzzerInitialize(int *argc, char ***argv) {
    strcpy(path, "/dev/shm/chatfmt-fuzz-loader-XXXXXX");
    fd = mkstemp(path);
    if (fd < 0) {
        strcpy(path, "/tmp/chatfmt-fuzz-loader-XXXXXX");
        fd = mkstemp(path);
    }
    if (fd < 0) abort();
    char by_fd[32];
    snprintf(by_fd, sizeof by_fd, "/proc/self/fd/%d", fd);
    if (access(by_fd, R_OK) == 0) {
        unlink(path);
        strcpy(path, by_fd);
    } else {
        atexit(remove_file);
    }
    return 0;
}

static void write_file(const uint8_t *data, size_t size) {
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size) abort();
}

static void check_source(const cf_source *s) {
    FUZZ_CHECK(s->text && s->text[s->len] == 0 && s->tokens && s->kind);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    cf_load_options lo;
    memset(&lo, 0, sizeof lo);
    lo.has_tools = size && (data[0] & 1);
    cf_error err;
    cf_source src;

    write_file(data, size);
    if (cf_source_load(path, &lo, &src, &err)) {
        check_source(&src);
        cf_source_free(&src);
    } else {
        fuzz_check_error(&err);
    }

    if (cf_source_from_text((const char *)data, size, &lo, &src, &err)) {
        check_source(&src);
        cf_source_free(&src);
    } else {
        fuzz_check_error(&err);
    }
    return 0;
}
