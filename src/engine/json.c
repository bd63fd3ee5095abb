/* json.c — strict JSON reader (error messages as Python's json module) and
 * a writer byte-identical to Python's json.dumps. */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json.h"
#include "json_reuse.h"
#include "unicode.h"

/* ======================================================================
 * Reader
 * ====================================================================== */

Str *json_str_carve_slow(Rt *rt, StrCarver *c, const char *p, size_t len) {
    if (len > CARVE_BLOCK / 8 || len > rt->lim.max_string) return str_new(rt, p, len);   /* (the limit throws there) */
    c->at = rt_alloc(rt, CARVE_BLOCK);
    c->end = c->at + CARVE_BLOCK;
    return json_str_carve(rt, c, p, len);
}

enum { RECENT_BITS = 7, STACK_INLINE = 128, OPENED_INLINE = 16 };

/* What a container's JsonSource needs from when it opened. */
typedef struct Opened { size_t start, mark, items; size_t deepest; } Opened;

typedef struct Parser {
    Rt *rt;
    const unsigned char *s;   /* document, after any UTF-8 BOM */
    size_t n;
    size_t base;              /* bytes skipped before s (the BOM) */
    size_t unpaired_at;       /* first lone surrogate escape, or SIZE_MAX */
    size_t end;               /* where the string or number just read ends */
    /* Items of the open arrays/objects, copied into exact-size containers
     * when each closes (no growth garbage in the arena); each container's
     * items follow a marker that remembers the enclosing one. */
    Value *stack;
    size_t cap;
    size_t max_short;         /* strings up to this long take the inline path */
    /* Short strings seen so far (keys mostly): documents repeat them
     * thousands of times, and a shared Str also keeps its cached hash. */
    Str *recent[1 << RECENT_BITS];
    /* The same for keys, each resolved once to its known Str (see
     * known_keys.c) with its hash cached, so that building a dict does
     * neither again for every occurrence. */
    Str *recent_keys[1 << RECENT_BITS];
    StrCarver carver;
    /* JsonSource: the text is a copy the values may point into (NULL: too
     * big to keep), and a count of what json.dumps(ensure_ascii=False)
     * would write otherwise (other spacing, escapes, numbers, a repeated
     * key): a container is kept verbatim when it did not move. */
    const char *kept_text;
    size_t not_verbatim;
    struct Opened *opened;    /* per open container (by depth) */
    size_t opened_cap;
    /* json_parse_reusing: the cache, the references taken from it, and the
     * slot of the member value being read when it did not match */
    cf_json_cache *reuse;
    ReusedValue **held;
    int *nheld;
    ReuseSlot *watch;
    bool text_outlives;       /* s stays unchanged while the values live: JsonSource points into it */
    /* json_parse_line_reusing: a '\n' is no whitespace but where the
     * document's line ends, and any error is only "not this way" (the
     * caller reads the line again as a document of its own) */
    bool line_mode;
    size_t top_items, top_deepest;   /* the top value's, when it is complete */
    size_t line_end;          /* line_mode: where the '\n' after the document is */
    /* Which keys came after each key (and the value after it), for the
     * next key to be matched by its bytes rather than looked up ("guessing
     * keys" below). Holds known keys only (they live for good): the cache's
     * table, kept across documents, or own_guesses (zeroed when used). */
    Str **key_guesses;
    Str *own_guesses[JSON_KEY_GUESS_WAYS << JSON_KEY_GUESS_BITS];
    /* Not zeroed: the first items and containers of a document are held
     * here, not in a buffer allocated for each document. */
    Value stack_inline[STACK_INLINE];
    struct Opened opened_inline[OPENED_INLINE];
} Parser;

/* Documents up to this size are copied for their JsonSources (requests and
 * dataset rows are a few KB; the copy costs a memcpy, and no more than the
 * document again in memory). */
#define JSON_SOURCE_MAX ((size_t)1 << 20)

/* \uXXXX (at u_pos, the 'u') for code point cp: json.dumps(ensure_ascii=
 * False) spells only the controls without a short escape this way, in
 * lower case. */
static inline bool verbatim_u_escape(const unsigned char *u_pos, uint32_t cp) {
    return cp < 0x20 && cp != '\b' && cp != '\t' && cp != '\n' && cp != '\f' && cp != '\r' &&
           !(u_pos[4] >= 'A' && u_pos[4] <= 'F');
}


/* 1: bytes that end a run of plain string content; 2: non-ASCII. */
#define HI2 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2
static const unsigned char STRING_BYTE[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    ['"'] = 1, ['\\'] = 1,
    [0x80] = HI2, HI2, HI2, HI2, HI2, HI2, HI2, HI2,
};

