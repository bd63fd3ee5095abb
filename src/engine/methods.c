/* methods.c — the Python methods Jinja2's immutable sandbox lets templates
 * call: str (and markupsafe's Markup overrides), list/tuple, dict, float.
 *
 * Semantics follow CPython 3.11 (Objects/unicodeobject.c, stringlib) down to
 * the argument-parsing error messages. Strings are UTF-8: substring search,
 * split and replace work on bytes (UTF-8 is self-synchronising, so a byte
 * match is a code point match); positions and widths are code points, with
 * an ASCII fast path wherever the conversion would cost a scan. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "bigint.h"
#include "builtins.h"
#include "lexer.h"
#include "unicode.h"

/* ======================================================================
 * Argument binding, with CPython's messages for each parsing convention.
 * ====================================================================== */

typedef enum SigStyle {
    SIG_NOARGS,    /* METH_NOARGS: "str.upper() takes no arguments (1 given)" */
    SIG_ONE,       /* METH_O: "str.join() takes exactly one argument (0 given)" */
    SIG_CLINIC,    /* positional-only clinic: "center expected at least 1 argument, got 0" */
    SIG_TUPLE,     /* PyArg_ParseTuple: "find() takes at least 1 argument (0 given)" */
    SIG_KEYWORDS   /* keywords allowed: "'x' is an invalid keyword argument for split()" */
} SigStyle;

#define MAX_PARAMS 3

struct Method;
typedef Value (*MethodFn)(Rt *rt, Value self, const Value *argv, const struct Method *m);

typedef struct Method {
    const char *name;
    uint8_t len;                   /* of name */
    uint8_t style, min, max;
    int op;                        /* variant selector shared handlers switch on */
    MethodFn fn;
    const char *const *kwnames;    /* SIG_KEYWORDS only: parameter names */
} Method;

static const char *plural(int n) { return n == 1 ? "" : "s"; }

static bool str_is(const Str *s, const char *z) { return strcmp(s->data, z) == 0; }

/* Bind args into argv[0..m->max): keywords, or a count out of range (then
 * it throws). arg_vector takes the usual calls without it. */
static void bind_args_slow(Rt *rt, const char *owner, const Method *m, const Args *a, Value *argv) {
    for (int i = 0; i < m->max; i++) argv[i] = v_missing();
    int npos = a->npos, nkw = a->nkw;
    if (m->style != SIG_KEYWORDS && nkw > 0) {
        /* METH_VARARGS functions name themselves without their type here */
        if (m->style == SIG_TUPLE)
            rt_throw(rt, CF_ERR_TYPE, "%s() takes no keyword arguments", m->name);
        rt_throw(rt, CF_ERR_TYPE, "%s.%s() takes no keyword arguments", owner, m->name);
    }
    switch ((SigStyle)m->style) {
    case SIG_NOARGS:
        if (npos > 0)
            rt_throw(rt, CF_ERR_TYPE, "%s.%s() takes no arguments (%d given)", owner, m->name,
                     npos);
        break;
    case SIG_ONE:
        if (npos != 1)
            rt_throw(rt, CF_ERR_TYPE, "%s.%s() takes exactly one argument (%d given)", owner,
                     m->name, npos);
        break;
    case SIG_CLINIC:
        if (npos < m->min)
            rt_throw(rt, CF_ERR_TYPE, "%s expected at least %d argument%s, got %d", m->name,
                     m->min, plural(m->min), npos);
        if (npos > m->max)
            rt_throw(rt, CF_ERR_TYPE, "%s expected at most %d argument%s, got %d", m->name,
                     m->max, plural(m->max), npos);
        break;
    case SIG_TUPLE:
        if (npos < m->min)
            rt_throw(rt, CF_ERR_TYPE, "%s() takes at least %d argument%s (%d given)", m->name,
                     m->min, plural(m->min), npos);
        if (npos > m->max)
            rt_throw(rt, CF_ERR_TYPE, "%s() takes at most %d argument%s (%d given)", m->name,
                     m->max, plural(m->max), npos);
        break;
    case SIG_KEYWORDS:
        if (npos + nkw > m->max)
            rt_throw(rt, CF_ERR_TYPE, "%s() takes at most %d %sargument%s (%d given)", m->name,
                     m->max, npos == 0 ? "keyword " : "", plural(m->max), npos + nkw);
        for (int i = 0; i < npos; i++)
            for (int k = 0; k < nkw; k++)
                if (str_is(a->kwnames[k], m->kwnames[i]))
                    rt_throw(rt, CF_ERR_TYPE,
                             "argument for %s() given by name ('%s') and position (%d)",
                             m->name, m->kwnames[i], i + 1);
        for (int k = 0; k < nkw; k++) {
            int slot = -1;
            for (int i = npos; i < m->max && slot < 0; i++)
                if (str_is(a->kwnames[k], m->kwnames[i])) slot = i;
            if (slot < 0)
                rt_throw(rt, CF_ERR_TYPE, "'%s' is an invalid keyword argument for %s()",
                         a->kwnames[k]->data, m->name);
            argv[slot] = a->kwvals[k];
        }
        break;
    }
    for (int i = 0; i < npos; i++) argv[i] = a->pos[i];
}

/* The argument vector m's handler reads, argv[0..m->max) (VT_MISSING
 * where not given). Almost every call passes a few positional arguments
 * within m's range (every style's min and max bound the positional count)
 * and no keyword. Those need no binding: with none, a shared all-missing
 * vector (VT_MISSING is 0); with all, the args' own; else the given ones
 * copied into buf (MAX_PARAMS slots, straight-line). The rest (keywords,
 * a count out of range) are bound, or refused, by bind_args_slow. */
static const Value none_given[MAX_PARAMS];

static inline const Value *arg_vector(Rt *rt, const char *owner, const Method *m, const Args *a,
                                      Value *buf) {
    int npos = a->npos;
    if (a->nkw || npos < m->min || npos > m->max) {
        bind_args_slow(rt, owner, m, a, buf);
        return buf;
    }
    if (npos == 0) return none_given;
    if (npos == m->max) return a->pos;
    _Static_assert(MAX_PARAMS == 3, "arg_vector fills three slots");
    Value missing = v_missing();
    buf[0] = a->pos[0];
    buf[1] = npos > 1 ? a->pos[1] : missing;
    buf[2] = missing;   /* npos < max <= 3 */
    return buf;
}

/* Is the C string `known` exactly the n bytes at name? (A name read from a
 * template string may hold a NUL, so strncmp alone could match a shorter
 * `known` and the check of known[n] would read past its end.) */
static bool name_is(const char *known, const char *name, size_t n) {
    return strnlen(known, n + 1) == n && memcmp(known, name, n) == 0;
}

static const Method *find_method(const Method *table, size_t count, const char *name,
                                 size_t n) {
    if (n == 0) return NULL;
    for (size_t i = 0; i < count; i++)   /* first byte filters out almost all */
        if (table[i].name[0] == name[0] && name_is(table[i].name, name, n)) return &table[i];
    return NULL;
}

/* ---- argument conversions ---- */

static bool given(Value v) { return v.type != VT_MISSING; }

/* Python's type name as _PyArg_BadArgument prints it (None, not NoneType). */
static const char *bad_arg_name(Value v) {
    return v.type == VT_NONE ? "None" : v_type_name(v);
}

/* operator.index() into a C Py_ssize_t (int64). */
static int64_t arg_ssize(Rt *rt, Value v) {
    switch (v.type) {
    case VT_INT: return v.u.i;
    case VT_BOOL: return v.u.b;
    case VT_BIGINT:
        rt_throw(rt, CF_ERR_OVERFLOW, "Python int too large to convert to C ssize_t");
    default:
        rt_throw(rt, CF_ERR_TYPE, "'%s' object cannot be interpreted as an integer",
                 v_type_name(v));
    }
}

/* operator.index() into a C int. */
static int arg_cint(Rt *rt, Value v) {
    if (v.type == VT_BIGINT || (v.type == VT_INT && (v.u.i > INT32_MAX || v.u.i < INT32_MIN)))
        rt_throw(rt, CF_ERR_OVERFLOW, "Python int too large to convert to C int");
    return (int)arg_ssize(rt, v);
}

/* A slice bound (str.find start/end, list.index start/stop): clamps huge
 * integers instead of failing, as _PyEval_SliceIndex does. */
static int64_t arg_slice_index(Rt *rt, Value v, int64_t dflt, bool none_ok) {
    switch (v.type) {
    case VT_MISSING: return dflt;
    case VT_INT: return v.u.i;
    case VT_BOOL: return v.u.b;
    case VT_BIGINT: return v.u.s->data[0] == '-' ? INT64_MIN : INT64_MAX;
    case VT_NONE:
        if (none_ok) return dflt;
        /* fall through */
    default:
        rt_throw(rt, CF_ERR_TYPE, none_ok
                     ? "slice indices must be integers or None or have an __index__ method"
                     : "slice indices must be integers or have an __index__ method");
    }
}

