/* check.h — the counting check C tests share. check(ok, fmt, ...) counts a
 * pass, or a failure it prints as "FAIL: <message>" on stderr, and returns
 * ok; check_summary() prints the "N passed, N failed" line run_tests.sh
 * reads and gives the exit status. Header-only: each test is one file. */
#ifndef CF_TESTS_CHECK_H
#define CF_TESTS_CHECK_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static int passed, failed;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static bool check(bool ok, const char *fmt, ...) {
    if (ok) {
        passed++;
        return true;
    }
    failed++;
    fputs("FAIL: ", stderr);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return false;
}

static int check_summary(void) {
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

#endif