static bool is_ws(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/* newline_ws false: a '\n' ends the whitespace (a JSON Lines row's end). */
static inline size_t skip_ws(const unsigned char *s, size_t n, size_t i, bool newline_ws) {
    /* the usual cases: no whitespace, or the one space of ", " and ": " */
    if (i < n && s[i] > ' ') return i;
    if (i + 1 < n && s[i] == ' ' && s[i + 1] > ' ') return i + 1;
    while (i < n && is_ws(s[i]) && (newline_ws || s[i] != '\n')) i++;
    return i;
}

/* Python decodes the whole document before parsing, so an invalid byte
 * anywhere is reported as UnicodeDecodeError with the codec's wording. */
static _Noreturn void unicode_fail(Parser *ps, size_t off) {
    const unsigned char *s = ps->s;
    unsigned c = s[off];
    size_t abs = ps->base + off;
    ps->rt->err->offset = abs;
    if (c < 0xC2 || c > 0xF4) {
        rt_throw(ps->rt, CF_ERR_UNICODE,
                 "'utf-8' codec can't decode byte 0x%02x in position %zu: invalid start byte", c, abs);
    }
    size_t len = c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    unsigned lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
    unsigned hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
    size_t k = 1;
    while (k < len && off + k < ps->n) {
        unsigned b = s[off + k];
        if (k == 1 ? (b < lo || b > hi) : (b & 0xC0) != 0x80) break;
        k++;
    }
    const char *reason = off + k >= ps->n ? "unexpected end of data" : "invalid continuation byte";
    if (k == 1) {
        rt_throw(ps->rt, CF_ERR_UNICODE, "'utf-8' codec can't decode byte 0x%02x in position %zu: %s",
                 c, abs, reason);
    }
    rt_throw(ps->rt, CF_ERR_UNICODE, "'utf-8' codec can't decode bytes in position %zu-%zu: %s", abs,
             abs + k - 1, reason);
}

static void check_utf8(Parser *ps, size_t start, size_t end) {
    size_t bad;
    if (!utf8_validate((const char *)ps->s + start, end - start, &bad)) unicode_fail(ps, start + bad);
}

/* JSONDecodeError "msg: line L column C (char N)", positions in code points
 * as Python counts them. */
static _Noreturn void json_fail(Parser *ps, size_t pos, const char *msg) {
    if (ps->line_mode) rt_throw(ps->rt, CF_ERR_JSON, "not one JSON document on the line");   /* (read again) */
    check_utf8(ps, 0, ps->n);
    const char *s = (const char *)ps->s;
    size_t line = 1, line_start = 0;
    for (size_t i = 0; i < pos; i++)
        if (s[i] == '\n') line++, line_start = i + 1;
    size_t chars = utf8_count(s, pos);
    size_t column = utf8_count(s + line_start, pos - line_start) + 1;
    ps->rt->err->offset = ps->base + pos;
    rt_throw(ps->rt, CF_ERR_JSON, "%s: line %zu column %zu (char %zu)", msg, line, column, chars);
}

/* An array that starts in the parser's own storage (inline, inline_size
 * bytes) and moves to the heap when it first outgrows it: twice the room,
 * *cap updated (the value stack and the open containers grow so). */
static void *grow_from_inline(Rt *rt, void *items, const void *inline_items, size_t inline_size, size_t *cap,
                              size_t item_size) {
    size_t grown = *cap * 2;
    if (items == inline_items) {
        items = rt_alloc(rt, grown * item_size);
        memcpy(items, inline_items, inline_size);
    } else {
        items = rt_realloc(rt, items, *cap * item_size, grown * item_size);
    }
    *cap = grown;
    return items;
}

/* Room for at least one more item at top. */
static NOINLINE Value *stack_grow(Parser *ps) {
    ps->stack = grow_from_inline(ps->rt, ps->stack, ps->stack_inline, sizeof ps->stack_inline, &ps->cap, sizeof(Value));
    return ps->stack;
}

/* ---- scanning strings a block of bytes at a time ----
 * scan_block(p, extra) flags the bytes of the SCAN_BYTES at p that JSON
 * text must treat specially: '"', '\\' and control bytes (< 0x20), plus
 * with SCAN_HIGH bytes >= 0x80 (the reader counts non-ASCII), with
 * SCAN_ASCII bytes >= 0x7F (what ensure_ascii escapes). scan_first(mask) is
 * the index of the first flagged byte; mask & (mask - 1) drops it. SSE2
 * (every x86-64) takes 16 bytes a step, else 8 in a 64-bit word
 * (-DCF_NO_SIMD forces that, to test it). */
enum { SCAN_PLAIN = 0, SCAN_HIGH = 1, SCAN_ASCII = 2 };

#if defined(__SSE2__) && defined(__GNUC__) && !defined(CF_NO_SIMD)
#include <emmintrin.h>
#define SCAN_BYTES 16
typedef unsigned ScanMask;

static inline ScanMask scan_block(const unsigned char *p, int extra) {
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')), _mm_cmpeq_epi8(x, _mm_set1_epi8('\\')));
    hit = _mm_or_si128(hit, _mm_cmpeq_epi8(_mm_and_si128(x, _mm_set1_epi8((char)0xE0)), _mm_setzero_si128()));
    if (extra == SCAN_ASCII) hit = _mm_or_si128(hit, _mm_cmpeq_epi8(x, _mm_set1_epi8(0x7F)));
    ScanMask m = (ScanMask)_mm_movemask_epi8(hit);
    if (extra != SCAN_PLAIN) m |= (ScanMask)_mm_movemask_epi8(x);   /* the high bit of each byte */
    return m;
}

static inline unsigned scan_first(ScanMask m) { return (unsigned)__builtin_ctz(m); }
#else
#define SCAN_BYTES 8
typedef uint64_t ScanMask;

/* The high bit of each flagged byte. Exact: no carry crosses bytes. */
static inline ScanMask scan_block(const unsigned char *p, int extra) {
    const uint64_t ones = 0x0101010101010101ULL, lows = 0x7f7f7f7f7f7f7f7fULL, highs = ~lows;
    uint64_t x;
    memcpy(&x, p, 8);
    uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');
    uint64_t not_quote = ((q & lows) + lows) | q;
    uint64_t not_backslash = ((b & lows) + lows) | b;
    uint64_t not_control = ((x & lows) + ones * 0x60) | x;
    uint64_t hit = ~(not_quote & not_backslash & not_control);
    if (extra == SCAN_HIGH) hit |= x;
    if (extra == SCAN_ASCII) hit |= x | ((x & lows) + ones);   /* >= 0x80, or 0x7F */
    return hit & highs;
}

/* Index (in memory order) of the first byte flagged in a nonzero mask. */
static inline unsigned scan_first(ScanMask m) {
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return (unsigned)__builtin_ctzll(m) >> 3;
#elif defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return (unsigned)__builtin_clzll(m) >> 3;
#else
    unsigned char b[8];
    memcpy(b, &m, 8);
    unsigned k = 0;
    while (!b[k]) k++;
    return k;
#endif
}
#endif

/* Advance over plain string content from i: stops at a quote, backslash,
 * control character or the end. Notes non-ASCII content and counts its
 * continuation bytes (for the code point count). */
static size_t scan_plain(const Parser *ps, size_t i, size_t *continuation, bool *non_ascii) {
    const unsigned char *s = ps->s;
    size_t n = ps->n;
    for (;;) {
        for (; i + SCAN_BYTES <= n; i += SCAN_BYTES) {
            ScanMask m = scan_block(s + i, SCAN_HIGH);
            if (m) {
                i += scan_first(m);
                break;
            }
        }
        while (i < n && !STRING_BYTE[s[i]]) i++;
        if (i >= n || STRING_BYTE[s[i]] == 1) return i;
        *non_ascii = true;
        for (; i < n && s[i] >= 0x80; i++) *continuation += (s[i] & 0xC0) == 0x80;
    }
}

static int hex_value(unsigned char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static bool is_hex4(const unsigned char *p) {
    return hex_value(p[0]) >= 0 && hex_value(p[1]) >= 0 && hex_value(p[2]) >= 0 && hex_value(p[3]) >= 0;
}

static uint32_t hex4(const unsigned char *p) {
    return (uint32_t)(hex_value(p[0]) << 12 | hex_value(p[1]) << 8 | hex_value(p[2]) << 4 | hex_value(p[3]));
}

/* The 4 hex digits after the 'u' at u_pos. Like CPython, at least one byte
 * must follow them (the closing quote at the very least). */
static uint32_t parse_hex4(Parser *ps, size_t u_pos) {
    if (u_pos + 5 >= ps->n || !is_hex4(ps->s + u_pos + 1)) json_fail(ps, u_pos, "Invalid \\uXXXX escape");
    return hex4(ps->s + u_pos + 1);
}

/* Decode the escape whose backslash is at i into sb; returns the position
 * after it. */
static size_t parse_escape(Parser *ps, size_t begin, size_t i, StrBuf *sb) {
    if (i + 1 >= ps->n) json_fail(ps, begin, "Unterminated string starting at");
    char c;
    switch (ps->s[i + 1]) {
    case '"': c = '"'; break;
    case '\\': c = '\\'; break;
    case '/': c = '/'; ps->not_verbatim++; break;
    case 'b': c = '\b'; break;
    case 'f': c = '\f'; break;
    case 'n': c = '\n'; break;
    case 'r': c = '\r'; break;
    case 't': c = '\t'; break;
    case 'u': {
        uint32_t cp = parse_hex4(ps, i + 1);
        size_t next = i + 6;
        if (!verbatim_u_escape(ps->s + i + 1, cp)) ps->not_verbatim++;
        if (cp >= 0xD800 && cp <= 0xDBFF && next + 6 < ps->n && ps->s[next] == '\\' &&
            ps->s[next + 1] == 'u') {
            uint32_t low = parse_hex4(ps, next + 1);
            if (low >= 0xDC00 && low <= 0xDFFF) {
                sb_put_cp(sb, 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00));
                return next + 6;
            }
        }
        /* Python keeps a lone surrogate, which UTF-8 cannot carry: refuse
         * the document, but only once any error Python reports is ruled out. */
        if (cp >= 0xD800 && cp <= 0xDFFF) {
            if (ps->unpaired_at == SIZE_MAX) ps->unpaired_at = i;
            cp = 0xFFFD;
        }
        sb_put_cp(sb, cp);
        return next;
    }
    default: json_fail(ps, i, "Invalid \\escape");
    }
    sb_putc(sb, c);
    return i + 2;
}

/* The checked path, byte for byte as Python reports: errors, limits, and
 * what the quick paths below leave to it. From the opening quote at begin;
 * sets ps->end. */
static NOINLINE Value parse_string_checked(Parser *ps, size_t begin) {
    const unsigned char *s = ps->s;
    size_t n = ps->n, run = begin + 1, continuation = 0;
    bool non_ascii = false;
    size_t i = scan_plain(ps, run, &continuation, &non_ascii);
    StrBuf sb;
    sb_init(ps->rt, &sb, i - run + 16);
    size_t chars = 0;
    for (;;) {
        if (non_ascii) check_utf8(ps, run, i);
        sb_put(&sb, (const char *)s + run, i - run);
        chars += i - run - continuation;
        if (i >= n) json_fail(ps, begin, "Unterminated string starting at");
        if (s[i] == '"') break;
        if (s[i] != '\\') json_fail(ps, i, "Invalid control character at");
        i = parse_escape(ps, begin, i, &sb);
        chars++;
        run = i;
        continuation = 0;
        non_ascii = false;
        i = scan_plain(ps, i, &continuation, &non_ascii);
    }
    ps->end = i + 1;
    Str *str = sb_to_str(&sb);
    str->nchars = (int64_t)chars;
    return v_str_of(str);
}

/* scan_block(p, SCAN_HIGH) for the reader's inline path: with SSE2, one
 * signed compare flags control bytes and bytes >= 0x80 together. */
#if SCAN_BYTES == 16
static inline ScanMask scan_special(const unsigned char *p) {
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')), _mm_cmpeq_epi8(x, _mm_set1_epi8('\\')));
    hit = _mm_or_si128(hit, _mm_cmplt_epi8(x, _mm_set1_epi8(0x20)));
    return (ScanMask)_mm_movemask_epi8(hit);
}
#else
static inline ScanMask scan_special(const unsigned char *p) { return scan_block(p, SCAN_HIGH); }
#endif

/* The high bit of each byte of the block at p (SSE2: bit k for byte k;
 * else in place), to tell non-ASCII content. */
#if SCAN_BYTES == 16
static inline ScanMask scan_high(const unsigned char *p) {
    return (ScanMask)_mm_movemask_epi8(_mm_loadu_si128((const __m128i *)(const void *)p));
}
#else
static inline ScanMask scan_high(const unsigned char *p) {
    uint64_t x;
    memcpy(&x, p, 8);
    return x & 0x8080808080808080ULL;
}
#endif

/* The first '"', '\\' or control byte from i on, or n. *high turns nonzero
 * if a byte >= 0x80 comes before it (or, harmlessly, shortly after it). */
static inline size_t scan_run(const unsigned char *s, size_t n, size_t i, ScanMask *high) {
    for (; i + SCAN_BYTES <= n; i += SCAN_BYTES) {
        *high |= scan_high(s + i);
        ScanMask m = scan_block(s + i, SCAN_PLAIN);
        if (m) return i + scan_first(m);
    }
    for (; i < n; i++) {
        if (STRING_BYTE[s[i]] == 1) return i;
        *high |= s[i] & 0x80;
    }
    return n;
}

/* Value of each simple escape's letter; 0: not one ('u' is apart). */
static const char ESCAPED[256] = {
    ['"'] = '"', ['\\'] = '\\', ['/'] = '/', ['b'] = '\b', ['f'] = '\f', ['n'] = '\n', ['r'] = '\r', ['t'] = '\t',
};

/* A string with escapes whose content starts at run, the first backslash
 * at i: decoded straight into a Str sized by its raw length (which no
 * escape's decoding exceeds), with runs copied whole. First a pass that
 * finds the closing quote; anything Python would refuse (or a string over
 * max_string) is left to the checked path, which reports it. */
static bool parse_escaped(Parser *ps, size_t run, size_t i, ScanMask high, Value *out) {
    const unsigned char *s = ps->s;
    size_t n = ps->n;
    bool wide = false;   /* a \u escape: may write non-ASCII */
    for (;;) {   /* s[i] is a backslash */
        if (i + 1 >= n) return false;
        if (s[i + 1] == 'u') {
            if (i + 6 >= n || !is_hex4(s + i + 2)) return false;
            wide = true;
            i += 6;
        } else {
            if (!ESCAPED[s[i + 1]]) return false;
            i += 2;
        }
        i = scan_run(s, n, i, &high);
        if (i >= n) return false;
        if (s[i] == '"') break;
        if (s[i] != '\\') return false;
    }
    size_t end = i, raw = end - run;
    if (raw > ps->rt->lim.max_string) return false;
    if (high) check_utf8(ps, run, end);   /* (escapes are ASCII: as run by run) */

    Str *str;
    StrCarver *c = &ps->carver;
    size_t room = (sizeof(Str) + raw + 1 + 7) & ~(size_t)7;
    bool carved = raw <= CARVE_BLOCK / 8;
    if (carved) {
        if (room > (size_t)(c->end - c->at)) {
            c->at = rt_alloc(ps->rt, CARVE_BLOCK);
            c->end = c->at + CARVE_BLOCK;
        }
        str = (Str *)(void *)c->at;
    } else {
        str = str_alloc(ps->rt, raw);
    }
    char *o = str->data;
    i = run;
    for (;;) {
        ScanMask ignored = 0;
        size_t k = scan_run(s, end, i, &ignored);   /* only backslashes before end */
        memcpy(o, s + i, k - i);
        o += k - i;
        if (k == end) break;
        if (s[k + 1] != 'u') {
            *o++ = ESCAPED[s[k + 1]];
            ps->not_verbatim += s[k + 1] == '/';   /* json.dumps leaves '/' as it is */
            i = k + 2;
            continue;
        }
        uint32_t cp = hex4(s + k + 2);
        if (!verbatim_u_escape(s + k + 1, cp)) ps->not_verbatim++;
        i = k + 6;
        if (cp >= 0xD800 && cp <= 0xDBFF && i + 6 < n && s[i] == '\\' && s[i + 1] == 'u') {
            uint32_t low = hex4(s + i + 2);   /* (checked by the first pass) */
            if (low >= 0xDC00 && low <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                i += 6;
            }
        }
        if (cp >= 0xD800 && cp <= 0xDFFF) {   /* lone: as parse_escape */
            if (ps->unpaired_at == SIZE_MAX) ps->unpaired_at = k;
            cp = 0xFFFD;
        }
        o += utf8_encode(cp, o);
    }
    size_t len = (size_t)(o - str->data);
    str->len = len;
    str->nchars = (int64_t)(high || wide ? utf8_count(str->data, len) : len);
    str->hash = 0;
    str->data[len] = '\0';
    if (carved) c->at += (sizeof(Str) + len + 1 + 7) & ~(size_t)7;
    else str = rt_realloc(ps->rt, str, sizeof(Str) + raw + 1, sizeof(Str) + len + 1);
    ps->end = end + 1;
    *out = v_str_of(str);
    return true;
}

/* A plain string up to CARVE_BLOCK / 8 bytes is copied as it is scanned:
 * each block is stored into the carver before its mask is looked at (the
 * room checked first takes a whole last block past the string's end). */
enum { COPY_SCAN_STEP = 2 * SCAN_BYTES,   /* two blocks a step, one branch */
       COPY_SCAN_MAX = CARVE_BLOCK / 8,
       COPY_SCAN_ROOM = (offsetof(Str, data) + COPY_SCAN_MAX + COPY_SCAN_STEP + 1 + 7) & ~(size_t)7 };

/* One step of copy_scan_string: copies 2 * SCAN_BYTES bytes from p to o and
 * returns the mask of the '"', '\\' and control bytes among them (bit k for
 * byte k with SSE2, else the two blocks' masks in order: see below), adding
 * their high bits to *high. */
#if SCAN_BYTES == 16
typedef unsigned StepMask;
static inline StepMask copy_scan_step(char *o, const unsigned char *p, __m128i *high) {
    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(p + 16));
    _mm_storeu_si128((__m128i *)(void *)o, a);
    _mm_storeu_si128((__m128i *)(void *)(o + 16), b);
    *high = _mm_or_si128(*high, _mm_or_si128(a, b));
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), top3 = _mm_set1_epi8((char)0xE0);
    __m128i ha = _mm_or_si128(_mm_cmpeq_epi8(a, quote), _mm_cmpeq_epi8(a, backslash));
    ha = _mm_or_si128(ha, _mm_cmpeq_epi8(_mm_and_si128(a, top3), _mm_setzero_si128()));
    __m128i hb = _mm_or_si128(_mm_cmpeq_epi8(b, quote), _mm_cmpeq_epi8(b, backslash));
    hb = _mm_or_si128(hb, _mm_cmpeq_epi8(_mm_and_si128(b, top3), _mm_setzero_si128()));
    return (StepMask)_mm_movemask_epi8(ha) | (StepMask)_mm_movemask_epi8(hb) << 16;
}
static inline unsigned step_first(StepMask m) { return (unsigned)__builtin_ctz(m); }
static inline bool step_high(__m128i high) { return _mm_movemask_epi8(high) != 0; }
#else
typedef struct StepMask { ScanMask a, b; } StepMask;
static inline StepMask copy_scan_step(char *o, const unsigned char *p, ScanMask *high) {
    memcpy(o, p, 2 * SCAN_BYTES);
    *high |= scan_high(p) | scan_high(p + SCAN_BYTES);
    StepMask m = {scan_block(p, SCAN_PLAIN), scan_block(p + SCAN_BYTES, SCAN_PLAIN)};
    return m;
}
static inline bool step_any(StepMask m) { return (m.a | m.b) != 0; }
static inline unsigned step_first(StepMask m) { return m.a ? scan_first(m.a) : SCAN_BYTES + scan_first(m.b); }
static inline bool step_high(ScanMask high) { return high != 0; }
#endif

/* The escape whose backslash is at i, inside a string copied while scanned
 * (copy_scan_string), decoded at *o: the position after it, or 0 when it is
 * anything the checked path must report (and nothing is kept). Counts what
 * json.dumps would write otherwise in *not_verbatim and notes a lone
 * surrogate's position in *unpaired, as parse_escaped does. */
