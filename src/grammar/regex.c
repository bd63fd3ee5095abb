/* regex.c — the subset of JSON Schema `pattern` regexes (ECMA-262) that
 * becomes grammar: literals and escapes (\. \/ \\ \n \t \r \f \v \uXXXX),
 * classes [...] and [^...] with ranges and \d \w \s inside, . \d \w \s
 * \D \W \S, groups (...) and (?:...), alternation |, quantifiers * + ?
 * {m} {m,} {m,n} (lazy forms accept the same strings), ^ at the start and
 * $ at the end (an unanchored side accepts any text there, as a search
 * does). Anything else — lookarounds, backreferences, \b, anchors in the
 * middle, named groups — makes the caller relax the pattern.
 *
 * The grammar matches the JSON string's *text*, so a pattern character is
 * matched as json.dumps(ensure_ascii=False) spells it ('"' as \", controls
 * as escapes); '.' and negated classes accept any JSON character. */
#include "json_schema.h"

typedef struct Rx {
    Gram *g;
    const char *p, *end;
    int depth;
    bool bad;
} Rx;

enum { RX_MAX_LEN = 4096, RX_MAX_DEPTH = 64 };

static uint32_t any_char_rule(Gram *g) {
    uint32_t id = gram_rule_find(g, "char");
    if (id != UINT32_MAX) return id;
    /* the same definition as json_schema.c's (whichever asks first makes it) */
    id = gram_rule_new(g, "char", 4);
    GExpr *plain = gx_class(g, true, (const GRange[]){{'"', '"'}, {'\\', '\\'}, {0, 0x1F}}, 3);
    GExpr *esc = gx_seq(g, gx_litz(g, "\\"),
                        gx_alt(g, gx_chars(g, false, "\"\\/bfnrt"),
                               gx_seq(g, gx_litz(g, "u"), gx_rep(g, gx_chars(g, false, "0-9a-fA-F"), 4, 4))));
    gram_rule_set(g, id, gx_alt(g, plain, esc));
    return id;
}

/* One code point as its JSON string text. */
static GExpr *json_char(Gram *g, uint32_t cp) {
    char buf[8];
    if (cp == '"') return gx_litz(g, "\\\"");
    if (cp == '\\') return gx_litz(g, "\\\\");
    if (cp < 0x20) {
        const char *short_esc = cp == '\n' ? "\\n" : cp == '\t' ? "\\t" : cp == '\r' ? "\\r" : cp == '\f' ? "\\f" : cp == '\b' ? "\\b" : NULL;
        if (short_esc) return gx_litz(g, short_esc);
        static const char HEX[] = "0123456789abcdef";
        char u[7] = {'\\', 'u', '0', '0', HEX[cp >> 4], HEX[cp & 15], 0};
        return gx_litz(g, u);
    }
    StrBuf sb;
    sb_init(g->rt, &sb, 8);
    sb_put_cp(&sb, cp);
    memcpy(buf, sb.p, sb.len);
    return gx_lit(g, buf, sb.len);
}

static uint32_t next_cp(Rx *r) {
    const unsigned char *s = (const unsigned char *)r->p;
    uint32_t c = s[0];
    int n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if (r->p + n > r->end) n = 1;
    if (n > 1) {
        c &= n == 2 ? 0x1F : n == 3 ? 0x0F : 0x07;
        for (int i = 1; i < n; i++) c = (c << 6) | (s[i] & 0x3F);
    }
    r->p += n;
    return c;
}

typedef struct Set { GRange r[64]; size_t n; bool negated; } Set;

static void set_add(Rx *rx, Set *s, uint32_t lo, uint32_t hi) {
    if (s->n >= 64) {
        rx->bad = true;
        return;
    }
    s->r[s->n++] = (GRange){lo, hi};
}