/* Python's ADJUST_INDICES: clamp end to len, resolve negatives. */
static void adjust_indices(int64_t *start, int64_t *end, int64_t len) {
    if (*end > len) *end = len;
    else if (*end < 0) {
        *end += len;
        if (*end < 0) *end = 0;
    }
    if (*start < 0) {
        *start += len;
        if (*start < 0) *start = 0;
    }
}

/* ======================================================================
 * Text helpers
 * ====================================================================== */

/* A string being worked on: bytes plus whether it is pure ASCII (then byte
 * offsets are code point indices). */
typedef struct Text {
    const char *p;
    size_t n;
    size_t nchars;
    bool ascii;
} Text;

static Text text_of(Value v) {
    Str *s = v.u.s;
    size_t nchars = str_nchars(s);
    Text t = {s->data, s->len, nchars, nchars == s->len};
    return t;
}

static size_t text_byte_at(Text t, size_t cp) {
    if (t.ascii || cp == 0) return cp;
    if (cp >= t.nchars) return t.n;  /* the usual `end`: no scan */
    return utf8_offset(t.p, t.n, cp);
}

static size_t text_cp_at(Text t, size_t byte) {
    return t.ascii ? byte : utf8_count(t.p, byte);
}

static uint32_t text_cp(Text t, size_t *i) {
    unsigned char c = (unsigned char)t.p[*i];
    if (c < 0x80) {
        (*i)++;
        return c;
    }
    return utf8_next(t.p, t.n, i);
}

/* Work accounting: one step per call plus one per KB handled. */
static void charge(Rt *rt, size_t bytes) { rt_step(rt, 1 + bytes / 1024); }

/* Result string with the receiver's Markup-ness (every str-returning method
 * of Markup is overridden to return Markup). */
static Value keep_kind(Value self, Value result) {
    result.flags = (uint8_t)((result.flags & ~VF_MARKUP) | (self.flags & VF_MARKUP));
    return result;
}

static Value slice_value(Rt *rt, Value self, Text t, size_t from, size_t to) {
    if (from == 0 && to == t.n) return self;
    Str *r = str_alloc(rt, to - from);   /* copy_bytes: slices are mostly short */
    copy_bytes(r->data, t.p + from, to - from);
    return keep_kind(self, v_str_of(r));
}

/* The searches below are naive, O(n*m) on adversarial input: charge the
 * comparisons (1 step per KB compared) so that stays bounded. */
static void charge_compare(Rt *rt, size_t *work, size_t nlen) {
    *work += nlen;
    if (*work >= 64 * 1024) {
        rt_step(rt, *work / 1024);
        *work = 0;
    }
}

/* Forward byte search of needle in hay[from, to); returns offset or -1. */
static int64_t find_bytes(Rt *rt, const char *hay, size_t from, size_t to, const char *needle,
                          size_t nlen) {
    if (nlen == 0) return from <= to ? (int64_t)from : -1;
    if (to < from || to - from < nlen) return -1;
    const char *p = hay + from, *last = hay + to - nlen;
    if (nlen == 1) {   /* replace('\n', ...), split(','): memchr finds it whole */
        p = memchr(p, needle[0], to - from);
        return p ? p - hay : -1;
    }
    size_t work = 0;
    while (p <= last) {
        p = memchr(p, needle[0], (size_t)(last - p) + 1);
        if (!p) return -1;
        if (memcmp(p, needle, nlen) == 0) return p - hay;
        charge_compare(rt, &work, nlen);
        p++;
    }
    return -1;
}

/* Backward byte search: the last occurrence within hay[from, to). */
static int64_t rfind_bytes(Rt *rt, const char *hay, size_t from, size_t to, const char *needle,
                           size_t nlen) {
    if (nlen == 0) return from <= to ? (int64_t)to : -1;
    if (to < from || to - from < nlen) return -1;
    size_t work = 0;
    for (size_t i = to - nlen + 1; i-- > from;) {
        if (hay[i] != needle[0]) continue;
        if (memcmp(hay + i, needle, nlen) == 0) return (int64_t)i;
        charge_compare(rt, &work, nlen);
    }
    return -1;
}

static bool space_at(Text t, size_t i, size_t *next) {
    size_t j = i;
    uint32_t cp = text_cp(t, &j);
    *next = j;
    return uc_isspace(cp);
}

/* Put `unit` (one character's bytes) `count` times. The run is built in
 * its own block by doubling (str_alloc refuses one beyond max_string), not
 * copied from sb itself, whose buffer may move while it grows. */
static void put_repeated(StrBuf *sb, const char *unit, size_t ulen, size_t count) {
    if (count == 0) return;
    size_t total = count > SIZE_MAX / ulen ? SIZE_MAX : count * ulen;
    Str *run = str_alloc(sb->rt, total);
    memcpy(run->data, unit, ulen);
    for (size_t done = ulen; done < total;) {
        size_t k = done < total - done ? done : total - done;
        memcpy(run->data + done, run->data, k);
        done += k;
    }
    sb_put(sb, run->data, total);
}

/* ======================================================================
 * str: case mapping
 * ====================================================================== */

/* CPython's handle_capital_sigma: U+03A3 at bytes [at, after) lowers to
 * final sigma when preceded by a cased letter (skipping case-ignorables) and
 * not followed by one. */
static uint32_t lower_sigma(Text t, size_t at, size_t after) {
    bool final_sigma = false;
    size_t j = at;
    while (j > 0) {
        j = utf8_prev(t.p, j);
        size_t k = j;
        uint32_t c = utf8_next(t.p, t.n, &k);
        if (!uc_iscaseignorable(c)) {
            final_sigma = uc_iscased(c);
            break;
        }
    }
    if (final_sigma) {
        size_t k = after;
        while (k < t.n) {
            uint32_t c = utf8_next(t.p, t.n, &k);
            if (!uc_iscaseignorable(c)) {
                final_sigma = !uc_iscased(c);
                break;
            }
        }
    }
    return final_sigma ? 0x3C2 : 0x3C3;
}

/* lower_ucs4: lowercase with the final-sigma context rule. */
static int lower_at(Text t, size_t at, size_t after, uint32_t cp, uint32_t out[3]) {
    if (cp == 0x3A3) {
        out[0] = lower_sigma(t, at, after);
        return 1;
    }
    return uc_tolower(cp, out);
}

static void put_mapped(StrBuf *sb, const uint32_t *cps, int n) {
    for (int k = 0; k < n; k++) sb_put_cp(sb, cps[k]);
}

enum { CASE_UPPER, CASE_LOWER, CASE_CASEFOLD, CASE_SWAPCASE, CASE_TITLE, CASE_CAPITALIZE };

/* x (eight ASCII bytes) with the letters in [lo, hi] ('a'..'z' or 'A'..'Z')
 * case-swapped: with every byte below 0x80, adding 0x80 - lo sets a byte's
 * bit 7 when it is >= lo, adding 0x7F - hi when it is > hi, and no sum
 * carries into the next byte. */
static inline uint64_t ascii_flip8(uint64_t x, char lo, char hi) {
    const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
    uint64_t at_least_lo = x + ones * (uint64_t)(0x80 - lo), above_hi = x + ones * (uint64_t)(0x7F - hi);
    return x ^ ((at_least_lo & ~above_hi) & high) >> 2;
}

static inline char ascii_flip1(char c, char lo, char hi) { return c >= lo && c <= hi ? (char)(c ^ 32) : c; }

/* d = the ASCII bytes s with the letters in [lo, hi] case-swapped. */
static void ascii_flip(char *d, const char *s, size_t n, char lo, char hi) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, s + i, 8);
        x = ascii_flip8(x, lo, hi);
        memcpy(d + i, &x, 8);
    }
    for (; i < n; i++) d[i] = ascii_flip1(s[i], lo, hi);
}

/* The case mappings and case properties of the two-byte UTF-8 range,
 * U+0080..U+07FF (Latin-1, Latin Extended, Greek, Cyrillic, Armenian,
 * Hebrew, Arabic: most non-ASCII text), straight from a table: a mapped
 * code point, or 0 where the mapping is not one code point or depends on
 * context (special casings such as U+00DF -> "SS", the final sigma), which
 * take the full path. Built once from the full tables, on first use. */
enum { TWO_BYTE_FIRST = 0x80, TWO_BYTE_END = 0x800 };
enum { TB_UPPER, TB_LOWER, TB_FOLD, TB_TITLE, TB_KINDS };
enum { TB_CASED = 1, TB_ISUPPER = 2, TB_ISLOWER = 4 };
typedef struct TwoByteCase { uint16_t map[TB_KINDS]; uint8_t flags; } TwoByteCase;
static TwoByteCase two_byte_case[TWO_BYTE_END - TWO_BYTE_FIRST];
static pthread_once_t two_byte_case_once = PTHREAD_ONCE_INIT;