static inline size_t copy_scan_escape(const unsigned char *s, size_t n, size_t i, char **o, size_t *not_verbatim,
                                      size_t *unpaired, bool *wide) {
    if (i + 1 >= n) return 0;
    unsigned char e = s[i + 1];
    if (e != 'u') {
        if (!ESCAPED[e]) return 0;
        *(*o)++ = ESCAPED[e];
        *not_verbatim += e == '/';   /* json.dumps leaves '/' as it is */
        return i + 2;
    }
    if (i + 6 >= n || !is_hex4(s + i + 2)) return 0;
    uint32_t cp = hex4(s + i + 2);
    if (!verbatim_u_escape(s + i + 1, cp)) (*not_verbatim)++;
    size_t next = i + 6;
    if (cp >= 0xD800 && cp <= 0xDBFF && next + 6 < n && s[next] == '\\' && s[next + 1] == 'u') {
        if (!is_hex4(s + next + 2)) return 0;
        uint32_t low = hex4(s + next + 2);
        if (low >= 0xDC00 && low <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            next += 6;
        }
    }
    if (cp >= 0xD800 && cp <= 0xDFFF) {   /* lone: as parse_escape */
        if (*unpaired == SIZE_MAX) *unpaired = i;
        cp = 0xFFFD;
    }
    *o += utf8_encode(cp, *o);
    *wide = true;
    return next;
}

/* The string from run (at most COPY_SCAN_MAX bytes of text, ending before
 * the last COPY_SCAN_STEP bytes of the document), carved while scanned, its
 * escapes decoded on the way (the decoded string is never longer than its
 * text, so the stores stay in the room checked first): true, its Str in
 * *out and ps->end past its closing quote. Else false, and nothing is kept
 * (a control byte, a bad escape, a string too long: the checked path). */