/* \d \w \s (and their negations, which only stand alone) into s */
static bool class_escape(Rx *rx, uint32_t c, Set *s) {
    switch (c) {
    case 'd': set_add(rx, s, '0', '9'); return true;
    case 'w': set_add(rx, s, '0', '9'); set_add(rx, s, 'a', 'z'); set_add(rx, s, 'A', 'Z'); set_add(rx, s, '_', '_'); return true;
    case 's': set_add(rx, s, ' ', ' '); set_add(rx, s, '\t', '\r'); return true;
    default: return false;
    }
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* A single-character escape after '\': its code point, or UINT32_MAX. */
static uint32_t escape_cp(Rx *rx, uint32_t c) {
    switch (c) {
    case 'n': return '\n';
    case 't': return '\t';
    case 'r': return '\r';
    case 'f': return '\f';
    case 'v': return '\v';
    case '0': return 0;
    case 'u':
        if (rx->end - rx->p >= 4) {
            uint32_t v = 0;
            for (int i = 0; i < 4; i++) {
                int h = hexval(rx->p[i]);
                if (h < 0) return UINT32_MAX;
                v = v * 16 + (uint32_t)h;
            }
            rx->p += 4;
            return v;
        }
        return UINT32_MAX;
    default:
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return UINT32_MAX;
        return c;   /* \. \/ \\ \( ... */
    }
}

/* The JSON text of one character of a set. */
static GExpr *set_expr(Rx *rx, const Set *s) {
    Gram *g = rx->g;
    GList alts = {0};
    if (s->negated) {
        /* anything outside the set: raw characters, or any escape (relaxed) */
        GRange ex[70];
        size_t n = 0;
        for (size_t i = 0; i < s->n; i++) ex[n++] = s->r[i];
        ex[n++] = (GRange){'"', '"'};
        ex[n++] = (GRange){'\\', '\\'};
        ex[n++] = (GRange){0, 0x1F};
        gl_push(g, &alts, gx_class(g, true, ex, n));
        gl_push(g, &alts, gx_seq(g, gx_litz(g, "\\"),
                                 gx_alt(g, gx_chars(g, false, "\"\\/bfnrt"),
                                        gx_seq(g, gx_litz(g, "u"), gx_rep(g, gx_chars(g, false, "0-9a-fA-F"), 4, 4)))));
        return gl_alt(g, &alts);
    }
    GRange raw[70];
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++) {
        uint32_t lo = s->r[i].lo, hi = s->r[i].hi;
        /* split out what JSON escapes: controls, '"', '\\' */
        for (uint32_t c = lo; c <= hi && c < 0x20; c++) gl_push(g, &alts, json_char(g, c));
        if (lo < 0x20) lo = 0x20;
        if (lo > hi) continue;
        uint32_t cut[2] = {'"', '\\'};
        for (int k = 0; k < 2; k++)
            if (lo <= cut[k] && cut[k] <= hi) gl_push(g, &alts, json_char(g, cut[k]));
        /* [lo, hi] minus '"' (0x22) and '\\' (0x5C) */
        uint32_t a = lo;
        for (int k = 0; k < 2; k++) {
            if (cut[k] >= a && cut[k] <= hi) {
                if (cut[k] > a && n < 70) raw[n++] = (GRange){a, cut[k] - 1};
                a = cut[k] + 1;
            }
        }
        if (a <= hi && n < 70) raw[n++] = (GRange){a, hi};
    }
    if (n) gl_push(g, &alts, gx_class(g, false, raw, n));
    GExpr *e = gl_alt(g, &alts);
    if (!e) rx->bad = true;
    return e;
}

static GExpr *parse_alt(Rx *rx);

static GExpr *parse_class(Rx *rx) {
    Set s = {.n = 0, .negated = false};
    if (rx->p < rx->end && *rx->p == '^') {
        s.negated = true;
        rx->p++;
    }
    bool first = true;
    while (rx->p < rx->end && (*rx->p != ']' || first)) {
        first = false;
        uint32_t c = next_cp(rx);
        if (c == '\\') {
            if (rx->p >= rx->end) break;
            uint32_t e = next_cp(rx);
            if (class_escape(rx, e, &s)) continue;
            if (e == 'b') c = '\b';
            else if ((c = escape_cp(rx, e)) == UINT32_MAX) {
                rx->bad = true;
                return NULL;
            }
        } else if (c == '[') {   /* POSIX classes and set operations: not in the subset */
            if (rx->p < rx->end && *rx->p == ':') {
                rx->bad = true;
                return NULL;
            }
        }
        uint32_t hi = c;
        if (rx->p + 1 < rx->end && rx->p[0] == '-' && rx->p[1] != ']') {
            rx->p++;
            hi = next_cp(rx);
            if (hi == '\\') {
                if (rx->p >= rx->end) break;
                if ((hi = escape_cp(rx, next_cp(rx))) == UINT32_MAX) {
                    rx->bad = true;
                    return NULL;
                }
            }
            if (hi < c) {
                rx->bad = true;
                return NULL;
            }
        }
        set_add(rx, &s, c, hi);
    }
    if (rx->p >= rx->end) {
        rx->bad = true;
        return NULL;
    }
    rx->p++;   /* ']' */
    return set_expr(rx, &s);
}

static GExpr *parse_atom(Rx *rx) {
    Gram *g = rx->g;
    uint32_t c = next_cp(rx);
    switch (c) {
    case '(': {
        if (rx->p < rx->end && *rx->p == '?') {
            if (rx->end - rx->p >= 2 && rx->p[1] == ':') rx->p += 2;
            else {
                rx->bad = true;
                return NULL;
            }
        }
        if (++rx->depth > RX_MAX_DEPTH) {
            rx->bad = true;
            return NULL;
        }
        GExpr *e = parse_alt(rx);
        rx->depth--;
        if (rx->p >= rx->end || *rx->p != ')') {
            rx->bad = true;
            return NULL;
        }
        rx->p++;
        return e;
    }
    case '[':
        return parse_class(rx);
    case '.':
        return gx_ref(g, any_char_rule(g));
    case '\\': {
        if (rx->p >= rx->end) {
            rx->bad = true;
            return NULL;
        }
        uint32_t e = next_cp(rx);
        Set s = {.n = 0, .negated = false};
        if (class_escape(rx, e, &s)) return set_expr(rx, &s);
        if (e == 'D' || e == 'W' || e == 'S') {
            class_escape(rx, e - 'A' + 'a', &s);
            s.negated = true;
            return set_expr(rx, &s);
        }
        uint32_t cp = escape_cp(rx, e);
        if (cp == UINT32_MAX) {
            rx->bad = true;
            return NULL;
        }
        return json_char(g, cp);
    }
    case '^': case '$': case ')': case '|': case '*': case '+': case '?': case '{':
        rx->bad = true;   /* an anchor inside, or a quantifier with nothing before it */
        return NULL;
    default:
        return json_char(g, c);
    }
}

