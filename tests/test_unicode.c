/* test_unicode.c — unicode.c against Python 3.11 (tests/unicode_cases.h,
 * from tests/gen_unicode_cases.py).
 *
 *   test_unicode          sampled code points + UTF-8 checks; "N passed, N failed"
 *   test_unicode --dump   one line per code point, for the exhaustive check:
 *       ./test_unicode --dump > /tmp/ucd.txt
 *       python3 tests/gen_unicode_cases.py --check-dump /tmp/ucd.txt */
#include <stdio.h>
#include <string.h>
#include "engine/unicode.h"

#include "unicode_cases.h"

static int passed, failed;

static void check(int ok, const char *what, const char *detail) {
    if (ok) {
        passed++;
        return;
    }
    if (failed < 40) printf("FAIL %s: %s\n", what, detail);
    failed++;
}

typedef bool (*Predicate)(uint32_t);
static const Predicate predicates[] = {
    uc_isspace, uc_isalpha, uc_isdecimal, uc_isdigit, uc_isnumeric, uc_isalnum,
    uc_isupper, uc_islower, uc_istitle, uc_iscased, uc_iscaseignorable, uc_isprintable,
    uc_isidstart, uc_isidcontinue, uc_islinebreak,
};

typedef int (*Mapping)(uint32_t, uint32_t[3]);
static const Mapping mappings[] = {uc_toupper, uc_tolower, uc_totitle, uc_casefold};

/* The code point's line in the generator's format. */
static void describe(uint32_t cp, char *out, size_t size) {
    size_t n = (size_t)snprintf(out, size, "%x ", (unsigned)cp);
    for (size_t i = 0; i < sizeof predicates / sizeof *predicates; i++)
        out[n++] = predicates[i](cp) ? '1' : '0';
    for (size_t m = 0; m < 4; m++) {
        uint32_t mapped[3];
        int k = mappings[m](cp, mapped);
        for (int j = 0; j < k; j++)
            n += (size_t)snprintf(out + n, size - n, "%s%x", j ? "." : " ", (unsigned)mapped[j]);
    }
    out[n] = '\0';
}

static void test_utf8_cases(void) {
    for (size_t i = 0; i < sizeof utf8_cases / sizeof *utf8_cases; i++) {
        size_t bad = 0;
        bool ok = utf8_validate(utf8_cases[i].bytes, utf8_cases[i].len, &bad);
        long got = ok ? -1 : (long)bad;
        char detail[64];
        snprintf(detail, sizeof detail, "case %zu: expected %ld got %ld", i, utf8_cases[i].bad,
                 got);
        check(got == utf8_cases[i].bad, "utf8_validate", detail);
    }
}

/* Every scalar value survives encode -> validate -> decode, and the string
 * helpers agree on a buffer holding all of them. */
static void test_utf8_roundtrip(void) {
    static char buf[0x110000 * 4];
    size_t n = 0, count = 0, bad_cps = 0;
    for (uint32_t cp = 0; cp < 0x110000; cp++) {
        if (cp >= 0xD800 && cp < 0xE000) continue;
        char one[4];
        int len = utf8_encode(cp, one);
        size_t i = 0;
        if (!utf8_validate(one, (size_t)len, NULL) || utf8_next(one, (size_t)len, &i) != cp ||
            i != (size_t)len || utf8_prev(one, (size_t)len) != 0)
            bad_cps++;
        memcpy(buf + n, one, (size_t)len);
        n += (size_t)len;
        count++;
    }
    char detail[64];
    snprintf(detail, sizeof detail, "%zu code points fail", bad_cps);
    check(bad_cps == 0, "utf8 encode/decode round trip", detail);
    check(utf8_validate(buf, n, NULL), "utf8_validate(all scalars)", "rejected");
    check(utf8_count(buf, n) == count, "utf8_count(all scalars)", "wrong count");
    /* offsets of a few indices, cross-checked by walking with utf8_next */
    size_t ks[] = {0, 1, 127, 128, 2047, 2048, 55295, 55296, 65535, count - 1, count};
    for (size_t j = 0; j < sizeof ks / sizeof *ks; j++) {
        size_t want = 0;
        for (size_t k = 0; k < ks[j]; k++) utf8_next(buf, n, &want);
        snprintf(detail, sizeof detail, "index %zu", ks[j]);
        check(utf8_offset(buf, n, ks[j]) == want, "utf8_offset", detail);
    }
}

static void test_code_points(void) {
    for (size_t i = 0; i < sizeof cp_cases / sizeof *cp_cases; i++) {
        unsigned cp = 0;
        sscanf(cp_cases[i], "%x", &cp);
        char got[128], detail[300];
        describe(cp, got, sizeof got);
        snprintf(detail, sizeof detail, "\n  want %s\n  got  %s", cp_cases[i], got);
        check(strcmp(got, cp_cases[i]) == 0, "code point", detail);
    }
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--dump") == 0) {
        char line[128];
        for (uint32_t cp = 0; cp < 0x110000; cp++) {
            if (cp >= 0xD800 && cp < 0xE000) continue;
            describe(cp, line, sizeof line);
            puts(line);
        }
        return 0;
    }
    (void)predicate_names;
    test_utf8_cases();
    test_utf8_roundtrip();
    test_code_points();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