static inline bool copy_scan_string(Parser *ps, size_t run, Value *out) {
    StrCarver *c = &ps->carver;
    size_t n = ps->n;
    if ((size_t)(c->end - c->at) < COPY_SCAN_ROOM || n - run < COPY_SCAN_STEP) return false;
    const unsigned char *s = ps->s;
    size_t i = run, last = n - COPY_SCAN_STEP;   /* the last step's start */
    if (last > run + COPY_SCAN_MAX) last = run + COPY_SCAN_MAX;
    Str *str = (Str *)(void *)c->at;
    char *o = str->data;
    size_t not_verbatim = 0, unpaired = SIZE_MAX;
    bool wide = false;   /* a \u escape: may write non-ASCII */
#if SCAN_BYTES == 16
    __m128i high = _mm_setzero_si128();
#else
    ScanMask high = 0;
#endif
    for (;;) {
        StepMask m = copy_scan_step(o, s + i, &high);
#if SCAN_BYTES == 16
        if (!m) {
#else
        if (!step_any(m)) {
#endif
            i += COPY_SCAN_STEP;
            o += COPY_SCAN_STEP;
            if (i > last) return false;
            continue;
        }
        unsigned k = step_first(m);
        i += k;
        o += k;
        if (s[i] == '"') break;
        if (s[i] != '\\') return false;
        i = copy_scan_escape(s, n, i, &o, &not_verbatim, &unpaired, &wide);
        if (!i || i > last) return false;
    }
    size_t raw = i - run, len = (size_t)(o - str->data);
    if (raw > COPY_SCAN_MAX || raw > ps->rt->lim.max_string) return false;
    size_t chars = len;
    if (step_high(high)) check_utf8(ps, run, i);   /* (high bits of bytes past the quote too: then only a wasted check) */
    if (step_high(high) || wide) chars = utf8_count(str->data, len);
    str->len = len;
    str->nchars = (int64_t)chars;
    str->hash = 0;
    str->data[len] = '\0';
    c->at += (offsetof(Str, data) + len + 1 + 7) & ~(size_t)7;
    ps->not_verbatim += not_verbatim;
    if (unpaired != SIZE_MAX && ps->unpaired_at == SIZE_MAX) ps->unpaired_at = unpaired;
    ps->end = i + 1;
    *out = v_str_of(str);
    return true;
}

/* A string the first block did not finish (long, non-ASCII or escaped):
 * from its opening quote at begin; sets ps->end. */
static NOINLINE Value parse_string_slow(Parser *ps, size_t begin) {
    const unsigned char *s = ps->s;
    size_t n = ps->n, run = begin + 1;
    Value v;
    if (copy_scan_string(ps, run, &v)) return v;
    ScanMask high = 0;
    size_t i = scan_run(s, n, run, &high);
    if (i < n && s[i] == '"') {
        size_t len = i - run, chars = len;
        if (high) {
            check_utf8(ps, run, i);
            chars = utf8_count((const char *)s + run, len);
        }
        ps->end = i + 1;
        Str *str = json_str_carve(ps->rt, &ps->carver, (const char *)s + run, len);
        str->nchars = (int64_t)chars;
        return v_str_of(str);
    }
    if (i < n && s[i] == '\\' && parse_escaped(ps, run, i, high, &v)) return v;
    return parse_string_checked(ps, begin);
}

/* Carving a short string takes 16 data bytes, zero-padded past its
 * length (no content byte is zero): recent-table hits compare two words. */
enum { SHORT_ROOM = (offsetof(Str, data) + 16 + 7) & ~(size_t)7 };

static NOINLINE void carve_block(Parser *ps) {
    ps->carver.at = rt_alloc(ps->rt, CARVE_BLOCK);
    ps->carver.end = ps->carver.at + CARVE_BLOCK;
}

/* The first len bytes of 16: PREFIX_MASK + 16 - len. */
static const unsigned char PREFIX_MASK[32] = {
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
};

/* A key as the dict wants it: when it is a known key, that key's shared
 * Str instead (hashed when generated); else its hash cached. A long key is
 * looked for by length, not hash: add_generation_prompt, in every dataset
 * row, cost 90 cycles of FNV-1a. */
static NOINLINE Str *resolve_key(Str *key) {
    Str *known = key->len > 15 ? known_long_key(key->data, key->len) : known_key(key, str_hash(key));
    if (known) return known;
    str_hash(key);
    return key;
}

#if SCAN_BYTES == 16
/* A plain ASCII string of 16 to 31 bytes at run, whose first 16 are known
 * plain (a tool's description, a call's id): carved from its two blocks,
 * or NULL when it is anything else (longer, escaped, non-ASCII, over
 * max_string: the general path). */
enum { MEDIUM_ROOM = (offsetof(Str, data) + 2 * 16 + 7) & ~(size_t)7 };
static ALWAYS_INLINE Str *medium_string(Parser *ps, const unsigned char *s, size_t run) {
    ScanMask m = scan_special(s + run + 16);
    if (!m) return NULL;
    size_t len = 16 + scan_first(m);
    if (s[run + len] != '"' || len > ps->rt->lim.max_string) return NULL;
    if ((size_t)(ps->carver.end - ps->carver.at) < MEDIUM_ROOM) carve_block(ps);
    Str *str = (Str *)(void *)ps->carver.at;
    ps->carver.at += (offsetof(Str, data) + len + 1 + 7) & ~(size_t)7;
    _mm_storeu_si128((__m128i *)(void *)str->data, _mm_loadu_si128((const __m128i *)(const void *)(s + run)));
    _mm_storeu_si128((__m128i *)(void *)(str->data + 16),
                     _mm_loadu_si128((const __m128i *)(const void *)(s + run + 16)));
    str->len = len;
    str->nchars = (int64_t)len;
    str->hash = 0;
    str->data[len] = '\0';
    return str;
}
#endif

/* Most strings (every key, most values) are short, plain ASCII and end in
 * the first block: found in the recent table (keys: the keys' table) or
 * carved, inline. */
static ALWAYS_INLINE Value parse_string_as(Parser *ps, const unsigned char *s, size_t n, size_t *pos, bool key,
                                           uint64_t *head) {
    size_t run = *pos + 1, len = 0;
    ScanMask m = 0;
    if (run + 16 <= n) {
        m = scan_special(s + run);
#if SCAN_BYTES == 16
        Str *medium;
        if (!m && run + 2 * 16 <= n && (medium = medium_string(ps, s, run))) {   /* 16 plain bytes */
            *pos = run + medium->len + 1;
            *head = 0;
            return v_str_of(key ? resolve_key(medium) : medium);
        }
#endif
    }
    if (!m || s[run + (len = scan_first(m))] != '"' || len > ps->max_short) {
        Value v = parse_string_slow(ps, *pos);
        *pos = ps->end;
        if (key) v.u.s = resolve_key(v.u.s);
        *head = 0;
        return v;
    }
    *pos = run + len + 1;
    uint64_t k0, k1, m0, m1;
    memcpy(&k0, s + run, 8);
    memcpy(&k1, s + run + 8, 8);
    memcpy(&m0, PREFIX_MASK + 16 - len, 8);
    memcpy(&m1, PREFIX_MASK + 24 - len, 8);
    k0 &= m0;
    k1 &= m1;
    *head = k0 ^ k1;
    /* two ways a set: a document's few dozen strings collide often */
    Str **slot = &(key ? ps->recent_keys : ps->recent)[((k0 ^ k1) * 0x9E3779B97F4A7C15ULL) >> (64 - RECENT_BITS) &
                                                      ~(uint64_t)1];
    for (int way = 0; way < 2; way++) {
        Str *hit = slot[way];
        if (!hit) {
            slot += way;
            break;
        }
        uint64_t d0, d1;
        memcpy(&d0, hit->data, 8);
        memcpy(&d1, hit->data + 8, 8);
        if (d0 == k0 && d1 == k1) return v_str_of(hit);
        if (way) slot++;   /* both taken: the second goes */
    }
    if (KNOWN_SHORT_KEYS && key) {   /* (len <= max_short <= 15: the table has every such key) */
        Str *known = known_short_key(k0, k1);
        if (known) {
            *slot = known;
            return v_str_of(known);
        }
        /* not a known key: carved as it is (its hash comes when a dict needs it) */
    }
    if ((size_t)(ps->carver.end - ps->carver.at) < SHORT_ROOM) carve_block(ps);
    Str *str = (Str *)(void *)ps->carver.at;
    ps->carver.at += SHORT_ROOM;
    str->len = len;
    str->nchars = (int64_t)len;
    str->hash = 0;   /* (keys get theirs cached by the dict) */
    memcpy(str->data, &k0, 8);
    memcpy(str->data + 8, &k1, 8);
    if (key && !KNOWN_SHORT_KEYS) {   /* (big-endian hosts: by hash) */
        Str *known = resolve_key(str);
        if (known != str) ps->carver.at -= SHORT_ROOM;   /* (the carve is undone) */
        str = known;   /* (its data is zero-padded to 16 bytes too) */
    }
    *slot = str;
    return v_str_of(str);
}


/* ---- guessing keys ----
 * A document's objects repeat a few shapes (a message's role, then content
 * or reasoning_content; a tool's type, function, name...), so the key after
 * a given key is most often one of the few that came after it before. Those
 * guesses are checked by comparing their bytes with the text and the closing
 * quote after them, without finding the string's end first or looking it
 * up. Exact: a guess is a known key, whose bytes hold no quote, backslash or
 * control byte, so text matching them and then a quote is that very string;
 * and it was read before under the same limits (no longer than a string may
 * be). Keys of 32 bytes or more are not guessed. */
enum { KEY_GUESS_MAX = 31 };

/* The guesses after key prev and the value after it (its first 16 bytes
 * folded to a word when a short string, else 0). */
static inline Str **key_guess_ways(Str **table, const Str *prev, uint64_t value) {
    uint64_t h = ((uint64_t)(uintptr_t)prev ^ value) * 0x9E3779B97F4A7C15ULL;
    return table + JSON_KEY_GUESS_WAYS * (size_t)(h >> (64 - JSON_KEY_GUESS_BITS));
}

/* The guess among ways that the string at run (after its opening quote)
 * is, moved up one way; or NULL. */
static ALWAYS_INLINE Str *key_guessed(Str **ways, const unsigned char *s, size_t n, size_t run) {
    if (n - run < 2 * 16) return NULL;   /* (then any guess's bytes and quote are in the text) */
#if SCAN_BYTES == 16
    __m128i text = _mm_loadu_si128((const __m128i *)(const void *)(s + run));
#endif
    for (int w = 0; w < JSON_KEY_GUESS_WAYS; w++) {
        Str *guess = ways[w];
        if (!guess) return NULL;
        size_t len = guess->len;
        if (s[run + len] != '"') continue;
#if SCAN_BYTES == 16
        /* (a known key's data is zero-padded to 16 bytes: the load stays in it) */
        unsigned same = (unsigned)_mm_movemask_epi8(
            _mm_cmpeq_epi8(text, _mm_loadu_si128((const __m128i *)(const void *)guess->data)));
        if (len < 16) {
            if (~same & ((1u << len) - 1)) continue;
        } else {
            if (same != 0xFFFF) continue;
            __m128i tail = _mm_loadu_si128((const __m128i *)(const void *)(s + run + len - 16));
            __m128i key_tail = _mm_loadu_si128((const __m128i *)(const void *)(guess->data + len - 16));
            if (_mm_movemask_epi8(_mm_cmpeq_epi8(tail, key_tail)) != 0xFFFF) continue;
        }
#else
        if (memcmp(s + run, guess->data, len) != 0) continue;
#endif
        if (w) {
            ways[w] = ways[w - 1];
            ways[w - 1] = guess;
        }
        return guess;
    }
    return NULL;
}

/* After a key that was not guessed: a known key becomes the first guess
 * after prev (the table outlives the document's own Strs). */
static NOINLINE void key_learn(Str **ways, Str *key) {
    if (key->len > KEY_GUESS_MAX) return;
    for (int w = 0; w < JSON_KEY_GUESS_WAYS; w++)
        if (ways[w] == key) return;   /* (the text was too near its end to guess) */
    Str *known = key->len > 15 ? known_long_key(key->data, key->len) : known_key(key, str_hash(key));
    if (known != key) return;
    memmove(ways + 1, ways, (JSON_KEY_GUESS_WAYS - 1) * sizeof *ways);
    ways[0] = key;
}

/* Is the float token t (NUMBER_RE, with a '.' or an exponent) what repr()
 * writes for its value? Conservatively: no exponent, at most 15 significant
 * digits (so no shorter string reads back as the same double: DBL_DIG),
 * no trailing zero after the point but a lone one, and a value from 1e-4
 * to below 1e16, which repr writes positionally. */
static bool float_token_verbatim(const unsigned char *t, size_t len) {
    size_t i = t[0] == '-', int_start = i;
    while (i < len && is_digit(t[i])) i++;
    size_t int_len = i - int_start;
    if (i == len || t[i] != '.') return false;
    size_t frac_start = ++i;
    while (i < len && is_digit(t[i])) i++;
    size_t frac_len = i - frac_start;
    if (i != len || (frac_len > 1 && t[len - 1] == '0')) return false;
    bool frac_zero = frac_len == 1 && t[frac_start] == '0';
    if (int_len == 1 && t[int_start] == '0') {   /* 0.xxx */
        if (frac_zero) return true;
        size_t zeros = 0;
        while (t[frac_start + zeros] == '0') zeros++;
        return zeros <= 3 && frac_len - zeros <= 15;
    }
    return int_len <= 16 && int_len + (frac_zero ? 0 : frac_len) <= 15;
}

/* Python's NUMBER_RE: -?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)? — a '.' or 'e'
 * not followed by digits is left for the caller ("Extra data"). */
static NOINLINE Value parse_number(Parser *ps, size_t start) {
    const unsigned char *s = ps->s;
    size_t n = ps->n, i = start;
    if (s[i] == '-') i++;
    if (i < n && s[i] == '0') {
        i++;
    } else if (i < n && s[i] >= '1' && s[i] <= '9') {
        while (i < n && is_digit(s[i])) i++;
    } else {
        json_fail(ps, start, "Expecting value");
    }
    bool is_float = false;
    if (i + 1 < n && s[i] == '.' && is_digit(s[i + 1])) {
        i += 2;
        while (i < n && is_digit(s[i])) i++;
        is_float = true;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;
        if (j < n && (s[j] == '+' || s[j] == '-')) j++;
        if (j < n && is_digit(s[j])) {
            while (j < n && is_digit(s[j])) j++;
            i = j;
            is_float = true;
        }
    }
    ps->end = i;
    size_t len = i - start;
    /* json.dumps writes -0 as 0, and a float as its repr */
    if (is_float ? !float_token_verbatim(s + start, len) : (len == 2 && s[start] == '-' && s[start + 1] == '0'))
        ps->not_verbatim++;
    if (!is_float) {
        bool neg = s[start] == '-';
        if (len - neg <= 18) {
            int64_t v = 0;
            for (size_t k = start + neg; k < i; k++) v = v * 10 + (s[k] - '0');
            return v_int(neg ? -v : v);
        }
        return v_bigint(ps->rt, (const char *)s + start, len);
    }
    /* A short decimal without exponent (2.5, 0.001): digits m < 10^15 and k
     * after the point give m / 10^k, IEEE's correctly rounded division of
     * two exact doubles, which is what strtod reads. */
    if (len <= 17) {
        static const double P10[16] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7,
                                       1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
        uint64_t m = 0;
        int digits = 0, frac = -1;
        bool plain = true;
        for (size_t k = start + (s[start] == '-'); k < i && plain; k++) {
            if (s[k] == '.') frac = 0;
            else if (is_digit(s[k])) {
                m = m * 10 + (uint64_t)(s[k] - '0');
                digits++;
                frac += frac >= 0;
            } else plain = false;   /* an exponent */
        }
        if (plain && digits <= 15 && frac >= 0) {
            double v = (double)m / P10[frac];
            return v_float(s[start] == '-' ? -v : v);
        }
    }
    /* strtod follows LC_NUMERIC: spell the decimal point the locale's way. */
    char small[64];
    char *buf = len < sizeof small ? small : rt_alloc(ps->rt, len + 1);
    memcpy(buf, s + start, len);
    buf[len] = '\0';
    char *dot = memchr(buf, '.', len);
    const char *point = localeconv()->decimal_point;
    if (dot && point && point[0] && point[0] != '.' && !point[1]) *dot = point[0];
    return v_float(strtod(buf, NULL));
}

static _Noreturn void too_deep(Parser *ps, size_t i) {
    ps->rt->err->offset = ps->base + i;
    rt_throw(ps->rt, CF_ERR_LIMIT,
             "JSON nesting deeper than %u levels (raise it with --max-json-depth / cf_limits.max_json_depth)",
             (unsigned)ps->rt->lim.max_json_depth);
}

static bool match_word(const Parser *ps, size_t i, const char *word, size_t n) {
    return ps->n - i >= n && memcmp(ps->s + i, word, n) == 0;
}

enum { IN_TOP, IN_ARRAY, IN_OBJECT };

/* The two bytes at p as one word (separators compared at once). */
static inline uint16_t two_bytes(const unsigned char *p) {
    uint16_t w;
    memcpy(&w, p, 2);
    return w;
}

static NOINLINE void opened_grow(Parser *ps) {
    ps->opened = grow_from_inline(ps->rt, ps->opened, ps->opened_inline, sizeof ps->opened_inline, &ps->opened_cap,
                                  sizeof(Opened));
}

/* The JsonSource of a container opened as o and closed at end (its own
 * depth `own`, its deepest value at `deepest`), or NULL unless it reads
 * exactly as json.dumps would write it: no not_verbatim since it opened.
 * Its dump charges a step per value it holds, at any depth. */
static const JsonSource *container_source(Parser *ps, const Opened *o, size_t end, size_t items,
                                          size_t own, size_t deepest) {
    if (!ps->kept_text || ps->not_verbatim != o->mark) return NULL;
    JsonSource *js = rt_alloc(ps->rt, sizeof *js);
    js->text = ps->kept_text + o->start;
    js->len = end - o->start;
    js->steps = items - o->items;
    js->height = (uint32_t)(deepest - own);
    return js;
}

/* The JsonSource of a container (as container_source) written at js, which
 * has room for one, or NULL. */
static inline const JsonSource *container_source_at(Parser *ps, JsonSource *js, const Opened *o, size_t end,
                                                    size_t items, size_t own, size_t deepest) {
    if (!ps->kept_text || ps->not_verbatim != o->mark) return NULL;
    js->text = ps->kept_text + o->start;
    js->len = end - o->start;
    js->steps = items - o->items;
    js->height = (uint32_t)(deepest - own);
    return js;
}

/* The dict of the npairs (key, value) pairs at kv, as dict_from_resolved_pairs
 * makes it (a repeated key keeps its first position and takes the last
 * value), and its JsonSource: a small one (most of a document's) is one
 * allocation with its entries and its JsonSource, filled here. */
static inline Dict *close_dict(Parser *ps, const Value *kv, size_t npairs, const Opened *o, size_t end,
                               size_t items, size_t own, size_t deepest) {
    Rt *rt = ps->rt;
    if (npairs > DICT_LINEAR_MAX || npairs > rt->lim.max_items) {   /* (the limit throws there) */
        Dict *d = dict_from_resolved_pairs(rt, kv, npairs);
        if (d->len != npairs) ps->not_verbatim++;   /* a repeated key: dumps writes it once */
        dict_set_json_source(d, container_source(ps, o, end, items, own, deepest));
        return d;
    }
    Dict *d = rt_alloc(rt, sizeof *d + npairs * sizeof(DictEntry) + sizeof(JsonSource));
    DictEntry *entries = (DictEntry *)(void *)(d + 1);
    dict_init_small(d, entries, npairs);
    uint64_t seen = 0;   /* a bit of each key's hash: a key whose bit is new is new */
    size_t k = 0;
    for (; k < npairs; k++) {   /* the keys while none may repeat an earlier one */
        Str *key = kv[2 * k].u.s;   /* (resolved: a known key, or its own Str) */
        uint32_t h = key->hash ? key->hash : str_hash(key);
        uint64_t bit = (uint64_t)1 << (h & 63);
        if (seen & bit) break;
        seen |= bit;
        entries[k].key = kv[2 * k];
        entries[k].hash = h;
        entries[k].val = kv[2 * k + 1];
    }
    size_t len = k;
    for (; k < npairs; k++) {
        Str *key = kv[2 * k].u.s;
        uint32_t h = key->hash ? key->hash : str_hash(key);
        uint64_t bit = (uint64_t)1 << (h & 63);
        size_t j = len;
        if (seen & bit) {
            j = 0;
            while (j < len && !(entries[j].hash == h && str_eq(entries[j].key.u.s, key))) j++;
        }
        seen |= bit;
        if (j == len) {
            entries[len].key = kv[2 * k];
            entries[len].hash = h;
            len++;
        }
        entries[j].val = kv[2 * k + 1];
    }
    if (len != npairs) ps->not_verbatim++;
    d->len = len;
    d->json = container_source_at(ps, (JsonSource *)(void *)(entries + npairs), o, end, items, own, deepest);
    return d;
}

/* The list of the len items at items, as list_new makes it, with its
 * JsonSource: one allocation for the three (a list's items stay where the
 * list put them: it never grows). */
static inline List *close_list(Parser *ps, const Value *values, size_t len, const Opened *o, size_t end,
                               size_t items, size_t own, size_t deepest) {
    Rt *rt = ps->rt;
    if (len > rt->lim.max_items) list_new(rt, len);   /* (throws, as list_new does) */
    List *l = rt_alloc(rt, sizeof *l + len * sizeof(Value) + sizeof(JsonSource));
    Value *stored = (Value *)(void *)(l + 1);
    l->len = len;
    l->cap = len;
    l->items = len ? stored : NULL;
    l->tail_owner = NULL;
    for (size_t k = 0; k < len; k++) stored[k] = values[k];
    l->json = container_source_at(ps, (JsonSource *)(void *)(stored + len), o, end, items, own, deepest);
    return l;
}

/* Whitespace from `from` to `to` inside a container where json.dumps
 * writes `spaces` (1 after ',' and ':', else 0). */
#define VERBATIM_WS(from, to, spaces) \
    (ps->not_verbatim += (to) - (from) != (spaces) || ((spaces) && s[from] != ' '))

/* The value of top-level member `key` at i, when the cache has those bytes
 * parsed: v, with ps->end past it and ps->top_items/top_deepest its own;
 * else false, and ps->watch set to remember them. A shared value is spliced
 * in as if read here, which needs the row's text kept (JsonSource): a row
 * too big to keep reads its members as text. */
static NOINLINE bool reuse_member(Parser *ps, const Str *key, size_t i, Value *v) {
    ReuseSlot *slot = json_reuse_slot(ps->reuse, key->data, key->len);
    ps->watch = NULL;
    if (!slot) return false;
    /* (a row too big to keep, or holding more repeats than there is room
     * for: read as text, and the slot left as it is) */
    if (!ps->kept_text || *ps->nheld >= JSON_REUSE_SLOTS) return false;
    ReuseHit hit;
    bool same = false;
    if (json_reuse_match(slot, (const char *)ps->s + i, ps->n - i, ps->line_mode, &hit, &same)) {
        ps->held[(*ps->nheld)++] = hit.held;
        if (!hit.verbatim) ps->not_verbatim++;
        *v = hit.value;
        ps->end = i + hit.len;
        ps->top_items = hit.items;
        ps->top_deepest = hit.deepest;
        return true;
    }
    if (!same) ps->watch = slot;
    return false;
}

/* One value from i (after any whitespace); sets ps->end. A loop over an
 * explicit stack rather than recursion: the stack holds the items of the
 * open containers, each run of them after a marker (VT_MISSING) that keeps
 * the enclosing container's kind and where its items start. Errors come in
 * document order, as a recursive descent meets them. */
static Value parse_tree(Parser *ps, size_t i) {
    const unsigned char *s = ps->s;
    size_t n = ps->n;
    Value *stack = ps->stack;
    size_t top = 0, cap = ps->cap;
    size_t base = 0;      /* where the open container's items start */
    int in = IN_TOP;      /* what the open container is */
    size_t depth = 0;
    size_t max_depth = ps->rt->lim.max_json_depth;
    size_t items = 0, deepest = 0;   /* values read in containers; the open one's deepest */
    const bool newline_ws = !ps->line_mode;
    Str **key_guesses = ps->key_guesses;
    /* what the next key is guessed from: the last key read, at any depth,
     * and the short string value after it, if any (a message's role tells
     * whether content or reasoning_content comes next) */
    const Str *prev_key = NULL;
    uint64_t prev_value = 0;
    Value v;

value:
    if (i >= n) json_fail(ps, i, "Expecting value");
    if (s[i] == '"') {   /* the commonest value */
        v = parse_string_as(ps, s, n, &i, false, &prev_value);
        goto item;
    }
    if (s[i] == '{' || s[i] == '[') {   /* (before the switch: its jump costs more than this) */
        if (++depth > max_depth) too_deep(ps, i);
        if (depth >= ps->opened_cap) opened_grow(ps);
        ps->opened[depth] = (Opened){i, ps->not_verbatim, items, deepest};
        deepest = depth - 1;   /* its own depth: an empty one reaches no deeper */
        bool object = s[i] == '{';
        Value mark = {0};
        mark.type = VT_MISSING;
        mark.flags = (uint8_t)in;
        mark.u.i = (int64_t)base;
        if (top == cap) stack = stack_grow(ps), cap = ps->cap;
        stack[top++] = mark;
        base = top;
        in = object ? IN_OBJECT : IN_ARRAY;
        size_t at = ++i;
        if (i >= n || s[i] <= ' ') {   /* whitespace after the bracket (json.dumps writes none) */
            i = skip_ws(s, n, i, newline_ws);
            VERBATIM_WS(at, i, 0);
        }
        if (i < n && s[i] == (object ? '}' : ']')) {
            i++;
            goto close;
        }
        if (object) goto key;
        goto value;
    }
    switch (s[i]) {
    case 'n':
        if (!match_word(ps, i, "null", 4)) json_fail(ps, i, "Expecting value");
        i += 4;
        v = v_none();
        break;
    case 't':
        if (!match_word(ps, i, "true", 4)) json_fail(ps, i, "Expecting value");
        i += 4;
        v = v_bool(true);
        break;
    case 'f':
        if (!match_word(ps, i, "false", 5)) json_fail(ps, i, "Expecting value");
        i += 5;
        v = v_bool(false);
        break;
    case '-': case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
        v = parse_number(ps, i);
        i = ps->end;
        break;
    default:
        json_fail(ps, i, "Expecting value");
    }

    /* v is complete: the document, or the open container's next item. */
item:
    if (in == IN_TOP) {
        ps->end = i;
        ps->top_items = items;
        ps->top_deepest = deepest;
        return v;
    }
    items++;   /* (its depth is the open container's: counted when it closes) */
    if (top == cap) stack = stack_grow(ps), cap = ps->cap;
    stack[top++] = v;
    /* the usual separator, ", " before the next item: as the general path
     * below would take it (no other whitespace, nothing not verbatim) */
    if (i + 2 < n && two_bytes(s + i) == two_bytes((const unsigned char *)", ") && s[i + 2] > ' ') {
        i += 2;
        if (in == IN_OBJECT) goto key;
        goto value;
    }
    size_t at = i;
    i = skip_ws(s, n, i, newline_ws);
    VERBATIM_WS(at, i, 0);
    if (i < n && s[i] == (in == IN_OBJECT ? '}' : ']')) {
        i++;
        goto close;
    }
    if (i >= n || s[i] != ',') json_fail(ps, i, "Expecting ',' delimiter");
    at = i + 1;
    i = skip_ws(s, n, at, newline_ws);
    VERBATIM_WS(at, i, 1);
    if (in == IN_OBJECT) goto key;
    goto value;

key:
    if (i >= n || s[i] != '"') json_fail(ps, i, "Expecting property name enclosed in double quotes");
    {
        Str **ways = key_guess_ways(key_guesses, prev_key, prev_value);
        prev_value = 0;
        Str *guess = key_guessed(ways, s, n, i + 1);
        if (guess) {
            v = v_str_of(guess);
            i += guess->len + 2;
        } else {
            uint64_t unused;
            v = parse_string_as(ps, s, n, &i, true, &unused);
            key_learn(ways, v.u.s);
        }
        prev_key = v.u.s;
    }
    if (top == cap) stack = stack_grow(ps), cap = ps->cap;
    stack[top++] = v;
    /* the usual ": " before a value: as skip_ws would */
    if (i + 2 < n && two_bytes(s + i) == two_bytes((const unsigned char *)": ") && s[i + 2] > ' ') {
        i += 2;
        goto member;
    }
    size_t key_end = i;
    i = skip_ws(s, n, i, newline_ws);
    VERBATIM_WS(key_end, i, 0);
    if (i >= n || s[i] != ':') json_fail(ps, i, "Expecting ':' delimiter");
    key_end = i + 1;
    i = skip_ws(s, n, key_end, newline_ws);
    VERBATIM_WS(key_end, i, 1);
    goto member;

    /* A top-level member's value: taken from the cache when it repeats. */
member:
    if (depth == 1 && ps->reuse && i < n && (s[i] == '[' || s[i] == '{')) {
        if (reuse_member(ps, stack[top - 1].u.s, i, &v)) {
            i = ps->end;
            items += ps->top_items;
            if (ps->top_deepest + 1 > deepest) deepest = ps->top_deepest + 1;
            goto item;
        }
    }
    goto value;

    /* The open container's items are complete (i is past its bracket). */
close: {
    const Opened *o = &ps->opened[depth];
    if (top > base && depth > deepest) deepest = depth;   /* its items' depth */
    if (in == IN_OBJECT) {
        v = v_dict_of(close_dict(ps, stack + base, (top - base) / 2, o, i, items, depth - 1, deepest));
    } else {
        v = v_list_of(close_list(ps, stack + base, top - base, o, i, items, depth - 1, deepest));
    }
    if (o->deepest > deepest) deepest = o->deepest;
    if (depth == 2 && ps->watch) {   /* a top-level member's value that did not repeat */
        json_reuse_remember(ps->watch, (const char *)s + o->start, i - o->start);
        ps->watch = NULL;
    }
    }
    Value mark = stack[base - 1];
    top = base - 1;
    base = (size_t)mark.u.i;
    in = mark.flags;
    depth--;
    goto item;
}

static Value parse_document(Rt *rt, const char *s, size_t n, Parser *ps);

/* A parser with nothing read (its buffers not cleared: they are written
 * before read), guessing keys with the cache's table, else its own. */
static void parser_init(Parser *ps, cf_json_cache *cache) {
    memset(ps, 0, offsetof(Parser, own_guesses));
    ps->stack = ps->stack_inline;
    ps->cap = STACK_INLINE;
    ps->opened = ps->opened_inline;
    ps->opened_cap = OPENED_INLINE;
    ps->reuse = cache;
    if (cache) {
        ps->key_guesses = json_reuse_key_guesses(cache);
    } else {
        memset(ps->own_guesses, 0, sizeof ps->own_guesses);
        ps->key_guesses = ps->own_guesses;
    }
}

Value json_parse(Rt *rt, const char *s, size_t n) {
    Parser ps;
    parser_init(&ps, NULL);
    return parse_document(rt, s, n, &ps);
}

Value json_parse_measured(Rt *rt, const char *s, size_t n, JsonMeasure *m) {
    Parser ps;
    parser_init(&ps, NULL);
    Value v = parse_document(rt, s, n, &ps);
    m->items = ps.top_items;
    m->deepest = ps.top_deepest;
    m->verbatim = ps.kept_text && ps.not_verbatim == 0;
    return v;
}

/* A parser that reuses values through cache (the text outlives them). */
static void reusing_parser(Parser *ps, cf_json_cache *cache, ReusedValue **held, int *nheld) {
    parser_init(ps, cache);
    ps->text_outlives = true;
    ps->held = held;
    ps->nheld = nheld;
}

Value json_parse_reusing(Rt *rt, const char *s, size_t n, cf_json_cache *cache, ReusedValue **held,
                         int *nheld) {
    Parser ps;
    reusing_parser(&ps, cache, held, nheld);
    return parse_document(rt, s, n, &ps);
}

Value json_parse_line_reusing(Rt *rt, const char *s, size_t avail, size_t *line_end, cf_json_cache *cache,
                              ReusedValue **held, int *nheld) {
    Parser ps;
    reusing_parser(&ps, cache, held, nheld);
    ps.line_mode = true;
    /* A line longer than a document may be, or than the text JsonSources
     * keep, is not read this way: its reading would differ. */
    size_t n = avail;
    if (n > rt->lim.max_json_bytes) n = rt->lim.max_json_bytes;
    if (n > JSON_SOURCE_MAX) n = JSON_SOURCE_MAX;
    Value v = parse_document(rt, s, n, &ps);
    *line_end = ps.line_end;
    return v;
}

/* The document in s, read with ps (zeroed, its reuse fields set). */
static Value parse_document(Rt *rt, const char *s, size_t n, Parser *ps) {
    if (n > rt->lim.max_json_bytes) {
        rt->err->offset = 0;
        rt_throw(rt, CF_ERR_LIMIT,
                 "JSON document of %zu bytes exceeds the limit of %zu bytes (raise it with --max-json-bytes / cf_limits.max_json_bytes)",
                 n, rt->lim.max_json_bytes);
    }
    ps->rt = rt;
    ps->s = (const unsigned char *)s;
    ps->n = n;
    ps->unpaired_at = SIZE_MAX;
    ps->max_short = rt->lim.max_string < SCAN_BYTES - 1 ? rt->lim.max_string : SCAN_BYTES - 1;
    if (n <= JSON_SOURCE_MAX && !ps->text_outlives) {   /* read a copy the values may point into */
        char *copy = rt_alloc(rt, n ? n : 1);
        memcpy(copy, s, n);
        ps->s = (const unsigned char *)copy;
    }
    if (n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) {   /* as json.loads(bytes) */
        ps->s += 3;
        ps->n -= 3;
        ps->base = 3;
    }
    if (n <= JSON_SOURCE_MAX) ps->kept_text = (const char *)ps->s;
    bool newline_ws = !ps->line_mode;
    Value v = parse_tree(ps, skip_ws(ps->s, ps->n, 0, newline_ws));
    size_t i = skip_ws(ps->s, ps->n, ps->end, newline_ws);
    if (ps->line_mode) {   /* the line ends here, or this is not its reading */
        if (i >= ps->n || ps->s[i] != '\n') json_fail(ps, i, "Extra data");
        ps->line_end = ps->base + i;
    } else if (i != ps->n) {
        json_fail(ps, i, "Extra data");
    }
    if (ps->unpaired_at != SIZE_MAX) json_fail(ps, ps->unpaired_at, "Unpaired surrogate in \\uXXXX escape");
    return v;
}

/* ======================================================================
 * Writer
 * ====================================================================== */

void json_opts_default(JsonDumpOpts *o) {
    o->ensure_ascii = true;
    o->sort_keys = false;
    o->indent = -1;
    o->indent_str = NULL;
    o->item_sep = NULL;
    o->key_sep = NULL;
}

/* Bytes json.dumps escapes: 0 = verbatim; else the escape letter ('u' =
 * \u00XX). Second table (ensure_ascii): DEL and non-ASCII ('U') too. */
#define CTRL_ESCAPES \
    'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'b', 't', 'n', 'u', 'f', 'r', 'u', 'u', \
    'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u'
#define U16 'U', 'U', 'U', 'U', 'U', 'U', 'U', 'U', 'U', 'U', 'U', 'U', 'U', 'U', 'U', 'U'
static const char ESCAPE_UTF8[256] = {CTRL_ESCAPES, ['"'] = '"', ['\\'] = '\\'};
static const char ESCAPE_ASCII[256] = {
    CTRL_ESCAPES, ['"'] = '"', ['\\'] = '\\', [0x7f] = 'u',
    [0x80] = U16, U16, U16, U16, U16, U16, U16, U16,
};

size_t json_plain_run(const char *s, size_t n, bool ensure_ascii) {
    const unsigned char *u = (const unsigned char *)s;
    const char *table = ensure_ascii ? ESCAPE_ASCII : ESCAPE_UTF8;
    size_t i = 0;
    for (; i + SCAN_BYTES <= n; i += SCAN_BYTES) {
        ScanMask m = scan_block(u + i, ensure_ascii ? SCAN_ASCII : SCAN_PLAIN);
        if (m) return i + scan_first(m);
    }
    while (i < n && !table[u[i]]) i++;
    return i;
}

static size_t u_escape(uint32_t unit, char *out) {
    static const char hex[] = "0123456789abcdef";
    out[0] = '\\';
    out[1] = 'u';
    out[2] = hex[(unit >> 12) & 15];
    out[3] = hex[(unit >> 8) & 15];
    out[4] = hex[(unit >> 4) & 15];
    out[5] = hex[unit & 15];
    return 6;
}

size_t json_escape_byte(unsigned char c, char out[6]) {
    char esc = ESCAPE_ASCII[c];
    if (esc == 'u') return u_escape(c, out);
    out[0] = '\\';
    out[1] = esc;
    return 2;
}

static size_t escape_extra(unsigned char c) {   /* bytes an escape adds */
    char esc = ESCAPE_UTF8[c];
    return !esc ? 0 : esc == 'u' ? 5 : 1;
}

/* Output text has an escape every few dozen bytes (newlines, the quotes of
 * embedded JSON): a word is handled whole, and each escape in it costs a
 * bit scan, not a pass over its bytes. */
size_t json_quoted_len(const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    size_t len = n + 2, i = 0;
    for (; i + SCAN_BYTES <= n; i += SCAN_BYTES) {
        for (ScanMask m = scan_block(u + i, SCAN_PLAIN); m; m &= m - 1)
            len += escape_extra(u[i + scan_first(m & (0 - m))]);
    }
    for (; i < n; i++) len += escape_extra(u[i]);
    return len;
}

/* No byte of the 8-byte word x needs an escape (the SWAR test above, exact). */
static inline bool word_plain(uint64_t x) {
    const uint64_t ones = 0x0101010101010101ULL, lows = 0x7f7f7f7f7f7f7f7fULL;
    uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');
    uint64_t not_quote = ((q & lows) + lows) | q;
    uint64_t not_backslash = ((b & lows) + lows) | b;
    uint64_t not_control = ((x & lows) + ones * 0x60) | x;
    return (~(not_quote & not_backslash & not_control) & ~lows) == 0;
}

/* The 4..16 bytes at p need no escape: two overlapping words (keys and
 * short values are most strings tojson writes; byte by byte they cost
 * several times more). */
static inline bool short_run_plain(const unsigned char *p, size_t k) {
    if (k >= 8) {
        uint64_t a, b;
        memcpy(&a, p, 8);
        memcpy(&b, p + k - 8, 8);
        return word_plain(a) && word_plain(b);
    }
    uint32_t a, b;
    memcpy(&a, p, 4);
    memcpy(&b, p + k - 4, 4);
    return word_plain((uint64_t)a | (uint64_t)b << 32);
}

/* The escape of the character at u[*i] that a scan stopped at: an ASCII
 * byte (2 or 6 bytes), or with ensure_ascii a non-ASCII character as
 * \uXXXX, a surrogate pair above the BMP. Returns the end of what it wrote:
 * never more than 6 bytes a byte of input. */
static char *escape_at(char *o, const unsigned char *u, size_t n, size_t *i) {
    unsigned char c = u[*i];
    if (c < 0x80) {
        (*i)++;
        return o + json_escape_byte(c, o);
    }
    uint32_t cp = utf8_next((const char *)u, n, i);
    if (cp >= 0x10000) {
        cp -= 0x10000;
        o += u_escape(0xD800 | (cp >> 10), o);
        return o + u_escape(0xDC00 | (cp & 0x3FF), o);
    }
    return o + u_escape(cp, o);
}

/* ---- quoting output text with byte shuffles ----
 * Rendered prompts have an escape every twenty bytes or so (newlines, the
 * quotes of embedded JSON): a scan that stops at each one mispredicts a
 * branch per escape, and that was most of the time JSON Lines output took.
 * Here every 8 input bytes become their escaped output in one shuffle,
 * whatever escapes they hold: a table, by the mask of the bytes that take a
 * two-byte escape (", \, \b \t \n \f \r), gives where each output byte comes
 * from, and where the backslashes go. A block holding another control byte
 * (\u00XX) is left to the scan. SSSE3 (pshufb), found at run time; runs
 * of clean text go 32 bytes a step with AVX2 where the CPU has it. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(CF_NO_SIMD)
#include <immintrin.h>
#include <tmmintrin.h>
#define HAVE_SHUFFLE_QUOTE 1

/* Whether the CPU (and the system) can run an instruction set: as glibc
 * found it when the process started, where it says (2.34 and later);
 * elsewhere libgcc's __builtin_cpu_supports, whose constructor runs some
 * seven cpuid instructions in every process that links it, each a trap of
 * ~8 us to the hypervisor on a virtual machine: a fortieth of the start-up
 * of a dataset run. */
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34)) && defined(__has_include)
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>
#define CPU_RUNS(feature, name) CPU_FEATURE_ACTIVE(feature)
#endif
#endif
#ifndef CPU_RUNS
#define CPU_RUNS(feature, name) __builtin_cpu_supports(name)
#endif

