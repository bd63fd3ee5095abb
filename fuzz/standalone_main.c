/* standalone_main.c — a main() for the fuzz harnesses without libFuzzer:
 * runs LLVMFuzzerTestOneInput on each file named on the command line, so
 * the crash inputs kept in tests/hostile/regress/ replay through exactly
 * the fuzzed code in an ordinary (or ASan) build. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned char *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        unsigned char *grown = realloc(buf, cap *= 2);
        if (!grown) { free(buf); buf = NULL; }
        buf = grown;
    }
    fclose(f);
    *len = n;
    return buf;
}

int main(int argc, char **argv) {
    LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        size_t len;
        unsigned char *data = read_all(argv[i], &len);
        if (!data) {
            fprintf(stderr, "cannot read %s\n", argv[i]);
            return 2;
        }
        LLVMFuzzerTestOneInput(data, len);
        free(data);
    }
    printf("%d inputs replayed\n", argc - 1);
    return 0;
}