static void two_byte_case_build(void) {
    for (uint32_t cp = TWO_BYTE_FIRST; cp < TWO_BYTE_END; cp++) {
        TwoByteCase *e = &two_byte_case[cp - TWO_BYTE_FIRST];
        for (int k = 0; k < TB_KINDS; k++) {
            uint32_t out[3];
            int n = k == TB_UPPER ? uc_toupper(cp, out) : k == TB_LOWER ? uc_tolower(cp, out)
                  : k == TB_FOLD ? uc_casefold(cp, out) : uc_totitle(cp, out);
            bool context = cp == 0x3A3 && (k == TB_LOWER || k == TB_FOLD);
            e->map[k] = n == 1 && out[0] <= 0xFFFF && !context ? (uint16_t)out[0] : 0;
        }
        e->flags = (uint8_t)((uc_iscased(cp) ? TB_CASED : 0) | (uc_isupper(cp) ? TB_ISUPPER : 0) |
                             (uc_islower(cp) ? TB_ISLOWER : 0));
    }
}

/* Append code point cp (nonzero, from two_byte_case) as UTF-8. */
static inline void put_table_cp(StrBuf *sb, uint32_t cp) {
    if (cp >= TWO_BYTE_FIRST && cp < TWO_BYTE_END) {
        char enc[2] = {(char)(0xC0 | cp >> 6), (char)(0x80 | (cp & 0x3F))};
        sb_put(sb, enc, 2);
        return;
    }
    char enc[4];
    sb_put(sb, enc, (size_t)utf8_encode(cp, enc));
}

/* upper / lower / casefold of a string that is not all ASCII: ASCII runs
 * mapped eight bytes a step, two-byte characters through two_byte_case, the
 * rest (and what that table leaves out) through the full mapping. */
static void case_map_fast(StrBuf *sb, Text t, int op) {
    pthread_once(&two_byte_case_once, two_byte_case_build);
    int kind = op == CASE_UPPER ? TB_UPPER : op == CASE_LOWER ? TB_LOWER : TB_FOLD;
    char lo = op == CASE_UPPER ? 'a' : 'A', hi = op == CASE_UPPER ? 'z' : 'Z';
    size_t i = 0;
    while (i < t.n) {
        if (i + 8 <= t.n) {
            uint64_t x;
            memcpy(&x, t.p + i, 8);
            if (!(x & 0x8080808080808080ULL)) {
                x = ascii_flip8(x, lo, hi);
                char enc[8];
                memcpy(enc, &x, 8);
                sb_put(sb, enc, 8);
                i += 8;
                continue;
            }
        }
        unsigned char c = (unsigned char)t.p[i];
        if (c < 0x80) {
            sb_putc(sb, ascii_flip1((char)c, lo, hi));
            i++;
            continue;
        }
        if ((c & 0xE0) == 0xC0) {   /* valid UTF-8: a continuation byte follows */
            uint32_t cp = (uint32_t)(c & 0x1F) << 6 | ((unsigned char)t.p[i + 1] & 0x3F);
            uint32_t mapped = two_byte_case[cp - TWO_BYTE_FIRST].map[kind];
            if (mapped) {
                put_table_cp(sb, mapped);
                i += 2;
                continue;
            }
        }
        size_t at = i;
        uint32_t cp = utf8_next(t.p, t.n, &i), out[3];
        int n = op == CASE_UPPER ? uc_toupper(cp, out)
              : op == CASE_LOWER ? lower_at(t, at, i, cp, out)
              : uc_casefold(cp, out);
        put_mapped(sb, out, n);
    }
}

/* swapcase / title / capitalize of a string that is not all ASCII: ASCII
 * and two-byte characters mapped from tables, the rest (and what the table
 * leaves out) through the full mappings. */
static void case_map_stateful(StrBuf *sb, Text t, int op) {
    pthread_once(&two_byte_case_once, two_byte_case_build);
    bool previous_is_cased = false;
    size_t i = 0;
    while (i < t.n) {
        size_t at = i;
        unsigned char c = (unsigned char)t.p[i];
        if (c < 0x80) {
            bool up = c >= 'A' && c <= 'Z', low = c >= 'a' && c <= 'z', flip;
            if (op == CASE_SWAPCASE) flip = up || low;
            else if (op == CASE_TITLE) flip = previous_is_cased ? up : low;
            else flip = at == 0 ? low : up;   /* capitalize */
            previous_is_cased = up || low;
            sb_putc(sb, flip ? (char)(c ^ 32) : (char)c);
            i++;
            continue;
        }
        if ((c & 0xE0) == 0xC0) {
            uint32_t cp = (uint32_t)(c & 0x1F) << 6 | ((unsigned char)t.p[i + 1] & 0x3F);
            const TwoByteCase *e = &two_byte_case[cp - TWO_BYTE_FIRST];
            uint32_t mapped;
            if (op == CASE_SWAPCASE)
                mapped = e->flags & TB_ISUPPER ? e->map[TB_LOWER] : e->flags & TB_ISLOWER ? e->map[TB_UPPER] : cp;
            else if (op == CASE_TITLE) mapped = previous_is_cased ? e->map[TB_LOWER] : e->map[TB_TITLE];
            else mapped = at == 0 ? e->map[TB_TITLE] : e->map[TB_LOWER];
            if (mapped) {
                if (op == CASE_TITLE) previous_is_cased = e->flags & TB_CASED;
                put_table_cp(sb, mapped);
                i += 2;
                continue;
            }
        }
        uint32_t cp = text_cp(t, &i), out[3];
        int n;
        switch (op) {
        case CASE_SWAPCASE:
            if (uc_isupper(cp)) n = lower_at(t, at, i, cp, out);
            else if (uc_islower(cp)) n = uc_toupper(cp, out);
            else out[0] = cp, n = 1;
            break;
        case CASE_TITLE:
            n = previous_is_cased ? lower_at(t, at, i, cp, out) : uc_totitle(cp, out);
            previous_is_cased = uc_iscased(cp);
            break;
        default: /* capitalize: title-case the first character, lower the rest */
            n = at == 0 ? uc_totitle(cp, out) : lower_at(t, at, i, cp, out);
            break;
        }
        put_mapped(sb, out, n);
    }
}

void str_case_into(StrBuf *sb, const char *p, size_t n, bool upper) {
    Text t = {p, n, 0, false};
    case_map_fast(sb, t, upper ? CASE_UPPER : CASE_LOWER);
}

static Value m_case(Rt *rt, Value self, const Value *argv, const Method *m) {
    Text t = text_of(self);
    charge(rt, t.n);
    if (t.ascii) {
        /* ASCII maps byte for byte: fill the result directly (the cased
         * characters are the letters; title case is upper case) */
        Str *r = str_alloc(rt, t.n);
        if (m->op == CASE_UPPER) ascii_flip(r->data, t.p, t.n, 'a', 'z');
        else if (m->op == CASE_LOWER || m->op == CASE_CASEFOLD) ascii_flip(r->data, t.p, t.n, 'A', 'Z');
        else {
            bool previous_is_cased = false;
            for (size_t i = 0; i < t.n; i++) {
                char c = t.p[i];
                bool up = c >= 'A' && c <= 'Z', low = c >= 'a' && c <= 'z', flip;
                if (m->op == CASE_SWAPCASE) flip = up || low;
                else if (m->op == CASE_TITLE) flip = previous_is_cased ? up : low;
                else flip = i == 0 ? low : up;   /* capitalize */
                previous_is_cased = up || low;
                r->data[i] = flip ? c ^ 32 : c;
            }
        }
        return keep_kind(self, v_str_of(r));
    }
    StrBuf sb;
    sb_init(rt, &sb, t.n + 8);
    if (m->op == CASE_UPPER || m->op == CASE_LOWER || m->op == CASE_CASEFOLD) case_map_fast(&sb, t, m->op);
    else case_map_stateful(&sb, t, m->op);
    return keep_kind(self, sb_to_value(&sb));
}

/* ======================================================================
 * str: predicates
 * ====================================================================== */

enum {
    IS_ALNUM, IS_ALPHA, IS_DECIMAL, IS_DIGIT, IS_NUMERIC, IS_SPACE, IS_PRINTABLE,
    IS_ASCII, IS_IDENTIFIER, IS_LOWER, IS_UPPER, IS_TITLE
};

static bool char_has(int op, uint32_t cp) {
    switch (op) {
    case IS_ALNUM: return uc_isalnum(cp);
    case IS_ALPHA: return uc_isalpha(cp);
    case IS_DECIMAL: return uc_isdecimal(cp);
    case IS_DIGIT: return uc_isdigit(cp);
    case IS_NUMERIC: return uc_isnumeric(cp);
    case IS_SPACE: return uc_isspace(cp);
    default: return uc_isprintable(cp);
    }
}