static bool read_uint(Rx *rx, uint32_t *out) {
    const char *start = rx->p;
    uint64_t v = 0;
    while (rx->p < rx->end && *rx->p >= '0' && *rx->p <= '9') {
        v = v * 10 + (uint64_t)(*rx->p++ - '0');
        if (v > 1000000) v = 1000000;
    }
    *out = (uint32_t)v;
    return rx->p > start;
}

static GExpr *parse_seq(Rx *rx) {
    Gram *g = rx->g;
    GList items = {0};
    while (rx->p < rx->end && *rx->p != '|' && *rx->p != ')' && !rx->bad) {
        if (*rx->p == '$' && rx->p + 1 == rx->end) break;   /* the end anchor */
        GExpr *atom = parse_atom(rx);
        if (rx->bad || !atom) return NULL;
        uint32_t min = 1, max = 1;
        if (rx->p < rx->end) {
            char q = *rx->p;
            if (q == '*' || q == '+' || q == '?') {
                rx->p++;
                min = q == '+' ? 1 : 0;
                max = q == '?' ? 1 : GREP_INF;
            } else if (q == '{') {
                const char *save = rx->p++;
                if (read_uint(rx, &min)) {
                    max = min;
                    if (rx->p < rx->end && *rx->p == ',') {
                        rx->p++;
                        if (!read_uint(rx, &max)) max = GREP_INF;
                    }
                    if (rx->p < rx->end && *rx->p == '}') rx->p++;
                    else {
                        rx->bad = true;
                        return NULL;
                    }
                    if (max != GREP_INF && max < min) {
                        rx->bad = true;
                        return NULL;
                    }
                } else rx->p = save + 1, min = max = 1, rx->bad = true;
            }
            if (rx->p < rx->end && *rx->p == '?' && (min != 1 || max != 1)) rx->p++;   /* lazy: same strings */
        }
        if (min > GRAM_MAX_COUNT) {
            gram_warn(g, "a regex repetition above %d is relaxed", GRAM_MAX_COUNT);
            min = GRAM_MAX_COUNT;
        }
        if (max != GREP_INF && max > GRAM_MAX_COUNT) {
            gram_warn(g, "a regex repetition above %d is relaxed", GRAM_MAX_COUNT);
            max = GREP_INF;
        }
        if (max == 0) continue;
        gl_push(g, &items, gx_rep(g, atom, min, max));
    }
    GExpr *e = gl_seq(g, &items);
    return e;
}

static GExpr *parse_alt(Rx *rx) {
    Gram *g = rx->g;
    GList alts = {0};
    bool empty_branch = false;
    for (;;) {
        GExpr *s = parse_seq(rx);
        if (rx->bad) return NULL;
        if (s) gl_push(g, &alts, s);
        else empty_branch = true;
        if (rx->p < rx->end && *rx->p == '|') {
            rx->p++;
            continue;
        }
        break;
    }
    GExpr *e = gl_alt(g, &alts);
    if (e && empty_branch) e = gx_opt(g, e);
    if (!e) {
        /* "()" or "a|": an empty match inside; kept only as an optional part */
        rx->bad = rx->depth == 0 ? false : rx->bad;
    }
    return e;
}

GExpr *regex_to_string_body(Gram *g, const char *pattern, size_t n) {
    if (n > RX_MAX_LEN) return NULL;
    Rx rx = {g, pattern, pattern + n, 0, false};
    bool anchored_start = n && pattern[0] == '^';
    if (anchored_start) rx.p++;
    bool anchored_end = n > 1 && pattern[n - 1] == '$' && pattern[n - 2] != '\\';
    /* top-level alternation under one anchor would anchor only one branch */
    GExpr *body = parse_alt(&rx);
    if (rx.bad || rx.p != rx.end - (anchored_end ? 1 : 0)) return NULL;
    if (anchored_start || anchored_end) {
        int depth = 0;
        for (const char *p = pattern; p < pattern + n; p++) {
            if (*p == '\\') p++;
            else if (*p == '[') {
                while (p < pattern + n && *p != ']') p += *p == '\\' ? 2 : 1;
            } else if (*p == '(') depth++;
            else if (*p == ')') depth--;
            else if (*p == '|' && depth == 0) return NULL;
        }
    }
    GExpr *free_text = gx_rep(g, gx_ref(g, any_char_rule(g)), 0, GREP_INF);
    return gx_seq(g, anchored_start ? NULL : free_text, body, anchored_end ? NULL : gx_rep(g, gx_ref(g, any_char_rule(g)), 0, GREP_INF));
}
