/* unicode.c — UTF-8 coding and Python 3.11's per-code-point Unicode
 * properties and case mappings, looked up in the generated tables of
 * unicode_tables.c. Code points below 0x800 are a direct array lookup. */
#include "unicode.h"
#include <string.h>
#include "unicode_tables.h"

/* ---- UTF-8 ---- */

bool utf8_validate(const char *s, size_t n, size_t *bad_offset) {
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        unsigned c = p[i];
        if (c < 0x80) {
            /* text that is not ASCII is mostly ASCII still: eight bytes
             * that all are, passed at once */
            uint64_t x;
            if (n - i >= 8 && (memcpy(&x, p + i, 8), !(x & 0x8080808080808080u))) i += 8;
            else i++;
            continue;
        }
        size_t len;
        uint32_t min;
        if (c >= 0xC2 && c <= 0xDF) { len = 2; min = 0x80; }
        else if (c >= 0xE0 && c <= 0xEF) { len = 3; min = 0x800; }
        else if (c >= 0xF0 && c <= 0xF4) { len = 4; min = 0x10000; }
        else goto bad;
        if (n - i < len) goto bad;
        uint32_t cp = c & (0xFF >> (len + 1));
        for (size_t k = 1; k < len; k++) {
            if ((p[i + k] & 0xC0) != 0x80) goto bad;
            cp = (cp << 6) | (p[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) goto bad;
        i += len;
    }
    return true;
bad:
    if (bad_offset) *bad_offset = i;
    return false;
}

uint32_t utf8_next(const char *s, size_t n, size_t *i) {
    const unsigned char *p = (const unsigned char *)s + *i;
    unsigned c = p[0];
    if (c < 0x80) {
        *i += 1;
        return c;
    }
    /* Input is valid UTF-8, but stay in bounds even if it is not. */
    size_t left = n - *i;
    if (c < 0xE0 && left >= 2) {
        *i += 2;
        return ((c & 0x1Fu) << 6) | (p[1] & 0x3Fu);
    }
    if (c < 0xF0 && left >= 3) {
        *i += 3;
        return ((c & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu);
    }
    if (left >= 4) {
        *i += 4;
        return ((c & 0x07u) << 18) | ((p[1] & 0x3Fu) << 12) | ((p[2] & 0x3Fu) << 6) |
               (p[3] & 0x3Fu);
    }
    *i += 1;
    return 0xFFFD;
}

size_t utf8_prev(const char *s, size_t i) {
    const unsigned char *p = (const unsigned char *)s;
    do {
        i--;
    } while (i > 0 && (p[i] & 0xC0) == 0x80);
    return i;
}

int utf8_encode(uint32_t cp, char out[4]) {
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

size_t utf8_count(const char *s, size_t n) {
    /* Every byte that is not a continuation byte starts a code point. */
    size_t cont = 0, i = 0;
    /* eight bytes at a time: a continuation byte has bit 7 set, bit 6 clear;
     * its flags, moved to bit 0 of each byte, are summed by a multiply
     * (without -mpopcnt, __builtin_popcountll is a libgcc call, and it was
     * a third of Phi-4-reasoning's renders) */
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, s + i, 8);
        uint64_t ones = (x & ~(x << 1) & 0x8080808080808080ULL) >> 7;
        cont += (size_t)((ones * 0x0101010101010101ULL) >> 56);
    }
    for (; i < n; i++) cont += ((unsigned char)s[i] & 0xC0) == 0x80;
    return n - cont;
}

size_t utf8_offset(const char *s, size_t n, size_t k) {
    size_t i = 0;
    while (k > 0 && i < n) {
        i++;
        while (i < n && ((unsigned char)s[i] & 0xC0) == 0x80) i++;
        k--;
    }
    return i;
}

/* ---- properties ---- */

static unsigned props(uint32_t cp) {
    if (cp < UC_DIRECT_LIMIT) return uc_direct_props[cp];
    /* Last entry whose start <= cp (entry 0 starts at 0). */
    size_t lo = 0, hi = uc_prop_count;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (uc_prop_start[mid] <= cp) lo = mid;
        else hi = mid;
    }
    return uc_prop_bits[lo];
}