/* islower/isupper/istitle as CPython: cased characters decide. */
static bool text_case_test(Text t, int op) {
    bool cased = false, previous_is_cased = false;
    size_t i = 0;
    while (i < t.n) {
        uint32_t cp = text_cp(t, &i);
        bool up = uc_isupper(cp), low = uc_islower(cp), title = uc_istitle(cp);
        if (op == IS_LOWER) {
            if (up || title) return false;
            if (low) cased = true;
        } else if (op == IS_UPPER) {
            if (low || title) return false;
            if (up) cased = true;
        } else if (up || title) {
            if (previous_is_cased) return false;
            previous_is_cased = cased = true;
        } else if (low) {
            if (!previous_is_cased) return false;
            previous_is_cased = cased = true;
        } else {
            previous_is_cased = false;
        }
    }
    return cased;
}

static Value m_is(Rt *rt, Value self, const Value *argv, const Method *m) {
    Text t = text_of(self);
    charge(rt, t.n);
    switch (m->op) {
    case IS_ASCII: return v_bool(t.ascii);
    case IS_LOWER: case IS_UPPER: case IS_TITLE: return v_bool(text_case_test(t, m->op));
    case IS_IDENTIFIER: {
        if (t.n == 0) return v_bool(false);
        size_t i = 0;
        if (!uc_isidstart(text_cp(t, &i))) return v_bool(false);
        while (i < t.n)
            if (!uc_isidcontinue(text_cp(t, &i))) return v_bool(false);
        return v_bool(true);
    }
    default:
        /* Empty strings are not alpha/space/...; but they are printable. */
        if (t.n == 0) return v_bool(m->op == IS_PRINTABLE);
        for (size_t i = 0; i < t.n;)
            if (!char_has(m->op, text_cp(t, &i))) return v_bool(false);
        return v_bool(true);
    }
}

/* ======================================================================
 * str: searching
 * ====================================================================== */

enum { FIND, RFIND, INDEX, RINDEX, COUNT };

/* The [start, end) window of code points, adjusted; false if empty-invalid
 * (start beyond end). Byte offsets go to *bstart and *bend. */
static bool window(Rt *rt, Text t, const Value *argv, int64_t *start, int64_t *end,
                   size_t *bstart, size_t *bend) {
    *start = arg_slice_index(rt, argv[0], 0, true);
    *end = arg_slice_index(rt, argv[1], INT64_MAX, true);
    adjust_indices(start, end, (int64_t)t.nchars);
    if (*start > *end) return false;
    *bstart = text_byte_at(t, (size_t)*start);
    *bend = text_byte_at(t, (size_t)*end);
    return true;
}

static Str *require_str(Rt *rt, Value v) {
    if (v.type != VT_STR) rt_throw(rt, CF_ERR_TYPE, "must be str, not %s", v_type_name(v));
    return v.u.s;
}

static Value m_find(Rt *rt, Value self, const Value *argv, const Method *m) {
    Text t = text_of(self);
    int64_t start, end;
    size_t bs = 0, be = 0;
    bool ok = window(rt, t, argv + 1, &start, &end, &bs, &be);
    Str *sub = require_str(rt, argv[0]);
    charge(rt, t.n);
    if (m->op == COUNT) {
        if (!ok) return v_int(0);
        if (sub->len == 0) return v_int(end - start + 1);
        int64_t count = 0;
        for (int64_t pos; (pos = find_bytes(rt, t.p, bs, be, sub->data, sub->len)) >= 0;) {
            count++;
            bs = (size_t)pos + sub->len;
        }
        return v_int(count);
    }
    int64_t pos = -1;
    if (ok) {
        bool reverse = m->op == RFIND || m->op == RINDEX;
        pos = reverse ? rfind_bytes(rt, t.p, bs, be, sub->data, sub->len)
                      : find_bytes(rt, t.p, bs, be, sub->data, sub->len);
    }
    if (pos < 0) {
        if (m->op == INDEX || m->op == RINDEX)
            rt_throw(rt, CF_ERR_VALUE, "substring not found");
        return v_int(-1);
    }
    return v_int((int64_t)text_cp_at(t, (size_t)pos));
}

/* startswith/endswith: prefix is a str or a tuple of str. */
static Value m_affix(Rt *rt, Value self, const Value *argv, const Method *m) {
    bool ends = m->op;
    if (!given(argv[1]) && !given(argv[2]) && argv[0].type == VT_STR) {
        /* the common s.startswith('x'): whole string, bytes suffice */
        Str *s = self.u.s, *a = argv[0].u.s;
        return v_bool(a->len <= s->len && mem_equal(s->data + (ends ? s->len - a->len : 0), a->data, a->len));
    }
    Text t = text_of(self);
    int64_t start, end;
    size_t bs = 0, be = 0;
    bool ok = window(rt, t, argv + 1, &start, &end, &bs, &be);
    Value what = argv[0];
    if (what.type != VT_STR && what.type != VT_TUPLE)
        rt_throw(rt, CF_ERR_TYPE, "%s first arg must be str or a tuple of str, not %s", m->name,
                 v_type_name(what));
    size_t count = what.type == VT_STR ? 1 : what.u.list->len;
    rt_step(rt, 1 + count);
    for (size_t k = 0; k < count; k++) {
        Value item = what.type == VT_STR ? what : what.u.list->items[k];
        if (item.type != VT_STR)
            rt_throw(rt, CF_ERR_TYPE, "tuple for %s must only contain str, not %s", m->name,
                     v_type_name(item));
        Str *a = item.u.s;
        /* tailmatch compares code point lengths first; a byte match implies it */
        if (!ok || end - start < (int64_t)str_nchars(a)) continue;
        if (a->len <= be - bs &&
            memcmp(t.p + (ends ? be - a->len : bs), a->data, a->len) == 0)
            return v_bool(true);
    }
    return v_bool(false);
}

/* ======================================================================
 * str: strip, padding, tabs
 * ====================================================================== */

enum { STRIP_LEFT = 1, STRIP_RIGHT = 2, STRIP_BOTH = 3 };

/* The set of code points to strip: whitespace (chars is None), or chars. */
typedef struct StripSet {
    bool whitespace;         /* non-ASCII members: uc_isspace, not wide */
    uint8_t ascii_bits[16];  /* bitmap of the ASCII members */
    uint32_t *wide;          /* sorted non-ASCII members: binary searched, so a
                                long `chars` cannot make stripping quadratic */
    size_t nwide;
} StripSet;

/* Python's ASCII whitespace: \t \n \v \f \r, 0x1C..0x1F and space (the
 * bitmap spares a uc_isspace call per ASCII byte). */
static const StripSet strip_whitespace = {true, {0, 0x3E, 0, 0xF0, 0x01}, NULL, 0};

static int compare_cp(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static void strip_set_init(Rt *rt, StripSet *set, Value chars) {
    Text c = text_of(chars);
    charge(rt, c.n);
    if (!c.ascii) set->wide = rt_alloc(rt, c.nchars * sizeof *set->wide);
    for (size_t i = 0; i < c.n;) {
        uint32_t cp = text_cp(c, &i);
        if (cp < 128) set->ascii_bits[cp >> 3] |= (uint8_t)(1u << (cp & 7));
        else set->wide[set->nwide++] = cp;
    }
    if (set->nwide > 1) qsort(set->wide, set->nwide, sizeof *set->wide, compare_cp);
}

static bool strip_wide_member(const StripSet *set, uint32_t cp) {
    if (set->whitespace) return uc_isspace(cp);
    size_t lo = 0, hi = set->nwide;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (set->wide[mid] == cp) return true;
        if (set->wide[mid] < cp) lo = mid + 1;
        else hi = mid;
    }
    return false;
}

static inline bool strip_member(const StripSet *set, uint32_t cp) {
    if (cp < 128) return set->ascii_bits[cp >> 3] & (1u << (cp & 7));
    return strip_wide_member(set, cp);
}

/* Whitespace strip (op: STRIP_*) that has nothing to take: the ends it
 * strips are printable ASCII. */
static inline bool strip_ws_nothing(const Str *s, int op) {
    unsigned char first = s->len ? (unsigned char)s->data[0] : 0, last = s->len ? (unsigned char)s->data[s->len - 1] : 0;
    return (!(op & STRIP_LEFT) || (first > 0x20 && first < 0x80)) && (!(op & STRIP_RIGHT) || (last > 0x20 && last < 0x80));
}

static Value m_strip(Rt *rt, Value self, const Value *argv, const Method *m) {
    const StripSet *set = &strip_whitespace;
    StripSet given_set;
    Value chars = argv[0];
    if (given(chars) && chars.type != VT_NONE) {
        if (chars.type != VT_STR) rt_throw(rt, CF_ERR_TYPE, "%s arg must be None or str", m->name);
        memset(&given_set, 0, sizeof given_set);
        strip_set_init(rt, &given_set, chars);
        set = &given_set;
    }
    /* no code point count needed: strip walks bytes from both ends */
    Text t = {self.u.s->data, self.u.s->len, 0, false};
    charge(rt, t.n);
    if (set == &strip_whitespace && strip_ws_nothing(self.u.s, m->op)) return self;
    size_t from = 0, to = t.n;
    if (m->op & STRIP_LEFT) {
        while (from < to) {
            size_t next = from;
            if (!strip_member(set, text_cp(t, &next))) break;
            from = next;
        }
    }
    if (m->op & STRIP_RIGHT) {
        while (to > from) {
            size_t prev = (unsigned char)t.p[to - 1] < 0x80 ? to - 1 : utf8_prev(t.p, to), k = prev;
            if (!strip_member(set, text_cp(t, &k))) break;
            to = prev;
        }
    }
    return slice_value(rt, self, t, from, to);
}