/* The shuffle of 8 input bytes with escape mask e, built by the compiler
 * (no table to fill at run time): output byte k is input byte esc_shuffle
 * [e][k], or 0xFF where a backslash goes (and past the output's end). Each
 * half of e is a nibble: ESC_NIB_n spells its 4..8 output bytes, low byte
 * first (n's bit j: a backslash, then input byte j); the high nibble's
 * bytes follow the low one's, their input indices plus 4. */
#define ESC_NIB_0 0xFFFFFFFF03020100ULL
#define ESC_NIB_1 0xFFFFFF03020100FFULL
#define ESC_NIB_2 0xFFFFFF030201FF00ULL
#define ESC_NIB_3 0xFFFF030201FF00FFULL
#define ESC_NIB_4 0xFFFFFF0302FF0100ULL
#define ESC_NIB_5 0xFFFF0302FF0100FFULL
#define ESC_NIB_6 0xFFFF0302FF01FF00ULL
#define ESC_NIB_7 0xFF0302FF01FF00FFULL
#define ESC_NIB_8 0xFFFFFF03FF020100ULL
#define ESC_NIB_9 0xFFFF03FF020100FFULL
#define ESC_NIB_A 0xFFFF03FF0201FF00ULL
#define ESC_NIB_B 0xFF03FF0201FF00FFULL
#define ESC_NIB_C 0xFFFF03FF02FF0100ULL
#define ESC_NIB_D 0xFF03FF02FF0100FFULL
#define ESC_NIB_E 0xFF03FF02FF01FF00ULL
#define ESC_NIB_F 0x03FF02FF01FF00FFULL
#define ESC_NIB_LEN(n) (4 + ((n) & 1) + ((n) >> 1 & 1) + ((n) >> 2 & 1) + ((n) >> 3 & 1))
#define ESC_NIB_BYTE(w, k) ((unsigned char)((w) >> (8 * ((k) & 7))))
#define ESC_SRC(hi, lo, k)                                                                              \
    ((k) < ESC_NIB_LEN(0x##lo) ? ESC_NIB_BYTE(ESC_NIB_##lo, k)                                          \
     : (k) - ESC_NIB_LEN(0x##lo) < 8 ? ESC_NIB_BYTE(ESC_NIB_##hi, (k) - ESC_NIB_LEN(0x##lo)) | 4 : 0xFF)
#define ESC_ROW(hi, lo)                                                                                 \
    {ESC_SRC(hi, lo, 0),  ESC_SRC(hi, lo, 1),  ESC_SRC(hi, lo, 2),  ESC_SRC(hi, lo, 3),                 \
     ESC_SRC(hi, lo, 4),  ESC_SRC(hi, lo, 5),  ESC_SRC(hi, lo, 6),  ESC_SRC(hi, lo, 7),                 \
     ESC_SRC(hi, lo, 8),  ESC_SRC(hi, lo, 9),  ESC_SRC(hi, lo, 10), ESC_SRC(hi, lo, 11),                \
     ESC_SRC(hi, lo, 12), ESC_SRC(hi, lo, 13), ESC_SRC(hi, lo, 14), ESC_SRC(hi, lo, 15)}
#define ESC_ROWS16(hi)                                                                                  \
    ESC_ROW(hi, 0), ESC_ROW(hi, 1), ESC_ROW(hi, 2), ESC_ROW(hi, 3), ESC_ROW(hi, 4), ESC_ROW(hi, 5),     \
    ESC_ROW(hi, 6), ESC_ROW(hi, 7), ESC_ROW(hi, 8), ESC_ROW(hi, 9), ESC_ROW(hi, A), ESC_ROW(hi, B),     \
    ESC_ROW(hi, C), ESC_ROW(hi, D), ESC_ROW(hi, E), ESC_ROW(hi, F)
#define ESC_LEN(hi, lo) (ESC_NIB_LEN(0x##hi) + ESC_NIB_LEN(0x##lo))
#define ESC_LENS16(hi)                                                                                  \
    ESC_LEN(hi, 0), ESC_LEN(hi, 1), ESC_LEN(hi, 2), ESC_LEN(hi, 3), ESC_LEN(hi, 4), ESC_LEN(hi, 5),     \
    ESC_LEN(hi, 6), ESC_LEN(hi, 7), ESC_LEN(hi, 8), ESC_LEN(hi, 9), ESC_LEN(hi, A), ESC_LEN(hi, B),     \
    ESC_LEN(hi, C), ESC_LEN(hi, D), ESC_LEN(hi, E), ESC_LEN(hi, F)
#define ESC_BY_HIGH_NIBBLE(M)                                                                           \
    M(0), M(1), M(2), M(3), M(4), M(5), M(6), M(7), M(8), M(9), M(A), M(B), M(C), M(D), M(E), M(F)

static const unsigned char esc_shuffle[256][16] = {ESC_BY_HIGH_NIBBLE(ESC_ROWS16)};
static const unsigned char esc_length[256] = {ESC_BY_HIGH_NIBBLE(ESC_LENS16)};   /* 8 + the escapes */

static bool shuffle_quote_usable(void) { return CPU_RUNS(SSSE3, "ssse3"); }

/* 8 bytes (the low half of mapped), escape mask e: their output at o; a
 * backslash wherever the shuffle takes no input byte. */
__attribute__((target("ssse3"))) static inline char *shuffle_out(char *o, __m128i mapped, unsigned e) {
    __m128i ctl = _mm_loadu_si128((const __m128i *)(const void *)esc_shuffle[e]);
    __m128i bs = _mm_and_si128(_mm_cmplt_epi8(ctl, _mm_setzero_si128()), _mm_set1_epi8('\\'));
    _mm_storeu_si128((__m128i *)(void *)o, _mm_or_si128(_mm_shuffle_epi8(mapped, ctl), bs));
    return o + esc_length[e];
}

/* One 16-byte block at u: its escaped output at *o (*o advanced); false,
 * with nothing written, when it holds a control byte without a short escape
 * (\u00XX: left to the scan). */
__attribute__((target("ssse3"))) static inline bool quote_block16(char **o, const unsigned char *u) {
    const __m128i letters = _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 'b', 't', 'n', 0, 'f', 'r', 0, 0);
    const __m128i x1f = _mm_set1_epi8(0x1F), x0f = _mm_set1_epi8(0x0F), zero = _mm_setzero_si128();
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)u);
    __m128i control = _mm_cmpeq_epi8(_mm_max_epu8(x, x1f), x1f);      /* x <= 0x1F */
    __m128i special = _mm_or_si128(control, _mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)));
    if (!_mm_movemask_epi8(special)) {   /* a clean block (long runs of text: a branch seldom mispredicted there) */
        _mm_storeu_si128((__m128i *)(void *)*o, x);
        *o += 16;
        return true;
    }
    __m128i letter = _mm_shuffle_epi8(letters, x);                     /* (by the low nibble) */
    __m128i low = _mm_cmpeq_epi8(_mm_max_epu8(x, x0f), x0f);          /* x <= 0x0F */
    __m128i short_escape = _mm_andnot_si128(_mm_cmpeq_epi8(letter, zero), low);
    if (_mm_movemask_epi8(_mm_andnot_si128(short_escape, control))) return false;   /* \u00XX */
    unsigned e = (unsigned)_mm_movemask_epi8(special);   /* every special byte takes two */
    __m128i mapped = _mm_or_si128(_mm_and_si128(short_escape, letter), _mm_andnot_si128(short_escape, x));
    *o = shuffle_out(*o, mapped, e & 0xFF);
    *o = shuffle_out(*o, _mm_srli_si128(mapped, 8), e >> 8);
    return true;
}

