/* quote_memo.c — dataset mode's output quoting, reusing the quoted form of
 * an earlier output's beginning (quote_memo.h).
 *
 * Outputs are compared and quoted in pieces of PIECE bytes. A kept output
 * remembers where the quoted form of each whole piece ends, so a row whose
 * first k pieces equal a kept output's takes those quoted bytes as they
 * are. Comparing runs at memcmp's speed, a few times quoting's (a
 * template's text is full of newlines and quotes, escaped one by one). */
#include "quote_memo.h"
#include "chatfmt.h"
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum {
    MEMO_ENTRIES = 8,        /* a dataset mixes row kinds: one or two kept outputs each */
    PIECE = 256,
    COMPARE_RUN = 4096,      /* a multiple of PIECE: compared in one memcmp first */
    QUOTE_STEP = 1 << 16,    /* else quoted in steps of this, to bound the room reserved */
    MIN_KEPT = 2048,         /* shorter outputs are quoted again rather than kept */
    MAX_KEPT = 128 << 10,    /* nor longer ones (nor looked up: quoted whole) */
    MAX_KEPT_QUOTED = 256 << 10,   /* nor ones quoted longer: a worker keeps under 3.5 MiB */
    /* An output with fewer escapes than one a DENSE bytes quotes at near
     * memcpy speed, faster than comparing and copying: it is not kept, and
     * after SPARSE_RUN such outputs in a row the memo rests for REST rows
     * (quoting whole), then tries again. */
    DENSE = 32,
    SPARSE_RUN = 8,
    REST = 256
};

typedef struct Entry {
    char *raw, *quoted;      /* an output, and its quoted form without the surrounding quotes */
    size_t raw_len, raw_cap, quoted_cap;
    size_t *ends;            /* ends[k]: length of the quoted form of raw[0, k * PIECE) */
    size_t ends_cap;
    uint64_t used;           /* when it last served or was stored: the least recent goes */
} Entry;

struct QuoteMemo {
    Entry e[MEMO_ENTRIES];
    uint64_t clock;
    unsigned sparse_run, rest;
    size_t *ends;            /* the row being quoted (swapped into the entry that keeps it) */
    size_t ends_cap;
};

QuoteMemo *quote_memo_new(void) { return calloc(1, sizeof(QuoteMemo)); }

void quote_memo_free(QuoteMemo *m) {
    if (!m) return;
    for (int k = 0; k < MEMO_ENTRIES; k++) {
        free(m->e[k].raw);
        free(m->e[k].quoted);
        free(m->e[k].ends);
    }
    free(m->ends);
    free(m);
}

/* *p holds at least need elements of size each; false when memory is out. */
static bool grow(void **p, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return true;
    size_t c = need + need / 8;   /* (some room for the next, a little longer) */
    void *q = realloc(*p, c * size);
    if (!q) return false;
    *p = q;
    *cap = c;
    return true;
}

/* Whole pieces a and b have in common from their start, within n bytes. */
static size_t common_pieces(const char *a, const char *b, size_t n) {
    size_t i = 0;
    while (i + COMPARE_RUN <= n && memcmp(a + i, b + i, COMPARE_RUN) == 0) i += COMPARE_RUN;
    while (i + PIECE <= n && memcmp(a + i, b + i, PIECE) == 0) i += PIECE;
    return i / PIECE;
}

/* The kept output sharing the most whole pieces with s (NULL: none shares one). */
static Entry *best_match(QuoteMemo *m, const char *s, size_t n, size_t *pieces) {
    Entry *best = NULL;
    size_t most = 0;
    for (int k = 0; k < MEMO_ENTRIES; k++) {
        Entry *e = &m->e[k];
        size_t within = e->raw_len < n ? e->raw_len : n;
        /* to beat the best so far it must share the piece after that one:
         * checked first, which spares comparing the prefix they all share */
        size_t probe = most * PIECE;
        if (probe + PIECE > within || memcmp(e->raw + probe, s + probe, PIECE) != 0) continue;
        size_t p = common_pieces(e->raw, s, within);
        if (p > most) best = e, most = p;
    }
    *pieces = most;
    return best;
}

/* Keep the output s (its quoted form at q, ends in m->ends) in t. */
static void keep(QuoteMemo *m, Entry *t, const char *s, size_t n, const char *q, size_t qlen) {
    if (!grow((void **)&t->raw, &t->raw_cap, n, 1) || !grow((void **)&t->quoted, &t->quoted_cap, qlen ? qlen : 1, 1)) {
        t->raw_len = 0;   /* (forgotten: the output was right anyway) */
        t->used = 0;
        return;
    }
    memcpy(t->raw, s, n);
    memcpy(t->quoted, q, qlen);
    t->raw_len = n;
    size_t *ends = t->ends, cap = t->ends_cap;
    t->ends = m->ends;
    t->ends_cap = m->ends_cap;
    m->ends = ends;
    m->ends_cap = cap;
    t->used = m->clock;
}

void quote_memo_put(QuoteMemo *m, OutBuf *b, const char *s, size_t n) {
    if (!m || n < 2 * PIECE || n > MAX_KEPT || (m->rest && m->rest--)) {
        ob_json_string(b, s, n);
        return;
    }
    m->clock++;
    size_t pieces;
    Entry *best = best_match(m, s, n, &pieces);
    size_t done = pieces * PIECE, copied = best ? best->ends[pieces] : 0;
    /* A row mostly like a kept output is not kept besides it: the kept
     * ones stay one per kind of row (a short chat does not push out the
     * long tool list it shares only a preamble with). Its rest is quoted
     * in one piece. */
    bool keeping = n >= MIN_KEPT && !(best && done * 2 >= n) &&
                   grow((void **)&m->ends, &m->ends_cap, n / PIECE + 1, sizeof(size_t));
    if (!ob_reserve(b, copied + 2)) return;   /* (both quotes) */
    b->p[b->len++] = '"';
    size_t body = b->len;
    if (best) {
        memcpy(b->p + b->len, best->quoted, copied);
        b->len += copied;
        best->used = m->clock;
        if (keeping) memcpy(m->ends, best->ends, (pieces + 1) * sizeof(size_t));
    } else if (keeping) {
        m->ends[0] = 0;
    }
    for (size_t at = done; at < n;) {
        size_t len = n - at;
        if (len > (keeping ? PIECE : QUOTE_STEP)) len = keeping ? PIECE : QUOTE_STEP;
        if (!ob_reserve(b, 6 * len + 2)) return;
        /* cf_json_quote puts quotes around the piece: the opening one goes
         * over the byte before it, which is put back */
        char *o = b->p + b->len - 1, before = *o;
        b->len += cf_json_quote(s + at, len, o, 6 * len + 2) - 2;
        *o = before;
        at += len;
        if (keeping && at % PIECE == 0) m->ends[at / PIECE] = b->len - body;
    }
    size_t qlen = b->len - body;
    b->p[b->len++] = '"';   /* (in the room of the last piece's closing quote) */
    if (!keeping || qlen > MAX_KEPT_QUOTED) return;
    if ((qlen - n) * DENSE < n) {
        if (++m->sparse_run == SPARSE_RUN) m->sparse_run = 0, m->rest = REST;
        return;
    }
    m->sparse_run = 0;
    Entry *t = &m->e[0];   /* the least recently used (never used: 0) */
    for (int k = 1; k < MEMO_ENTRIES; k++)
        if (m->e[k].used < t->used) t = &m->e[k];
    keep(m, t, s, n, b->p + body, qlen);
}