/* The fill character of center/ljust/rjust; Markup escapes it first. */
static Text fill_char(Rt *rt, Value self, Value fill) {
    if (!given(fill)) {
        Text space = {" ", 1, 1, true};
        return space;
    }
    if (self.flags & VF_MARKUP) fill = markup_escape(rt, fill);
    if (fill.type != VT_STR)
        rt_throw(rt, CF_ERR_TYPE, "The fill character must be a unicode character, not %s",
                 v_type_name(fill));
    Text f = text_of(fill);
    if (f.nchars != 1)
        rt_throw(rt, CF_ERR_TYPE, "The fill character must be exactly one character long");
    return f;
}

enum { PAD_CENTER, PAD_LJUST, PAD_RJUST };

static Value pad(Rt *rt, Value self, Text t, size_t left, size_t right, Text fill) {
    StrBuf sb;
    sb_init(rt, &sb, t.n + 1);
    put_repeated(&sb, fill.p, fill.n, left);
    sb_put(&sb, t.p, t.n);
    put_repeated(&sb, fill.p, fill.n, right);
    return keep_kind(self, sb_to_value(&sb));
}

static Value m_pad(Rt *rt, Value self, const Value *argv, const Method *m) {
    int64_t width = arg_ssize(rt, argv[0]);
    Text fill = fill_char(rt, self, argv[1]);
    Text t = text_of(self);
    charge(rt, t.n);
    if (width <= (int64_t)t.nchars) return self;
    size_t marg = (size_t)width - t.nchars, left;
    switch (m->op) {
    case PAD_CENTER: left = marg / 2 + (marg & (size_t)width & 1); break;
    case PAD_LJUST: left = 0; break;
    default: left = marg; break;
    }
    return pad(rt, self, t, left, marg - left, fill);
}

static Value m_zfill(Rt *rt, Value self, const Value *argv, const Method *m) {
    int64_t width = arg_ssize(rt, argv[0]);
    Text t = text_of(self);
    charge(rt, t.n);
    if (width <= (int64_t)t.nchars) return self;
    size_t fill = (size_t)width - t.nchars;
    StrBuf sb;
    sb_init(rt, &sb, t.n + 1);
    bool sign = t.n > 0 && (t.p[0] == '+' || t.p[0] == '-');
    if (sign) sb_putc(&sb, t.p[0]);
    put_repeated(&sb, "0", 1, fill);
    sb_put(&sb, t.p + sign, t.n - sign);
    return keep_kind(self, sb_to_value(&sb));
}

static const char *const expandtabs_kw[] = {"tabsize"};

static Value m_expandtabs(Rt *rt, Value self, const Value *argv, const Method *m) {
    int tabsize = given(argv[0]) ? arg_cint(rt, argv[0]) : 8;
    Text t = text_of(self);
    charge(rt, t.n);
    if (!memchr(t.p, '\t', t.n)) return self;
    StrBuf sb;
    sb_init(rt, &sb, t.n + 16);
    size_t column = 0;
    for (size_t i = 0; i < t.n;) {
        size_t at = i;
        uint32_t cp = text_cp(t, &i);
        if (cp == '\t') {
            if (tabsize > 0) {
                size_t incr = (size_t)tabsize - column % (size_t)tabsize;
                put_repeated(&sb, " ", 1, incr);
                column += incr;
            }
            continue;
        }
        sb_put(&sb, t.p + at, i - at);
        column = (cp == '\n' || cp == '\r') ? 0 : column + 1;
    }
    return keep_kind(self, sb_to_value(&sb));
}

/* ======================================================================
 * str: split family
 * ====================================================================== */

static const char *const split_kw[] = {"sep", "maxsplit"};
static const char *const splitlines_kw[] = {"keepends"};

static void push_piece(Rt *rt, List *out, Value self, Text t, size_t from, size_t to) {
    rt_step(rt, 1);
    list_push(rt, out, slice_value(rt, self, t, from, to));
}

static void reverse_list(List *l) {
    for (size_t i = 0, j = l->len; i + 1 < j; i++, j--) {
        Value tmp = l->items[i];
        l->items[i] = l->items[j - 1];
        l->items[j - 1] = tmp;
    }
}

static void split_whitespace(Rt *rt, List *out, Value self, Text t, int64_t maxsplit) {
    size_t i = 0, next;
    while (maxsplit-- > 0) {
        while (i < t.n && space_at(t, i, &next)) i = next;
        if (i == t.n) break;
        size_t j = i;
        while (i < t.n && !space_at(t, i, &next)) i = next;
        push_piece(rt, out, self, t, j, i);
    }
    if (i < t.n) {
        /* maxsplit reached: the rest, minus leading whitespace, is one piece */
        while (i < t.n && space_at(t, i, &next)) i = next;
        if (i < t.n) push_piece(rt, out, self, t, i, t.n);
    }
}

/* Is the code point ending at byte `end` whitespace? Sets *start to its start. */
static bool space_before(Text t, size_t end, size_t *start) {
    size_t s = t.ascii ? end - 1 : utf8_prev(t.p, end);
    *start = s;
    return space_at(t, s, &end);
}

static void rsplit_whitespace(Rt *rt, List *out, Value self, Text t, int64_t maxsplit) {
    size_t i = t.n, prev;  /* i: end of the unprocessed prefix */
    while (maxsplit-- > 0) {
        while (i > 0 && space_before(t, i, &prev)) i = prev;
        if (i == 0) break;
        size_t j = i;
        while (i > 0 && !space_before(t, i, &prev)) i = prev;
        push_piece(rt, out, self, t, i, j);
    }
    if (i > 0) {
        while (i > 0 && space_before(t, i, &prev)) i = prev;
        if (i > 0) push_piece(rt, out, self, t, 0, i);
    }
    reverse_list(out);
}

/* How many pieces splitting on sep makes (at most max_items + 1: past that
 * the list cannot be built). Greedy matching from the left finds as many
 * separators as from the right, so this sizes rsplit's list as well. */
static size_t count_pieces(Rt *rt, Text t, const Str *sep, int64_t maxsplit) {
    size_t pieces = 1, i = 0;
    for (int64_t pos; pieces <= rt->lim.max_items && maxsplit-- > 0 &&
                      (pos = find_bytes(rt, t.p, i, t.n, sep->data, sep->len)) >= 0;) {
        pieces++;
        i = (size_t)pos + sep->len;
    }
    return pieces;
}

static Value m_split(Rt *rt, Value self, const Value *argv, const Method *m) {
    bool reverse = m->op;
    Value sep = argv[0];
    if (given(sep) && sep.type != VT_NONE && sep.type != VT_STR)
        rt_throw(rt, CF_ERR_TYPE, "must be str or None, not %s", v_type_name(sep));
    int64_t maxsplit = given(argv[1]) ? arg_ssize(rt, argv[1]) : -1;
    if (maxsplit < 0) maxsplit = INT64_MAX;
    Text t = text_of(self);
    charge(rt, t.n);
    if (!given(sep) || sep.type == VT_NONE) {
        List *out = list_new(rt, 4);
        if (reverse) rsplit_whitespace(rt, out, self, t, maxsplit);
        else split_whitespace(rt, out, self, t, maxsplit);
        return v_list_of(out);
    }
    Str *s = sep.u.s;
    if (s->len == 0) rt_throw(rt, CF_ERR_VALUE, "empty separator");
    /* sized to its pieces: a split into more than max_items stops before building them */
    List *out = list_new(rt, count_pieces(rt, t, s, maxsplit));
    if (!reverse) {
        size_t i = 0;
        for (int64_t pos; maxsplit-- > 0 && (pos = find_bytes(rt, t.p, i, t.n, s->data, s->len)) >= 0;) {
            push_piece(rt, out, self, t, i, (size_t)pos);
            i = (size_t)pos + s->len;
        }
        push_piece(rt, out, self, t, i, t.n);
    } else {
        size_t j = t.n;
        for (int64_t pos; maxsplit-- > 0 && (pos = rfind_bytes(rt, t.p, 0, j, s->data, s->len)) >= 0;) {
            push_piece(rt, out, self, t, (size_t)pos + s->len, j);
            j = (size_t)pos;
        }
        push_piece(rt, out, self, t, 0, j);
        reverse_list(out);
    }
    return v_list_of(out);
}

