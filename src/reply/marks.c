/* marks.c — markers that need not start with '<' ([TOOL_CALLS], >>>,
 * functools[, a bare '['), matched a byte at a time with the held prefix in
 * Parser.tm_buf, as reply.c matches tags. */
#include <string.h>
#include "families.h"

bool fam_name_byte(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.' || c == ':';
}

int mark_step(Parser *p, const MarkSet *set, unsigned char c) {
    size_t k = p->tm_len;
    uint32_t alive = k ? p->tm_mask : (set->n >= 32 ? 0xFFFFFFFFu : (1u << set->n) - 1), next = 0;
    for (int t = 0; t < set->n; t++) {
        const char *m = set->marks[t];
        if (!(alive >> t & 1) || (unsigned char)m[k] != c) continue;
        if (m[k + 1] == 0) {
            p->tm_len = 0;
            return t;
        }
        next |= 1u << t;
    }
    if (!next) return TAG_MISS;
    p->tm_buf[p->tm_len++] = (char)c;
    p->tm_mask = next;
    return TAG_MORE;
}

/* Where the next byte that may start a marker is, from i (n if none). */
static size_t next_first(const MarkSet *set, const char *s, size_t i, size_t n) {
    const char *f = set->firsts;
    if (!f[0]) return n;
    if (!f[1]) {
        const char *hit = memchr(s + i, f[0], n - i);
        return hit ? (size_t)(hit - s) : n;
    }
    unsigned char a = (unsigned char)f[0], b = (unsigned char)f[1];
    unsigned char c2 = f[2] ? (unsigned char)f[2] : a, d = f[2] && f[3] ? (unsigned char)f[3] : a;
    for (; i < n; i++) {
        unsigned char x = (unsigned char)s[i];
        if (x == a || x == b || x == c2 || x == d) return i;
    }
    return n;
}

int scan_marks(Parser *p, const char *s, size_t n, size_t *pi, const MarkSet *set, TextSink put) {
    size_t i = *pi, run = i;    /* s[run..i) is text not put yet */
    while (i < n) {
        if (!p->tm_len) {
            i = next_first(set, s, i, n);
            if (i == n) break;
        }
        bool fresh = p->tm_len == 0;
        int r = mark_step(p, set, (unsigned char)s[i]);
        if (r == TAG_MORE) {
            if (fresh && i > run) put(p, s + run, i - run);   /* the text before the prefix */
            run = ++i;
            continue;
        }
        if (r >= 0) {
            if (fresh && i > run) put(p, s + run, i - run);
            *pi = i + 1;
            return r;
        }
        /* not a marker after all: the held prefix is text; s[i] is looked at again */
        uint8_t k = p->tm_len;
        p->tm_len = 0;
        if (i > run) put(p, s + run, i - run);
        put(p, p->tm_buf, k);
        run = i;
    }
    if (n > run) put(p, s + run, n - run);
    *pi = n;
    return -1;
}

int lead_marks(Parser *p, const char *s, size_t n, size_t *pi, const MarkSet *set, int content_state) {
    size_t i = *pi;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        if (!p->tm_len && is_space(c)) {
            i++;
            continue;
        }
        int r = mark_step(p, set, c);
        if (r == TAG_MORE) {
            i++;
            continue;
        }
        if (r >= 0) {
            *pi = i + 1;
            return r;
        }
        /* text: the held bytes may still begin a marker of the text state */
        char held[sizeof p->tm_buf];
        size_t k = p->tm_len;
        memcpy(held, p->tm_buf, k);
        p->tm_len = 0;
        p->state = content_state;
        if (k) p->step(p, held, k);
        break;
    }
    *pi = i;
    return -1;
}

int expect_marks(Parser *p, const char *s, size_t n, size_t *pi, const MarkSet *set) {
    size_t i = *pi;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        if (!p->tm_len && is_space(c)) {
            size_t k = i + 1;
            while (k < n && is_space((unsigned char)s[k])) k++;
            call_raw(p, s + i, k - i);
            i = k;
            continue;
        }
        int r = mark_step(p, set, c);
        if (r == TAG_MORE) {
            i++;
            continue;
        }
        *pi = r == TAG_MISS ? i : i + 1;
        return r >= 0 ? r : -2;
    }
    *pi = i;
    return -1;
}

void marks_break(Parser *p, int resume) {
    call_break(p, resume, p->tm_buf, p->tm_len);
}

void marks_accept(Parser *p, int resume) {
    char rep[sizeof p->tm_buf];
    size_t k = p->tm_len;
    memcpy(rep, p->tm_buf, k);
    p->tm_len = 0;
    call_accept(p);
    p->state = resume;
    if (k) p->step(p, rep, k);
}
