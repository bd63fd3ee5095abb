/* test_json_strings.c — the block-at-a-time string paths of json.c (reader
 * scan, writer runs, one-pass quoting, cf_json_quote) against a byte-by-byte
 * model of Python's json string rules (json.encoder's ESCAPE / ESCAPE_ASCII
 * tables: '"' '\\' \n \r \t \b \f named, other bytes < 0x20 as \u00XX, and with
 * ensure_ascii DEL and every non-ASCII code point as \uXXXX, surrogate pairs
 * above the BMP). Strings are random mixes of plain text, every byte class
 * the paths treat specially and multi-byte UTF-8, at every length and
 * alignment around the 8- and 16-byte blocks. (test_json checks the same
 * functions against Python itself on fixed cases.) */
#include "chatfmt.h"
#include "engine/json.h"
#include "engine/unicode.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

static void check(bool ok, const char *what, const char *s, size_t n) {
    if (ok) {
        passed++;
        return;
    }
    if (failed++ < 10) {
        printf("FAIL %s on %zu bytes:", what, n);
        for (size_t i = 0; i < n && i < 64; i++) printf(" %02x", (unsigned char)s[i]);
        printf("\n");
    }
}

/* ---- the model ---- */

static size_t model_quote(const char *s, size_t n, bool ensure_ascii, char *out) {
    static const char hex[] = "0123456789abcdef";
    size_t o = 0, i = 0;
    out[o++] = '"';
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        const char *named = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\n' ? "\\n" : c == '\r' ? "\\r"
                          : c == '\t' ? "\\t" : c == '\b' ? "\\b" : c == '\f' ? "\\f" : NULL;
        uint32_t units[2];
        int nunits = 0;
        if (named) {
            memcpy(out + o, named, 2);
            o += 2;
            i++;
            continue;
        }
        if (c < 0x20 || (ensure_ascii && c == 0x7f)) {
            units[nunits++] = c;
            i++;
        } else if (ensure_ascii && c >= 0x80) {
            uint32_t cp = utf8_next(s, n, &i);
            if (cp >= 0x10000) {
                units[nunits++] = 0xD800 | ((cp - 0x10000) >> 10);
                units[nunits++] = 0xDC00 | ((cp - 0x10000) & 0x3FF);
            } else {
                units[nunits++] = cp;
            }
        } else {
            out[o++] = (char)c;
            i++;
            continue;
        }
        for (int k = 0; k < nunits; k++) {
            out[o++] = '\\';
            out[o++] = 'u';
            for (int shift = 12; shift >= 0; shift -= 4) out[o++] = hex[(units[k] >> shift) & 15];
        }
    }
    out[o++] = '"';
    return o;
}

/* ---- random strings ---- */

static uint64_t rng = 88172645463325252ULL;
static unsigned next_rand(unsigned bound) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % bound);
}

static size_t random_string(char *out, size_t want) {
    static const char *const pieces[] = {
        "a", "b", "Z", " ", "~", "0", "\"", "\\", "\n", "\r", "\t", "\b", "\f", "\x01", "\x1f", "\x7f",
        "/", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xe2\x80\xa8", "\xc2\x80",
    };
    size_t n = 0;
    /* mostly plain text, so that long clean runs and blocks occur */
    while (n < want) {
        const char *p = next_rand(4) ? &"abcdefgh"[next_rand(8)] : pieces[next_rand(sizeof pieces / sizeof *pieces)];
        size_t len = next_rand(4) ? 1 : strlen(p);
        if (len > strlen(p)) len = strlen(p);
        if ((unsigned char)p[0] >= 0x80) len = strlen(p);   /* whole UTF-8 sequences */
        if (n + len > want + 3) break;
        memcpy(out + n, p, len);
        n += len;
    }
    return n;
}

/* ---- the checks ---- */

/* The 32 bytes after a literal are as memset left them: no block store
 * reached past its end (the shuffle quoting stores 16 bytes at a time). */
static bool untouched(const char *p) {
    for (int k = 0; k < 32; k++)
        if (p[k] != 0x55) return false;
    return true;
}