static Value m_splitlines(Rt *rt, Value self, const Value *argv, const Method *m) {
    bool keepends = given(argv[0]) && arg_cint(rt, argv[0]) != 0;
    Text t = text_of(self);
    charge(rt, t.n);
    List *out = list_new(rt, 4);
    size_t i = 0, j = 0;
    while (i < t.n) {
        size_t next = i;
        while (i < t.n) {
            unsigned char b = (unsigned char)t.p[i];
            if (b >= 0x20 && b < 0x80) {   /* printable ASCII: never a line break */
                i++;
                continue;
            }
            next = i;
            if (uc_islinebreak(text_cp(t, &next))) break;
            i = next;
        }
        size_t eol = i;
        if (i < t.n) {
            i = (t.p[i] == '\r' && i + 1 < t.n && t.p[i + 1] == '\n') ? i + 2 : next;
            if (keepends) eol = i;
        }
        push_piece(rt, out, self, t, j, eol);
        j = i;
    }
    return v_list_of(out);
}

/* partition / rpartition: a 3-tuple. */
static Value m_partition(Rt *rt, Value self, const Value *argv, const Method *m) {
    bool reverse = m->op;
    Str *sep = require_str(rt, argv[0]);
    if (sep->len == 0) rt_throw(rt, CF_ERR_VALUE, "empty separator");
    Text t = text_of(self);
    charge(rt, t.n);
    int64_t pos = reverse ? rfind_bytes(rt, t.p, 0, t.n, sep->data, sep->len)
                          : find_bytes(rt, t.p, 0, t.n, sep->data, sep->len);
    Value empty = keep_kind(self, v_str(rt, "", 0));
    List *out = list_new(rt, 3);
    if (pos < 0) {
        list_push(rt, out, reverse ? empty : self);
        list_push(rt, out, empty);
        list_push(rt, out, reverse ? self : empty);
    } else {
        list_push(rt, out, slice_value(rt, self, t, 0, (size_t)pos));
        /* CPython hands back the separator object itself */
        list_push(rt, out, (self.flags & VF_MARKUP) ? v_markup(argv[0]) : argv[0]);
        list_push(rt, out, slice_value(rt, self, t, (size_t)pos + sep->len, t.n));
    }
    return v_tuple_of(out);
}

/* ======================================================================
 * str: building
 * ====================================================================== */

static Value m_affix_remove(Rt *rt, Value self, const Value *argv, const Method *m) {
    bool suffix = m->op;
    Value a = argv[0];
    if (a.type != VT_STR)
        rt_throw(rt, CF_ERR_TYPE, "%s() argument must be str, not %s", m->name, bad_arg_name(a));
    Text t = text_of(self);
    Str *s = a.u.s;
    if (s->len == 0 || s->len > t.n) return self;
    if (suffix) {
        if (memcmp(t.p + t.n - s->len, s->data, s->len) != 0) return self;
        return slice_value(rt, self, t, 0, t.n - s->len);
    }
    if (memcmp(t.p, s->data, s->len) != 0) return self;
    return slice_value(rt, self, t, s->len, t.n);
}

static Value m_replace(Rt *rt, Value self, const Value *argv, const Method *m) {
    Value old = argv[0], repl = argv[1];
    if (self.flags & VF_MARKUP) repl = markup_escape(rt, repl);
    if (old.type != VT_STR)
        rt_throw(rt, CF_ERR_TYPE, "replace() argument 1 must be str, not %s", bad_arg_name(old));
    if (repl.type != VT_STR)
        rt_throw(rt, CF_ERR_TYPE, "replace() argument 2 must be str, not %s", bad_arg_name(repl));
    int64_t count = given(argv[2]) ? arg_ssize(rt, argv[2]) : -1;
    if (count < 0) count = INT64_MAX;
    Text t = text_of(self);
    Str *o = old.u.s, *r = repl.u.s;
    charge(rt, t.n);
    if (count == 0) return self;
    StrBuf sb;
    if (o->len == 0) {
        /* insert `new` before every character and at the end, count times */
        sb_init(rt, &sb, t.n + r->len * 2);
        size_t i = 0;
        while (count > 0) {
            sb_put(&sb, r->data, r->len);
            count--;
            if (i == t.n) break;
            size_t at = i;
            text_cp(t, &i);
            sb_put(&sb, t.p + at, i - at);
            rt_step(rt, 1);
        }
        sb_put(&sb, t.p + i, t.n - i);
        return keep_kind(self, sb_to_value(&sb));
    }
    int64_t pos = find_bytes(rt, t.p, 0, t.n, o->data, o->len);
    if (pos < 0) return self;
    sb_init(rt, &sb, t.n);
    size_t i = 0;
    do {
        sb_put(&sb, t.p + i, (size_t)pos - i);
        sb_put(&sb, r->data, r->len);
        i = (size_t)pos + o->len;
        rt_step(rt, 1);
    } while (--count > 0 && (pos = find_bytes(rt, t.p, i, t.n, o->data, o->len)) >= 0);
    sb_put(&sb, t.p + i, t.n - i);
    return keep_kind(self, sb_to_value(&sb));
}

static bool iterable(Value v) {
    switch (v.type) {
    case VT_STR: case VT_LIST: case VT_TUPLE: case VT_DICT: case VT_UNDEFINED: case VT_OBJECT:
        return true;
    default:
        return false;
    }
}

static Value m_join(Rt *rt, Value self, const Value *argv, const Method *m) {
    if (!iterable(argv[0])) rt_throw(rt, CF_ERR_TYPE, "can only join an iterable");
    List *items = v_iterate(rt, argv[0]);
    bool markup = self.flags & VF_MARKUP;
    Str *sep = self.u.s;
    StrBuf sb;
    sb_init(rt, &sb, 64);
    for (size_t k = 0; k < items->len; k++) {
        Value item = items->items[k];
        if (markup) item = markup_escape(rt, item);
        if (item.type != VT_STR)
            rt_throw(rt, CF_ERR_TYPE, "sequence item %zu: expected str instance, %s found", k,
                     v_type_name(item));
        if (k > 0) sb_put(&sb, sep->data, sep->len);
        sb_put(&sb, item.u.s->data, item.u.s->len);
        charge(rt, item.u.s->len);
    }
    return keep_kind(self, sb_to_value(&sb));
}

enum { FORMAT, FORMAT_MAP };

/* The sandbox's format_map(mapping) is format(**mapping). */
static Value format_map(Rt *rt, Value self, const Args *args) {
    if (args->nkw > 0) rt_throw(rt, CF_ERR_TYPE, "format_map() takes no keyword arguments");
    if (args->npos != 1)
        rt_throw(rt, CF_ERR_TYPE, "format_map() takes exactly one argument (%d given)",
                 args->npos);
    Args fa = {0, NULL, 0, NULL, NULL};
    Value mapping = args->pos[0];
    if (mapping.type == VT_DICT) {
        Dict *d = mapping.u.dict;
        size_t n = dict_len(d), k = 0;
        Str **names = rt_alloc(rt, (n + 1) * sizeof *names);
        Value *vals = rt_alloc(rt, (n + 1) * sizeof *vals);
        for (size_t i = 0; i < n; i++) {
            Value key = dict_key_at(d, i);
            if (key.type != VT_STR) continue;  /* format fields only look up str keys */
            names[k] = key.u.s;
            vals[k++] = dict_val_at(d, i);
        }
        fa.nkw = (int)k;
        fa.kwnames = (Str *const *)names;
        fa.kwvals = vals;
    }
    return py_str_format(rt, self, &fa);
}

/* ======================================================================
 * The str method table
 * ====================================================================== */

#define NOARGS(name, fn, op) {name, sizeof name - 1, SIG_NOARGS, 0, 0, op, fn, NULL}
#define CLINIC(name, lo, hi, fn, op) {name, sizeof name - 1, SIG_CLINIC, lo, hi, op, fn, NULL}
#define TUPLE(name, lo, hi, fn, op) {name, sizeof name - 1, SIG_TUPLE, lo, hi, op, fn, NULL}
#define ONE(name, fn, op) {name, sizeof name - 1, SIG_ONE, 1, 1, op, fn, NULL}
#define KEYWORDS(name, hi, fn, op, kw) {name, sizeof name - 1, SIG_KEYWORDS, 0, hi, op, fn, kw}