/* The blocks of u[*pi, n) while 24 bytes are left (each 16-byte store
 * then ends below the literal's end), up to the first block holding a
 * control byte without a short escape; *pi: where that stopped. */
__attribute__((target("ssse3"))) static char *quote_body_shuffle(char *o, const unsigned char *u, size_t n, size_t *pi) {
    size_t i = *pi;
    for (; i + 24 <= n; i += 16)
        if (!quote_block16(&o, u + i)) break;
    *pi = i;
    return o;
}

/* With AVX2 where the CPU has it, text with few escapes (most of a
 * prompt: a newline or a quote every few dozen bytes) goes 64 bytes a
 * step: a clean step is two stores. A 32-byte half with one escape is
 * stored as it is, the escape written where the output has got to and the
 * input after it stored again behind it: a dozen instructions, where
 * shuffling the half as 8-byte groups takes some eighty. A half with more
 * goes through the shuffles (a loop over its escapes would mispredict its
 * exit on dense text: embedded JSON), or, holding a \u00XX control, through
 * that loop. Reads stay below i + WIDE_READ, and each store has room: the
 * output so far is at most 6 bytes a byte read, and 6 * n reserved. */
static bool avx2_quote_usable(void) { return CPU_RUNS(AVX2, "avx2"); }

enum { WIDE_READ = 96 };   /* input bytes a step may read from its start */