static void check_string(Rt *rt, const char *s, size_t n) {
    static char want[6 * 4096 + 2], got[6 * 4096 + 2];
    for (int ea = 0; ea < 2; ea++) {
        size_t wn = model_quote(s, n, ea, want);
        /* json_write_string: into a buffer with room (one pass) and without (pieces) */
        for (size_t cap = 1; cap <= 6 * n + 64; cap = cap * 4 + 7) {
            StrBuf sb;
            sb_init(rt, &sb, cap);
            json_write_string(&sb, s, n, ea);
            check(sb.len == wn && memcmp(sb.p, want, wn) == 0, ea ? "json_write_string ascii" : "json_write_string", s, n);
        }
        /* the reader gives back the same string and code point count */
        Value v = json_parse(rt, want, wn);
        check(v.type == VT_STR && v.u.s->len == n && memcmp(v.u.s->data, s, n) == 0, "json_parse", s, n);
        check(v.type == VT_STR && (size_t)v.u.s->nchars == utf8_count(s, n), "json_parse nchars", s, n);
        /* json_plain_run: up to the first byte the model escapes */
        size_t run = 0;
        while (run < n && model_quote(s + run, 1, ea, got) == 3 && got[1] == s[run]) run++;
        if (ea) {   /* a non-ASCII byte is escaped even when the model saw it as a sequence */
            size_t k = 0;
            while (k < run && (unsigned char)s[k] < 0x7f) k++;
            run = k;
        }
        check(json_plain_run(s, n, ea) == run, "json_plain_run", s, n);
    }
    size_t wn = model_quote(s, n, false, want);
    check(json_quoted_len(s, n) == wn, "json_quoted_len", s, n);
    memset(got, 0x55, wn + 32);
    check(json_quote_to(got, s, n) == wn && memcmp(got, want, wn) == 0 && untouched(got + wn), "json_quote_to", s, n);
    size_t caps[] = {0, wn - 1, wn, wn + 1, 6 * n + 2};
    for (size_t k = 0; k < sizeof caps / sizeof *caps; k++) {
        memset(got, 0x55, 6 * n + 34);
        size_t r = cf_json_quote(s, n, got, caps[k]);
        bool fits = wn <= caps[k];
        check(r == wn && (!fits || memcmp(got, want, wn) == 0) && untouched(got + (fits ? wn : 0)), "cf_json_quote", s, n);
    }
}

int main(void) {
    Arena arena;
    arena_init(&arena, 0);
    jmp_buf jb;
    cf_error err;
    Rt rt;
    memset(&rt, 0, sizeof rt);
    rt.arena = &arena;
    rt.jb = &jb;
    rt.err = &err;
    limits_resolve(&rt.lim);
    if (setjmp(jb)) {
        printf("FAIL: unexpected error: %s\n", err.message);
        return 1;
    }
    static char s[4200];
    /* every length up to 80 at every offset, then longer strings */
    for (int round = 0; round < 40; round++) {
        for (size_t want = 0; want <= 80; want++) {
            char *at = s + round % 3;   /* alignment */
            check_string(&rt, at, random_string(at, want));
        }
        arena_release(&arena);
        arena_init(&arena, 0);
    }
    for (int k = 0; k < 200; k++) {
        size_t n = random_string(s, 200 + next_rand(3800));
        check_string(&rt, s, n);
        arena_release(&arena);
        arena_init(&arena, 0);
    }
    /* one of each byte the paths flag, alone, at every position of 40 */
    for (int c = 0; c < 0x80; c++) {
        for (size_t at = 0; at < 40; at++) {
            memset(s, 'x', 40);
            s[at] = (char)c;
            check_string(&rt, s, 40);
        }
        arena_release(&arena);
        arena_init(&arena, 0);
    }
    /* sparse text (prompts: an escape every few dozen bytes), where the
     * writer steps 64 bytes: a quote, a newline and a \u00XX control at
     * every position of 200 bytes (across both 32-byte halves of a step and
     * the tail after the last step), then a few escapes at random places */
    static const char sparse[] = {'"', '\n', '\x01', '\\'};
    for (size_t c = 0; c < sizeof sparse; c++) {
        for (size_t at = 0; at < 200; at++) {
            memset(s, 'x', 200);
            s[at] = sparse[c];
            check_string(&rt, s, 200);
        }
        arena_release(&arena);
        arena_init(&arena, 0);
    }
    for (int k = 0; k < 3000; k++) {
        size_t n = 96 + next_rand(400), escapes = 1 + next_rand(6);
        memset(s, 'y', n);
        for (size_t e = 0; e < escapes; e++) s[next_rand((unsigned)n)] = sparse[next_rand(sizeof sparse)];
        check_string(&rt, s + k % 3, n - k % 3);
        if (k % 100 == 99) {
            arena_release(&arena);
            arena_init(&arena, 0);
        }
    }
    arena_release(&arena);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