static const Method str_methods[] = {
    /* those the filters call by number first (StrMethodId), then hot in
     * chat templates */
    [SM_STRIP] = CLINIC("strip", 0, 1, m_strip, STRIP_BOTH),
    [SM_SPLIT] = KEYWORDS("split", 2, m_split, 0, split_kw),
    [SM_RSPLIT] = KEYWORDS("rsplit", 2, m_split, 1, split_kw),
    [SM_SPLITLINES] = KEYWORDS("splitlines", 1, m_splitlines, 0, splitlines_kw),
    [SM_REPLACE] = CLINIC("replace", 2, 3, m_replace, 0),
    [SM_UPPER] = NOARGS("upper", m_case, CASE_UPPER),
    [SM_LOWER] = NOARGS("lower", m_case, CASE_LOWER),
    [SM_CAPITALIZE] = NOARGS("capitalize", m_case, CASE_CAPITALIZE),
    [SM_CENTER] = CLINIC("center", 1, 2, m_pad, PAD_CENTER),
    TUPLE("startswith", 1, 3, m_affix, 0),
    TUPLE("endswith", 1, 3, m_affix, 1),
    CLINIC("lstrip", 0, 1, m_strip, STRIP_LEFT),
    CLINIC("rstrip", 0, 1, m_strip, STRIP_RIGHT),
    NOARGS("title", m_case, CASE_TITLE),
    NOARGS("casefold", m_case, CASE_CASEFOLD),
    NOARGS("swapcase", m_case, CASE_SWAPCASE),
    TUPLE("find", 1, 3, m_find, FIND),
    TUPLE("rfind", 1, 3, m_find, RFIND),
    TUPLE("index", 1, 3, m_find, INDEX),
    TUPLE("rindex", 1, 3, m_find, RINDEX),
    TUPLE("count", 1, 3, m_find, COUNT),
    ONE("join", m_join, 0),
    ONE("partition", m_partition, 0),
    ONE("rpartition", m_partition, 1),
    ONE("removeprefix", m_affix_remove, 0),
    ONE("removesuffix", m_affix_remove, 1),
    CLINIC("ljust", 1, 2, m_pad, PAD_LJUST),
    CLINIC("rjust", 1, 2, m_pad, PAD_RJUST),
    ONE("zfill", m_zfill, 0),
    KEYWORDS("expandtabs", 1, m_expandtabs, 0, expandtabs_kw),
    NOARGS("isalnum", m_is, IS_ALNUM),
    NOARGS("isalpha", m_is, IS_ALPHA),
    NOARGS("isascii", m_is, IS_ASCII),
    NOARGS("isdecimal", m_is, IS_DECIMAL),
    NOARGS("isdigit", m_is, IS_DIGIT),
    NOARGS("isidentifier", m_is, IS_IDENTIFIER),
    NOARGS("islower", m_is, IS_LOWER),
    NOARGS("isnumeric", m_is, IS_NUMERIC),
    NOARGS("isprintable", m_is, IS_PRINTABLE),
    NOARGS("isspace", m_is, IS_SPACE),
    NOARGS("istitle", m_is, IS_TITLE),
    NOARGS("isupper", m_is, IS_UPPER),
    /* no fn: takes any arguments, handled in str_call before binding */
    {"format", 6, SIG_KEYWORDS, 0, 0, FORMAT, NULL, NULL},
    {"format_map", 10, SIG_KEYWORDS, 0, 0, FORMAT_MAP, NULL, NULL},
};

/* The str methods grouped by first letter (every name is lowercase ASCII):
 * a template that probes a key on each character of a string (`c['type']`
 * in Llama 3.2 Vision's loop over message contents) looks up a missing name
 * thousands of times a render, and the scan of all 44 took a third of it.
 * Written as data, so that no render builds it (the table keeps the order
 * StrMethodId needs; str_method_index_mismatches checks the two agree). */
enum { STR_METHOD_COUNT = sizeof str_methods / sizeof *str_methods };
_Static_assert(STR_METHOD_COUNT <= 255, "the index holds positions in bytes");
/* table positions, by first letter */
static const uint8_t str_index_order[STR_METHOD_COUNT] = {
    7, 8, 14, 20,                                        /* c: capitalize center casefold count */
    10, 29,                                              /* e: endswith expandtabs */
    16, 42, 43,                                          /* f: find format format_map */
    18, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41,  /* i: index isalnum ... isupper */
    21,                                                  /* j: join */
    6, 11, 26,                                           /* l: lower lstrip ljust */
    22,                                                  /* p: partition */
    2, 4, 12, 17, 19, 23, 24, 25, 27,                    /* r: rsplit replace rstrip rfind rindex
                                                            rpartition removeprefix removesuffix rjust */
    0, 1, 3, 9, 15,                                      /* s: strip split splitlines startswith swapcase */
    13,                                                  /* t: title */
    5,                                                   /* u: upper */
    28,                                                  /* z: zfill */
};
/* str_index_order[first[c], first[c + 1]): the names starting 'a' + c */
static const uint8_t str_index_first[27] = {0,  0,  0,  4,  4,  6,  9,  9,  9,  22, 23, 23, 26, 26,
                                            26, 26, 27, 27, 36, 41, 42, 43, 43, 43, 43, 43, 44};

size_t str_method_index_mismatches(void) {
    size_t bad = 0, k = 0;
    for (int c = 0; c < 26; c++) {
        bad += str_index_first[c] != k;
        for (size_t i = 0; i < STR_METHOD_COUNT; i++)
            if (str_methods[i].name[0] == 'a' + c) bad += k >= STR_METHOD_COUNT || str_index_order[k++] != i;
    }
    bad += str_index_first[26] != k || k != STR_METHOD_COUNT;
    for (size_t i = 0; i < STR_METHOD_COUNT; i++) bad += str_methods[i].len != strlen(str_methods[i].name);
    return bad;
}

const Method *str_method_find(const char *name, size_t n) {
    unsigned c = n ? (unsigned)(unsigned char)name[0] - 'a' : 26;
    if (c >= 26) return NULL;
    for (unsigned k = str_index_first[c]; k < str_index_first[c + 1]; k++) {
        const Method *m = &str_methods[str_index_order[k]];
        if (m->len == n && memcmp(m->name, name, n) == 0) return m;
    }
    return NULL;
}

Value str_method_invoke(Rt *rt, const Method *m, Value self, const Args *args) {
    if (m->fn == m_strip && !args->npos && !args->nkw && strip_ws_nothing(self.u.s, m->op)) {
        charge(rt, self.u.s->len);   /* content.strip() with nothing to strip: as m_strip */
        return self;
    }
    if (!m->fn)   /* py_str_format escapes fields itself when self is Markup */
        return m->op == FORMAT_MAP ? format_map(rt, self, args) : py_str_format(rt, self, args);
    Value buf[MAX_PARAMS];
    return m->fn(rt, self, arg_vector(rt, "str", m, args, buf), m);
}

Value str_method_call(Rt *rt, StrMethodId id, Value self, int npos, const Value *pos) {
    const Method *m = &str_methods[id];
    if (self.type != VT_STR)
        rt_throw(rt, CF_ERR_ATTRIBUTE, "'%s' object has no attribute '%s'", v_type_name(self), m->name);
    Args a = {npos, pos, 0, NULL, NULL};
    return str_method_invoke(rt, m, self, &a);
}

static bool str_call(Rt *rt, Value self, const char *name, size_t n, const Args *args,
                     Value *out) {
    const Method *m = str_method_find(name, n);
    if (!m) return false;
    *out = str_method_invoke(rt, m, self, args);
    return true;
}

/* ======================================================================
 * list / tuple
 * ====================================================================== */

static Value m_seq_index(Rt *rt, Value self, const Value *argv, const Method *m) {
    List *l = self.u.list;
    int64_t len = (int64_t)l->len;
    int64_t start = arg_slice_index(rt, argv[1], 0, false);
    int64_t stop = arg_slice_index(rt, argv[2], INT64_MAX, false);
    if (start < 0 && (start += len) < 0) start = 0;
    if (stop < 0 && (stop += len) < 0) stop = 0;
    for (int64_t i = start; i < stop && i < len; i++) {
        rt_step(rt, 1);
        if (v_equal(l->items[i], argv[0])) return v_int(i);
    }
    if (self.type == VT_TUPLE) rt_throw(rt, CF_ERR_VALUE, "tuple.index(x): x not in tuple");
    StrBuf sb;
    sb_init(rt, &sb, 32);
    v_write_repr(rt, &sb, argv[0]);
    Str *repr = sb_to_str(&sb);
    rt_throw(rt, CF_ERR_VALUE, "%s is not in list", repr->data);
}

static Value m_seq_count(Rt *rt, Value self, const Value *argv, const Method *m) {
    List *l = self.u.list;
    int64_t count = 0;
    rt_step(rt, 1 + l->len);
    for (size_t i = 0; i < l->len; i++) count += v_equal(l->items[i], argv[0]);
    return v_int(count);
}

static Value m_list_copy(Rt *rt, Value self, const Value *argv, const Method *m) {
    List *l = self.u.list, *copy = list_new(rt, l->len);
    rt_step(rt, 1 + l->len);
    for (size_t i = 0; i < l->len; i++) list_push(rt, copy, l->items[i]);
    return v_list_of(copy);
}

static const Method list_methods[] = {
    CLINIC("index", 1, 3, m_seq_index, 0),
    ONE("count", m_seq_count, 0),
    NOARGS("copy", m_list_copy, 0),
};
/* tuple has the same index/count and no copy */
static const size_t tuple_method_count = 2;

/* range.index takes the value alone */
static Value m_range_index(Rt *rt, Value self, const Value *argv, const Method *m) {
    List *l = self.u.list;
    for (size_t i = 0; i < l->len; i++) {
        rt_step(rt, 1);
        if (v_equal(l->items[i], argv[0])) return v_int((int64_t)i);
    }
    StrBuf sb;
    sb_init(rt, &sb, 32);
    v_write_repr(rt, &sb, argv[0]);
    rt_throw(rt, CF_ERR_VALUE, "%s is not in range", sb_to_str(&sb)->data);
}