/* split()/strip() ask this of every character: CJK and emoji text must not
 * pay for a table search. */
bool uc_isspace(uint32_t cp) { return cp <= uc_space_max && (props(cp) & UCP_SPACE); }
bool uc_isalpha(uint32_t cp) { return props(cp) & UCP_ALPHA; }
bool uc_isdecimal(uint32_t cp) { return props(cp) & UCP_DECIMAL; }
bool uc_isdigit(uint32_t cp) { return props(cp) & UCP_DIGIT; }
bool uc_isnumeric(uint32_t cp) { return props(cp) & UCP_NUMERIC; }
bool uc_isalnum(uint32_t cp) {
    return props(cp) & (UCP_ALPHA | UCP_DECIMAL | UCP_DIGIT | UCP_NUMERIC);
}
bool uc_isupper(uint32_t cp) { return props(cp) & UCP_UPPER; }
bool uc_islower(uint32_t cp) { return props(cp) & UCP_LOWER; }
bool uc_istitle(uint32_t cp) { return props(cp) & UCP_TITLE; }
bool uc_iscased(uint32_t cp) { return props(cp) & UCP_CASED; }
bool uc_iscaseignorable(uint32_t cp) { return props(cp) & UCP_CASE_IGNORABLE; }
bool uc_isprintable(uint32_t cp) { return props(cp) & UCP_PRINTABLE; }
bool uc_isidstart(uint32_t cp) { return props(cp) & UCP_ID_START; }
bool uc_isidcontinue(uint32_t cp) { return props(cp) & UCP_ID_CONTINUE; }
bool uc_isnamechar(uint32_t cp) { return props(cp) & UCP_NAME; }
bool uc_islinebreak(uint32_t cp) { return cp <= uc_linebreak_max && (props(cp) & UCP_LINEBREAK); }

/* ---- case mappings ---- */

static const UcCaseRun *find_case_run(uint32_t cp) {
    size_t lo = 0, hi = uc_case_run_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (uc_case_runs[mid].start <= cp) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return NULL;
    const UcCaseRun *r = &uc_case_runs[lo - 1];
    uint32_t off = cp - r->start;
    if (off % r->stride != 0 || off / r->stride >= r->count) return NULL;
    return r;
}

static int special_mapping(uint32_t cp, int kind, uint32_t out[3]) {
    size_t lo = 0, hi = uc_case_special_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const UcCaseSpecial *e = &uc_case_special[mid];
        if (e->cp < cp || (e->cp == cp && e->kind < kind)) lo = mid + 1;
        else hi = mid;
    }
    /* The record said it is there; the generator guarantees it. */
    const UcCaseSpecial *e = &uc_case_special[lo];
    for (int k = 0; k < e->n; k++) out[k] = e->out[k];
    return e->n;
}

static int map_case(uint32_t cp, int kind, uint32_t out[3]) {
    if (cp < 128) {
        /* ASCII: only letters map; casefold is lower. */
        bool upper_target = kind == UC_UPPER || kind == UC_TITLE;
        if (upper_target && cp >= 'a' && cp <= 'z') cp -= 32;
        else if (!upper_target && cp >= 'A' && cp <= 'Z') cp += 32;
        out[0] = cp;
        return 1;
    }
    const UcCaseRun *run = find_case_run(cp);
    if (!run) {
        out[0] = cp;
        return 1;
    }
    const UcCaseRecord *rec = &uc_case_records[run->record];
    if (rec->special & (1u << kind)) return special_mapping(cp, kind, out);
    out[0] = (uint32_t)((int32_t)cp + rec->delta[kind]);
    return 1;
}

int uc_toupper(uint32_t cp, uint32_t out[3]) { return map_case(cp, UC_UPPER, out); }
int uc_tolower(uint32_t cp, uint32_t out[3]) { return map_case(cp, UC_LOWER, out); }
int uc_totitle(uint32_t cp, uint32_t out[3]) { return map_case(cp, UC_TITLE, out); }
int uc_casefold(uint32_t cp, uint32_t out[3]) { return map_case(cp, UC_FOLD, out); }