/* The special bytes ('"', '\\', controls) of x, as 0xFF bytes: a quote or
 * a backslash is the byte a table by its low nibble gives for it (bytes
 * >= 0x80 get 0 from the shuffle, and the table's other entries, 0xFF,
 * no byte below 0x80 can equal); a control is at most 0x1F. */
__attribute__((target("avx2"))) static inline __m256i special_bytes(__m256i x) {
    const __m256i by_low_nibble = _mm256_setr_epi8(-1, -1, '"', -1, -1, -1, -1, -1, -1, -1, -1, -1, '\\', -1, -1, -1,
                                                   -1, -1, '"', -1, -1, -1, -1, -1, -1, -1, -1, -1, '\\', -1, -1, -1);
    const __m256i x1f = _mm256_set1_epi8(0x1F);
    return _mm256_or_si256(_mm256_cmpeq_epi8(_mm256_shuffle_epi8(by_low_nibble, x), x),
                           _mm256_cmpeq_epi8(_mm256_max_epu8(x, x1f), x1f));
}

/* The width (16 or 32) bytes at u, their escapes' bits m (nonzero), quoted
 * at o escape by escape; returns the output's end. Reads up to u + 64. */
__attribute__((target("avx2"))) static inline char *quote_escapes(char *o, const unsigned char *u, uint32_t m,
                                                                  unsigned width) {
    _mm256_storeu_si256((__m256i *)(void *)o, _mm256_loadu_si256((const __m256i *)(const void *)u));
    unsigned pos = 0;
    do {
        unsigned k = (unsigned)__builtin_ctz(m);
        o += k - pos;
        unsigned char c = u[k];
        char esc = ESCAPE_UTF8[c];
        if (esc != 'u') {
            uint16_t pair = (uint16_t)('\\' | (unsigned char)esc << 8);   /* (little-endian: x86) */
            memcpy(o, &pair, 2);
            o += 2;
        } else {
            o += u_escape(c, o);
        }
        pos = k + 1;
        _mm256_storeu_si256((__m256i *)(void *)o, _mm256_loadu_si256((const __m256i *)(const void *)(u + pos)));
        m &= m - 1;
    } while (m);
    return o + (width - pos);
}

/* The 32 bytes at u, their escapes' bits m (nonzero), quoted at o. */
__attribute__((target("avx2"))) static inline char *quote_half(char *o, const unsigned char *u, uint32_t m) {
    if (!(m & (m - 1))) return quote_escapes(o, u, m, 32);
    if (!quote_block16(&o, u)) return quote_escapes(o, u, m, 32);
    if (!quote_block16(&o, u + 16)) return quote_escapes(o, u + 16, m >> 16, 16);
    return o;
}

__attribute__((target("avx2"))) static char *quote_body_wide(char *o, const unsigned char *u, size_t n, size_t *pi) {
    const unsigned char *p = u + *pi, *last = u + n - WIDE_READ;   /* (n >= WIDE_READ) */
    for (; p <= last; p += 64) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)p);
        __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32));
        _mm256_storeu_si256((__m256i *)(void *)o, a);
        _mm256_storeu_si256((__m256i *)(void *)(o + 32), b);
        __m256i sa = special_bytes(a), sb = special_bytes(b), any = _mm256_or_si256(sa, sb);
        if (_mm256_testz_si256(any, any)) {   /* the common step in prose: a branch seldom mispredicted */
            o += 64;
            continue;
        }
        uint32_t ma = (uint32_t)_mm256_movemask_epi8(sa), mb = (uint32_t)_mm256_movemask_epi8(sb);
        if (ma) {
            o = quote_half(o, p, ma);
        } else {
            o += 32;
        }
        if (mb) {
            o = quote_half(o, p + 32, mb);
        } else {
            _mm256_storeu_si256((__m256i *)(void *)o, b);
            o += 32;
        }
    }
    *pi = (size_t)(p - u);
    return o;
}
#endif

/* The literal's text between its quotes, at o, which has room for 6 * n
 * bytes (the most escapes take); returns its end. Whole blocks are stored
 * while a block of input is left: the room for them is there. */
static char *quote_body(char *o, const unsigned char *u, size_t n, bool ensure_ascii) {
    size_t i = 0;
#ifdef HAVE_SHUFFLE_QUOTE
    if (!ensure_ascii && n >= 24 && shuffle_quote_usable()) {
        if (n >= WIDE_READ && avx2_quote_usable()) o = quote_body_wide(o, u, n, &i);   /* (all but the last bytes) */
        for (;;) {   /* a block with a \u00XX escape goes through the scan below */
            o = quote_body_shuffle(o, u, n, &i);
            if (i + 24 > n) break;
            size_t stop = i + 16;
            while (i < stop) {
                if (ESCAPE_UTF8[u[i]]) o = escape_at(o, u, n, &i);
                else *o++ = (char)u[i++];
            }
        }
    }
#endif
    while (i + SCAN_BYTES <= n) {
        ScanMask m = scan_block(u + i, ensure_ascii ? SCAN_ASCII : SCAN_PLAIN);
        memcpy(o, u + i, SCAN_BYTES);
        if (!m) {
            o += SCAN_BYTES;
            i += SCAN_BYTES;
            continue;
        }
        unsigned k = scan_first(m);
        o += k;
        i += k;
        char esc = ESCAPE_UTF8[u[i]];   /* a newline or a quote, most often: two bytes, here */
        if (esc && esc != 'u') {
            o[0] = '\\';
            o[1] = esc;
            o += 2;
            i++;
            continue;
        }
        o = escape_at(o, u, n, &i);
    }
    size_t left = n - i;   /* < SCAN_BYTES */
    if (!ensure_ascii && left >= 4 && short_run_plain(u + i, left)) {
        copy_bytes(o, (const char *)u + i, left);
        return o + left;
    }
    const char *table = ensure_ascii ? ESCAPE_ASCII : ESCAPE_UTF8;
    while (i < n) {
        if (table[u[i]]) o = escape_at(o, u, n, &i);
        else *o++ = (char)u[i++];
    }
    return o;
}

char *json_quote_body(char *o, const char *s, size_t n) { return quote_body(o, (const unsigned char *)s, n, false); }

size_t json_quote_to(char *out, const char *s, size_t n) {
    char *o = out;
    *o++ = '"';
    o = quote_body(o, (const unsigned char *)s, n, false);
    *o++ = '"';
    return (size_t)(o - out);
}

/* Strings up to this long are quoted on the stack when the buffer lacks
 * room for their worst case, and appended (growing it) in one piece. */
enum { QUOTE_ON_STACK = 64 };

void json_write_string(StrBuf *sb, const char *s, size_t n, bool ensure_ascii) {
    const unsigned char *u = (const unsigned char *)s;
    /* Room for the worst case (within the buffer's limit already): in one
     * pass straight into the buffer. */
    size_t room = sb->p ? sb->cap - sb->len : 0;
    if (room / 6 > n) {
        char *o = sb->p + sb->len;
        *o++ = '"';
        o = quote_body(o, u, n, ensure_ascii);
        *o++ = '"';
        sb->len = (size_t)(o - sb->p);
        return;
    }
    if (n <= QUOTE_ON_STACK) {
        char tmp[6 * QUOTE_ON_STACK + 2], *o = tmp;
        *o++ = '"';
        o = quote_body(o, u, n, ensure_ascii);
        *o++ = '"';
        sb_put(sb, tmp, (size_t)(o - tmp));
        return;
    }
    if (!ensure_ascii && room >= 2 && json_quoted_len(s, n) <= room) {
        sb->len += json_quote_to(sb->p + sb->len, s, n);
        return;
    }
    /* else piece by piece, growing the buffer */
    sb_putc(sb, '"');
    size_t i = 0;
    for (;;) {
        size_t run = json_plain_run(s + i, n - i, ensure_ascii);
        sb_put(sb, s + i, run);
        i += run;
        if (i >= n) break;
        char esc[12];
        sb_put(sb, esc, (size_t)(escape_at(esc, u, n, &i) - esc));
    }
    sb_putc(sb, '"');
}

typedef struct Dumper {
    Rt *rt;
    StrBuf *sb;
    bool ensure_ascii, sort_keys;
    uint32_t max_depth;      /* rt->lim.max_json_depth */
    const char *indent;      /* NULL = single line */
    size_t indent_len;
    const char *item_sep, *key_sep;
    size_t item_sep_len, key_sep_len;
    /* "\n" and the indent nl_levels times: a line break and the indentation
     * of any level up to that, in one piece */
    const char *nl;
    unsigned nl_levels;
    bool verbatim;           /* the options JsonSources are kept for */
    bool python_seps;        /* no indent, ", " and ": " (json.dumps' defaults): written in place */
} Dumper;

/* Whether a byte of the string s, shorter than a scan block, needs an
 * escape. With SSE2, one scan of the block that ends where s does: it lies
 * within the Str, whose header comes first, and the flags of the header's
 * bytes are shifted out. */
#if SCAN_BYTES == 16
_Static_assert(offsetof(Str, data) >= SCAN_BYTES, "a Str's header holds a scan block");
static inline bool short_str_flagged(const Str *s, bool ensure_ascii) {
    const unsigned char *end = (const unsigned char *)s + offsetof(Str, data) + s->len;
    ScanMask m = scan_block(end - SCAN_BYTES, ensure_ascii ? SCAN_ASCII : SCAN_PLAIN);
    return (m >> (SCAN_BYTES - s->len)) != 0;
}
#else
static inline bool short_str_flagged(const Str *s, bool ensure_ascii) {
    const char *table = ensure_ascii ? ESCAPE_ASCII : ESCAPE_UTF8;
    for (size_t i = 0; i < s->len; i++)
        if (table[(unsigned char)s->data[i]]) return true;
    return false;
}
#endif