static const Method range_methods[] = {
    ONE("index", m_range_index, 0),
    ONE("count", m_seq_count, 0),
};

/* ======================================================================
 * dict
 * ====================================================================== */

enum { VIEW_ITEMS, VIEW_KEYS, VIEW_VALUES, DICT_COPY };

static Value m_dict_get(Rt *rt, Value self, const Value *argv, const Method *m) {
    if (!v_hashable(argv[0]))
        rt_throw(rt, CF_ERR_TYPE, "unhashable type: '%s'", v_unhashable_type(argv[0]));
    Value found;
    if (dict_get(self.u.dict, argv[0], &found)) return found;
    return given(argv[1]) ? argv[1] : v_none();
}

static Value m_dict_view(Rt *rt, Value self, const Value *argv, const Method *m) {
    Dict *d = self.u.dict;
    size_t n = dict_len(d);
    rt_step(rt, 1 + n);
    if (m->op == DICT_COPY) {
        Dict *copy = dict_new(rt, n);
        dict_fill_copy(copy, d);
        return v_dict_of(copy);
    }
    List *out = list_new(rt, n);
    for (size_t i = 0; i < n; i++) {
        if (m->op == VIEW_ITEMS) {
            List *pair = list_new(rt, 2);
            list_push(rt, pair, dict_key_at(d, i));
            list_push(rt, pair, dict_val_at(d, i));
            list_push(rt, out, v_tuple_of(pair));
        } else {
            list_push(rt, out, m->op == VIEW_KEYS ? dict_key_at(d, i) : dict_val_at(d, i));
        }
    }
    Value v = v_list_of(out);
    v.flags = m->op == VIEW_ITEMS ? VF_VIEW_ITEMS : m->op == VIEW_KEYS ? VF_VIEW_KEYS
                                                                       : VF_VIEW_VALUES;
    return v;
}

static const Method dict_methods[] = {
    CLINIC("get", 1, 2, m_dict_get, 0),
    NOARGS("items", m_dict_view, VIEW_ITEMS),
    NOARGS("keys", m_dict_view, VIEW_KEYS),
    NOARGS("values", m_dict_view, VIEW_VALUES),
    NOARGS("copy", m_dict_view, DICT_COPY),
};

/* ======================================================================
 * float
 * ====================================================================== */

static Value m_is_integer(Rt *rt, Value self, const Value *argv, const Method *m) {
    return v_bool(isfinite(self.u.f) && floor(self.u.f) == self.u.f);
}

/* ---- numbers: the methods that return numbers (no bytes, no classmethods) ---- */

enum { NUM_BIT_LENGTH, NUM_BIT_COUNT, NUM_CONJUGATE, NUM_RATIO };

static Value ratio_tuple(Rt *rt, Value num, Value den) {
    List *l = list_new(rt, 2);
    list_push(rt, l, num);
    list_push(rt, l, den);
    return v_tuple_of(l);
}

static Value int_of(Value v) { return v.type == VT_BOOL ? v_int(v.u.b) : v; }

static Value m_int(Rt *rt, Value self, const Value *argv, const Method *m) {
    switch (m->op) {
    case NUM_BIT_LENGTH: return v_int((int64_t)bigint_bit_length(rt, self));
    case NUM_BIT_COUNT: return v_int((int64_t)bigint_bit_count(rt, self));
    case NUM_CONJUGATE: return int_of(self);
    default: return ratio_tuple(rt, int_of(self), v_int(1));   /* as_integer_ratio: (self, 1) */
    }
}

static Value pow2(Rt *rt, int k) {
    if (k < 63) return v_int(INT64_C(1) << k);
    Value out = v_int(0);
    bigint_arith(rt, OP_POW, v_int(2), v_int(k), &out);
    return out;
}

/* float.as_integer_ratio(): the exact fraction, lowest terms. */
static Value float_ratio(Rt *rt, double x) {
    if (isinf(x)) rt_throw(rt, CF_ERR_OVERFLOW, "cannot convert Infinity to integer ratio");
    if (isnan(x)) rt_throw(rt, CF_ERR_VALUE, "cannot convert NaN to integer ratio");
    if (x == 0) return ratio_tuple(rt, v_int(0), v_int(1));
    int e;
    double f = frexp(fabs(x), &e);   /* |x| = f * 2^e, 0.5 <= f < 1 */
    uint64_t mant = (uint64_t)ldexp(f, 53);
    e -= 53;
    while (mant && !(mant & 1)) mant >>= 1, e++;
    Value num = v_int((int64_t)mant), den = v_int(1);
    if (e > 0) bigint_arith(rt, OP_MUL, num, pow2(rt, e), &num);
    else if (e < 0) den = pow2(rt, -e);
    if (x < 0) num = bigint_neg(rt, num);
    return ratio_tuple(rt, num, den);
}

static Value m_float(Rt *rt, Value self, const Value *argv, const Method *m) {
    if (m->op == NUM_CONJUGATE) return self;
    return float_ratio(rt, self.u.f);
}

static const Method int_methods[] = {
    NOARGS("bit_length", m_int, NUM_BIT_LENGTH),
    NOARGS("bit_count", m_int, NUM_BIT_COUNT),
    NOARGS("conjugate", m_int, NUM_CONJUGATE),
    NOARGS("as_integer_ratio", m_int, NUM_RATIO),
};

static const Method float_methods[] = {
    NOARGS("is_integer", m_is_integer, 0),
    NOARGS("conjugate", m_float, NUM_CONJUGATE),
    NOARGS("as_integer_ratio", m_float, NUM_RATIO),
};

/* ======================================================================
 * Dispatch
 * ====================================================================== */

/* What the immutable sandbox refuses (jinja2.sandbox._mutable_spec). */
static const char *const list_mutators[] = {"append", "clear", "extend", "insert", "pop",
                                            "remove", "reverse", "sort", NULL};
static const char *const dict_mutators[] = {"clear", "pop", "popitem", "setdefault", "update",
                                            NULL};

static bool name_in(const char *const *names, const char *name, size_t n) {
    if (n == 0) return false;
    for (; *names; names++)   /* (the first byte rules out most) */
        if ((*names)[0] == name[0] && name_is(*names, name, n)) return true;
    return false;
}

bool method_is_unsafe(Value self, const char *name, size_t n) {
    if (v_is_list(self)) return name_in(list_mutators, name, n);
    if (self.type == VT_DICT) return name_in(dict_mutators, name, n);
    return false;
}

/* The method table for a receiver's type (NULL if none), with its owner name. */
static const Method *methods_of(Value self, size_t *count, const char **owner) {
    switch (self.type) {
    case VT_STR:
        *count = sizeof str_methods / sizeof *str_methods;
        *owner = "str";
        return str_methods;
    case VT_LIST:
        if (self.flags & VF_RANGE) {
            *count = sizeof range_methods / sizeof *range_methods;
            *owner = "range";
            return range_methods;
        }
        if (!v_is_list(self)) return NULL;  /* dict views and generators have none we support */
        *count = sizeof list_methods / sizeof *list_methods;
        *owner = "list";
        return list_methods;
    case VT_TUPLE:
        *count = tuple_method_count;
        *owner = "tuple";
        return list_methods;
    case VT_DICT:
        *count = sizeof dict_methods / sizeof *dict_methods;
        *owner = "dict";
        return dict_methods;
    case VT_INT: case VT_BOOL: case VT_BIGINT:
        *count = sizeof int_methods / sizeof *int_methods;
        *owner = "int";
        return int_methods;
    case VT_FLOAT:
        *count = sizeof float_methods / sizeof *float_methods;
        *owner = "float";
        return float_methods;
    default:
        return NULL;
    }
}

bool method_exists(Value self, const char *name, size_t n) {
    size_t count;
    const char *owner;
    const Method *table = methods_of(self, &count, &owner);
    if (table && (table == str_methods ? str_method_find(name, n) : find_method(table, count, name, n))) return true;
    return method_is_unsafe(self, name, n);
}

bool method_call(Rt *rt, Value self, const char *name, size_t n, const Args *args,
                 Value *out) {
    static const Args no_args = {0, NULL, 0, NULL, NULL};
    if (!args) args = &no_args;
    if (self.type == VT_STR) return str_call(rt, self, name, n, args, out);
    size_t count;
    const char *owner;
    const Method *table = methods_of(self, &count, &owner);
    const Method *m = table ? find_method(table, count, name, n) : NULL;
    if (!m) {
        if (method_is_unsafe(self, name, n))
            rt_throw(rt, CF_ERR_SECURITY, "access to attribute '%.*s' of '%s' object is unsafe.",
                     (int)n, name, v_type_name(self));
        return false;
    }
    Value buf[MAX_PARAMS];
    *out = m->fn(rt, self, arg_vector(rt, owner, m, args, buf), m);
    return true;
}
