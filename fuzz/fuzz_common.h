/* fuzz_common.h — shared by the libFuzzer harnesses in fuzz/: tight limits
 * (a hostile input must stop quickly, so the fuzzer keeps its pace) and the
 * invariant checks. A broken invariant traps, which libFuzzer reports as a
 * crash with the input saved. */
#ifndef CF_FUZZ_COMMON_H
#define CF_FUZZ_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "chatfmt.h"

#define FUZZ_CHECK(cond) do { if (!(cond)) __builtin_trap(); } while (0)

static inline cf_limits fuzz_limits(void) {
    cf_limits l;
    memset(&l, 0, sizeof l);
    l.max_steps = 200000;
    l.max_recursion = 100;
    l.max_output = (size_t)1 << 20;
    l.max_string = (size_t)1 << 20;
    l.max_items = 100000;
    l.max_memory = (size_t)64 << 20;
    l.max_range = 10000;
    l.max_json_bytes = (size_t)1 << 20;
    return l;
}

/* Compile a harness's fixed template under fuzz_limits() (into *limits). */
static inline cf_template *fuzz_compile(const char *text, size_t len, const char *name, cf_limits *limits) {
    cf_error err;
    *limits = fuzz_limits();
    cf_compile_options co = {limits, name};
    cf_template *t = cf_compile(text, len, &co, &err);
    if (!t) abort();
    return t;
}

/* A failed call must say what kind of error it was, in a terminated
 * message (which may be empty, as Python's str(e) of raise_exception('')). */
static inline void fuzz_check_error(const cf_error *err) {
    FUZZ_CHECK(err->kind != CF_OK);
    FUZZ_CHECK(memchr(err->message, 0, sizeof err->message) != NULL);
}

#endif