/* A string value or key. Most are short and need no escape: checked with
 * one scan and copied, straight into the buffer when it has room for any
 * string that long. */
static inline void dump_string(Dumper *d, const Str *s) {
    StrBuf *sb = d->sb;
    size_t n = s->len;
    /* room for the worst case, 6 * n + 2 (what room / 6 > n says, without
     * the division; in 64 bits it cannot overflow) */
    if (!sb->p || (uint64_t)n * 6 + 6 > sb->cap - sb->len) {
        json_write_string(sb, s->data, n, d->ensure_ascii);
        return;
    }
    char *o = sb->p + sb->len;
    *o++ = '"';
    if (n < SCAN_BYTES && !short_str_flagged(s, d->ensure_ascii)) {
        copy_bytes(o, s->data, n);
        o += n;
    } else {
        o = quote_body(o, (const unsigned char *)s->data, n, d->ensure_ascii);
    }
    *o++ = '"';
    sb->len = (size_t)(o - sb->p);
}

static void dump_value(Dumper *d, Value v, unsigned depth);

/* A list item or dict value: a string, the most common, written without
 * the call (after the depth check dump_value makes first). */
static inline void dump_item(Dumper *d, Value v, unsigned depth) {
    if (v.type == VT_STR && depth <= d->max_depth) dump_string(d, v.u.s);
    else dump_value(d, v, depth);
}

static void newline_indent(Dumper *d, unsigned level) {
    if (level <= d->nl_levels) {
        sb_put(d->sb, d->nl, 1 + level * d->indent_len);
        return;
    }
    sb_putc(d->sb, '\n');
    for (unsigned k = 0; k < level; k++) sb_put(d->sb, d->indent, d->indent_len);
}

static void item_separator(Dumper *d, unsigned level) {
    sb_put(d->sb, d->item_sep, d->item_sep_len);
    if (d->indent) newline_indent(d, level);
}

static void dump_float(StrBuf *sb, double f) {
    if (isnan(f)) sb_puts(sb, "NaN");
    else if (isinf(f)) sb_puts(sb, f < 0 ? "-Infinity" : "Infinity");
    else fmt_float_repr(sb, f);
}

static _Noreturn void not_serializable(Dumper *d, Value v) {
    rt_throw(d->rt, CF_ERR_TYPE, "Object of type %s is not JSON serializable", v_type_name(v));
}

static void dump_list(Dumper *d, const List *l, unsigned depth) {
    if (l->len == 0) {
        sb_put(d->sb, "[]", 2);
        return;
    }
    sb_putc(d->sb, '[');
    if (d->indent) newline_indent(d, depth + 1);
    for (size_t i = 0; i < l->len; i++) {
        if (i) item_separator(d, depth + 1);
        dump_item(d, l->items[i], depth + 1);
    }
    if (d->indent) newline_indent(d, depth);
    sb_putc(d->sb, ']');
    rt_step(d->rt, l->len);
}

/* Python's json converts non-str keys to their JSON spelling. */
static void dump_key(Dumper *d, Value k) {
    StrBuf *sb = d->sb;
    switch ((ValueType)k.type) {
    case VT_STR: dump_string(d, k.u.s); return;
    case VT_FLOAT: sb_putc(sb, '"'); dump_float(sb, k.u.f); sb_putc(sb, '"'); return;
    case VT_BOOL: sb_puts(sb, k.u.b ? "\"true\"" : "\"false\""); return;
    case VT_NONE: sb_puts(sb, "\"null\""); return;
    case VT_INT: sb_putc(sb, '"'); sb_put_int(sb, k.u.i); sb_putc(sb, '"'); return;
    case VT_BIGINT: sb_putc(sb, '"'); v_write_bigint(d->rt, sb, k); sb_putc(sb, '"'); return;
    default:
        rt_throw(d->rt, CF_ERR_TYPE, "keys must be str, int, float, bool or None, not %s", v_type_name(k));
    }
}

/* Sorting keys as Python's list.sort would: comparisons are always
 * "later < earlier", so a mixed-type TypeError names the operands in the
 * same order as CPython's. */
static bool key_less(Rt *rt, Value a, Value b) {
    if (a.type == VT_STR && b.type == VT_STR) {
        size_t n = a.u.s->len < b.u.s->len ? a.u.s->len : b.u.s->len;
        int c = memcmp(a.u.s->data, b.u.s->data, n);
        return c < 0 || (c == 0 && a.u.s->len < b.u.s->len);
    }
    return v_compare(rt, a, b, "<") < 0;
}

static void insertion_sort_keys(Rt *rt, const Dict *dict, size_t *idx, size_t n) {
    for (size_t i = 1; i < n; i++) {
        size_t pivot = idx[i], lo = 0, hi = i;
        Value pk = dict_key_at(dict, pivot);
        while (lo < hi) {   /* binary insertion, stable */
            size_t mid = lo + (hi - lo) / 2;
            if (key_less(rt, pk, dict_key_at(dict, idx[mid]))) hi = mid;
            else lo = mid + 1;
        }
        memmove(&idx[lo + 1], &idx[lo], (i - lo) * sizeof *idx);
        idx[lo] = pivot;
    }
}

static void merge_sort_keys(Rt *rt, const Dict *dict, size_t *idx, size_t *tmp, size_t n) {
    if (n <= 32) {
        insertion_sort_keys(rt, dict, idx, n);
        return;
    }
    size_t half = n / 2;
    merge_sort_keys(rt, dict, idx, tmp, half);
    merge_sort_keys(rt, dict, idx + half, tmp, n - half);
    memcpy(tmp, idx, half * sizeof *idx);
    size_t a = 0, b = half, out = 0;
    while (a < half && b < n) {
        if (key_less(rt, dict_key_at(dict, idx[b]), dict_key_at(dict, tmp[a]))) idx[out++] = idx[b++];
        else idx[out++] = tmp[a++];
    }
    while (a < half) idx[out++] = tmp[a++];
    rt_step(rt, n);
}

/* `, "key": ` (no comma before the first pair) with Python's separators:
 * a key shorter than a scan block needing no escape, the common one, in
 * place with one room check; any other through dump_key. */
static inline void flat_key(Dumper *d, Value k, bool first) {
    StrBuf *sb = d->sb;
    if (k.type == VT_STR && k.u.s->len < SCAN_BYTES && sb->p && sb->cap - sb->len >= SCAN_BYTES + 8 &&
        !short_str_flagged(k.u.s, d->ensure_ascii)) {
        char *o = sb->p + sb->len;
        size_t n = k.u.s->len;
        memcpy(o, ", ", 2);   /* the first pair's key starts over it */
        o += first ? 0 : 2;
        *o = '"';
        copy_bytes(o + 1, k.u.s->data, n);
        memcpy(o + 1 + n, "\": ", 3);
        sb->len = (size_t)(o + 4 + n - sb->p);
        return;
    }
    if (!first) sb_put(sb, ", ", 2);
    dump_key(d, k);
    sb_put(sb, ": ", 2);
}

static void dump_dict(Dumper *d, const Dict *dict, unsigned depth) {
    size_t n = dict->len;
    if (n == 0) {
        sb_put(d->sb, "{}", 2);
        return;
    }
    size_t *order = NULL;
    if (d->sort_keys) {
        order = rt_alloc(d->rt, n * sizeof *order);
        for (size_t i = 0; i < n; i++) order[i] = i;
        size_t *tmp = n > 32 ? rt_alloc(d->rt, (n / 2 + 1) * sizeof *tmp) : NULL;
        merge_sort_keys(d->rt, dict, order, tmp, n);
    }
    sb_putc(d->sb, '{');
    const DictEntry *entries = dict->entries;
    if (d->python_seps) {
        for (size_t i = 0; i < n; i++) {
            const DictEntry *e = &entries[order ? order[i] : i];
            flat_key(d, e->key, i == 0);
            dump_item(d, e->val, depth + 1);
        }
        sb_putc(d->sb, '}');
        rt_step(d->rt, n);
        return;
    }
    if (d->indent) newline_indent(d, depth + 1);
    for (size_t i = 0; i < n; i++) {
        const DictEntry *e = &entries[order ? order[i] : i];
        if (i) item_separator(d, depth + 1);
        dump_key(d, e->key);
        sb_put(d->sb, d->key_sep, d->key_sep_len);
        dump_item(d, e->val, depth + 1);
    }
    if (d->indent) newline_indent(d, depth);
    sb_putc(d->sb, '}');
    rt_step(d->rt, n);
}

/* A container read from JSON text that json.dumps would write again as it
 * was: copied, charging the steps and reaching the depth its dump would
 * (one too deep is left to the dump, to fail where it fails). */
static inline bool dump_verbatim(Dumper *d, const JsonSource *js, unsigned depth) {
    if (!js || !d->verbatim || (uint64_t)depth + js->height > d->max_depth) return false;
    sb_put(d->sb, js->text, js->len);
    rt_step(d->rt, js->steps);
    return true;
}

static void dump_value(Dumper *d, Value v, unsigned depth) {
    if (depth > d->max_depth) {
        rt_throw(d->rt, CF_ERR_LIMIT,
                 "JSON nesting deeper than %u levels (raise it with --max-json-depth / cf_limits.max_json_depth)",
                 (unsigned)d->max_depth);
    }
    StrBuf *sb = d->sb;
    switch ((ValueType)v.type) {
    case VT_STR: dump_string(d, v.u.s); return;
    case VT_NONE: sb_put(sb, "null", 4); return;
    case VT_BOOL: sb_puts(sb, v.u.b ? "true" : "false"); return;
    case VT_INT: sb_put_int(sb, v.u.i); return;
    case VT_BIGINT: v_write_bigint(d->rt, sb, v); return;
    case VT_FLOAT: dump_float(sb, v.u.f); return;
    case VT_LIST:
        if (v.flags & VF_NOT_A_LIST) not_serializable(d, v);
        if (!dump_verbatim(d, v.u.list->json, depth)) dump_list(d, v.u.list, depth);
        return;
    case VT_TUPLE:
        if (!dump_verbatim(d, v.u.list->json, depth)) dump_list(d, v.u.list, depth);
        return;
    case VT_DICT:
        if (!dump_verbatim(d, v.u.dict->json, depth)) dump_dict(d, v.u.dict, depth);
        return;
    default: not_serializable(d, v);
    }
}

void json_dump(Rt *rt, StrBuf *sb, Value v, const JsonDumpOpts *o) {
    JsonDumpOpts defaults;
    if (!o) {
        json_opts_default(&defaults);
        o = &defaults;
    }
    Dumper d = {rt, sb, o->ensure_ascii, o->sort_keys, rt->lim.max_json_depth, NULL, 0, NULL, NULL, 0, 0,
                NULL, 0, false, false};
    enum { NL_LEVELS = 16 };
    char nl[256];   /* d.nl: up to NL_LEVELS levels, fewer of a long indent */
    if (o->indent_str || o->indent >= 0) {
        d.indent_len = o->indent_str ? strlen(o->indent_str) : (size_t)o->indent;
        size_t levels = d.indent_len ? (sizeof nl - 1) / d.indent_len : NL_LEVELS;
        d.nl_levels = levels < NL_LEVELS ? (unsigned)levels : NL_LEVELS;
        d.nl = nl;
        nl[0] = '\n';
        if (o->indent_str) {
            d.indent = o->indent_str;
            for (unsigned k = 0; k < d.nl_levels; k++) memcpy(nl + 1 + k * d.indent_len, d.indent, d.indent_len);
        } else if (d.nl_levels) {
            memset(nl + 1, ' ', d.nl_levels * d.indent_len);
            d.indent = nl + 1;   /* indent_len spaces */
        } else {
            char *spaces = rt_alloc(rt, d.indent_len + 1);
            memset(spaces, ' ', d.indent_len);
            spaces[d.indent_len] = '\0';
            d.indent = spaces;
        }
    }
    d.item_sep = o->item_sep ? o->item_sep : d.indent ? "," : ", ";
    d.key_sep = o->key_sep ? o->key_sep : ": ";
    d.item_sep_len = o->item_sep ? strlen(d.item_sep) : d.indent ? 1 : 2;
    d.key_sep_len = o->key_sep ? strlen(d.key_sep) : 2;
    d.python_seps = !d.indent && d.item_sep_len == 2 && memcmp(d.item_sep, ", ", 2) == 0 && d.key_sep_len == 2 &&
                    memcmp(d.key_sep, ": ", 2) == 0;
    d.verbatim = d.python_seps && !d.ensure_ascii && !d.sort_keys;
    dump_value(&d, v, 0);
}
