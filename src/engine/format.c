/* format.c — Python's string formatting as Jinja2 templates reach it:
 * printf-style `fmt % args` (CPython's PyUnicode_Format), `str.format` via
 * the sandbox's string.Formatter (with the format-spec mini-language of
 * CPython's formatter_unicode.c), markupsafe's escape, and the int/float
 * conversions Python applies on the way (int(x), int(text, base),
 * float(text)). Widths, grouping, zero padding and error messages follow
 * CPython 3.11 exactly; floats are formatted with C's correctly rounded
 * printf, which agrees with CPython's dtoa for every finite value. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtins.h"
#include "unicode.h"

/* ------------------------------------------------------------------ */
/* Small shared pieces                                                  */
/* ------------------------------------------------------------------ */

/* A requested width or precision is checked before anything is padded, so
 * "%999999999999d" fails at once instead of filling memory first. */
static void check_width(Rt *rt, int64_t width) {
    if (width > 0 && (uint64_t)width > rt->lim.max_string) {
        rt_throw(rt, CF_ERR_LIMIT,
                 "string length limit of %zu bytes exceeded (raise it with --max-string / "
                 "cf_limits.max_string)",
                 rt->lim.max_string);
    }
}

static void put_fill(StrBuf *sb, uint32_t fill, int64_t count) {
    char enc[4];
    int n = utf8_encode(fill, enc);
    for (int64_t i = 0; i < count; i++) sb_put(sb, enc, (size_t)n);
}

static size_t nchars(const char *s, size_t n) { return utf8_count(s, n); }

static bool is_intlike(Value v) {
    return v.type == VT_INT || v.type == VT_BOOL || v.type == VT_BIGINT;
}

/* Python str(v) as a NUL-terminated buffer (the Value's own bytes for str). */
static Str *str_of(Rt *rt, Value v) {
    if (v.type == VT_STR) return v.u.s;
    StrBuf sb;
    sb_init(rt, &sb, 32);
    v_write_str(rt, &sb, v);
    return sb_to_str(&sb);
}

static Str *repr_of(Rt *rt, Value v) {
    StrBuf sb;
    sb_init(rt, &sb, 32);
    v_write_repr(rt, &sb, v);
    return sb_to_str(&sb);
}

/* Python ascii(v): repr with every non-ASCII code point escaped. */
static void put_ascii_escaped(StrBuf *sb, const char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        if ((unsigned char)s[i] < 0x80) {
            sb_putc(sb, s[i++]);
            continue;
        }
        uint32_t cp = utf8_next(s, n, &i);
        if (cp < 0x100) sb_printf(sb, "\\x%02x", cp);
        else if (cp < 0x10000) sb_printf(sb, "\\u%04x", cp);
        else sb_printf(sb, "\\U%08x", cp);
    }
}

/* markupsafe's escaping of & < > ' " */
static void put_escaped(StrBuf *sb, const char *s, size_t n) {
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        const char *rep;
        switch (s[i]) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '\'': rep = "&#39;"; break;
        case '"': rep = "&#34;"; break;
        default: continue;
        }
        sb_put(sb, s + run, i - run);
        sb_puts(sb, rep);
        run = i + 1;
    }
    sb_put(sb, s + run, n - run);
}

Value markup_escape(Rt *rt, Value v) {
    if (v.type == VT_STR && (v.flags & VF_MARKUP)) return v;
    Str *s = str_of(rt, v);
    StrBuf sb;
    sb_init(rt, &sb, s->len + 16);
    rt_step(rt, s->len / 1024 + 1);
    put_escaped(&sb, s->data, s->len);
    return v_markup(sb_to_value(&sb));
}

/* ------------------------------------------------------------------ */
/* Unbounded integers: just enough arithmetic for base conversions.    */
/* Magnitudes in little-endian base-2^32 limbs.                        */
/* ------------------------------------------------------------------ */

typedef struct Big { uint32_t *limb; size_t n, cap; } Big;

static void big_init(Rt *rt, Big *b, size_t cap) {
    b->cap = cap ? cap : 1;
    b->limb = rt_alloc(rt, b->cap * sizeof(uint32_t));
    b->n = 0;
}

/* b = b * mul + add */
static void big_mul_add(Rt *rt, Big *b, uint32_t mul, uint32_t add) {
    uint64_t carry = add;
    for (size_t i = 0; i < b->n; i++) {
        uint64_t t = (uint64_t)b->limb[i] * mul + carry;
        b->limb[i] = (uint32_t)t;
        carry = t >> 32;
    }
    if (carry) {
        if (b->n == b->cap) {
            b->limb = rt_realloc(rt, b->limb, b->cap * sizeof(uint32_t), b->cap * 2 * sizeof(uint32_t));
            b->cap *= 2;
        }
        b->limb[b->n++] = (uint32_t)carry;
    }
}

/* b = b / d, returns the remainder */
static uint32_t big_div_small(Big *b, uint32_t d) {
    uint64_t rem = 0;
    for (size_t i = b->n; i-- > 0;) {
        uint64_t cur = (rem << 32) | b->limb[i];
        b->limb[i] = (uint32_t)(cur / d);
        rem = cur % d;
    }
    while (b->n && !b->limb[b->n - 1]) b->n--;
    return (uint32_t)rem;
}

static void big_from_decimal(Rt *rt, Big *b, const char *d, size_t n) {
    big_init(rt, b, n / 9 + 2);
    size_t i = 0;
    while (i < n) {
        uint32_t chunk = 0, mul = 1;
        for (int k = 0; k < 9 && i < n; k++, i++) {
            chunk = chunk * 10 + (uint32_t)(d[i] - '0');
            mul *= 10;
        }
        big_mul_add(rt, b, mul, chunk);
        rt_step(rt, b->n / 256 + 1);
    }
}

/* Decimal digits of b (consumed), most significant first, no sign. */
static Str *big_to_decimal(Rt *rt, Big *b) {
    size_t nchunks = 0, cap = b->n * 10 / 9 + 2;
    uint32_t *chunks = rt_alloc(rt, cap * sizeof(uint32_t));
    while (b->n) {
        chunks[nchunks++] = big_div_small(b, 1000000000u);
        rt_step(rt, b->n / 256 + 1);
    }
    StrBuf sb;
    sb_init(rt, &sb, nchunks * 9 + 1);
    if (!nchunks) sb_putc(&sb, '0');
    for (size_t i = nchunks; i-- > 0;) {
        if (i == nchunks - 1) sb_printf(&sb, "%u", chunks[i]);
        else sb_printf(&sb, "%09u", chunks[i]);
    }
    return sb_to_str(&sb);
}

/* Digits of b in base 2, 8 or 16 (bits per digit 1, 3, 4). */
static void big_put_pow2(StrBuf *sb, const Big *b, int bits, bool upper) {
    const char *digs = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    if (!b->n) {
        sb_putc(sb, '0');
        return;
    }
    size_t total = b->n * 32;
    while (total > 1 && !((b->limb[(total - 1) / 32] >> ((total - 1) % 32)) & 1)) total--;
    size_t ndig = (total + (size_t)bits - 1) / (size_t)bits;
    for (size_t k = ndig; k-- > 0;) {
        unsigned d = 0;
        for (int j = bits - 1; j >= 0; j--) {
            size_t bit = k * (size_t)bits + (size_t)j;
            unsigned v = bit < b->n * 32 ? (b->limb[bit / 32] >> (bit % 32)) & 1 : 0;
            d = (d << 1) | v;
        }
        sb_putc(sb, digs[d]);
    }
}

/* Make a Python int Value from a magnitude and sign. */
static Value int_value(Rt *rt, Big *b, bool neg) {
    if (b->n <= 2) {
        uint64_t m = b->n ? b->limb[0] : 0;
        if (b->n == 2) m |= (uint64_t)b->limb[1] << 32;
        if (m <= (uint64_t)INT64_MAX) return v_int(neg ? -(int64_t)m : (int64_t)m);
    }
    Str *d = big_to_decimal(rt, b);
    StrBuf sb;
    sb_init(rt, &sb, d->len + 2);
    if (neg) sb_putc(&sb, '-');
    sb_put(&sb, d->data, d->len);
    Str *s = sb_to_str(&sb);
    return v_bigint(rt, s->data, s->len);
}

Value py_int_from_float(Rt *rt, double d) {
    if (isinf(d)) rt_throw(rt, CF_ERR_OVERFLOW, "cannot convert float infinity to integer");
    if (isnan(d)) rt_throw(rt, CF_ERR_VALUE, "cannot convert float NaN to integer");
    d = trunc(d);
    if (d > -9.2e18 && d < 9.2e18) return v_int((int64_t)d);
    int exp;
    double frac = frexp(fabs(d), &exp);          /* |d| = frac * 2^exp, 0.5 <= frac < 1 */
    uint64_t mant = (uint64_t)ldexp(frac, 53);    /* exact: 53 significant bits */
    exp -= 53;                                    /* |d| = mant * 2^exp, exp > 0 here */
    Big b;
    big_init(rt, &b, (size_t)exp / 32 + 4);
    size_t word = (size_t)exp / 32, shift = (size_t)exp % 32;
    for (size_t i = 0; i < word + 3; i++) b.limb[i] = 0;
    /* place the 53-bit mantissa at bit `exp` */
    for (int bit = 0; bit < 53; bit++) {
        if ((mant >> bit) & 1) {
            size_t pos = (size_t)bit + shift;
            b.limb[word + pos / 32] |= 1u << (pos % 32);
        }
    }
    b.n = word + 3;
    while (b.n && !b.limb[b.n - 1]) b.n--;
    return int_value(rt, &b, d < 0);
}

/* Value of a Unicode decimal digit: Nd characters come in runs of whole
 * 0..9 sets, so count from the start of the run. */
static int unicode_decimal_value(uint32_t cp) {
    uint32_t start = cp;
    while (start > 0 && uc_isdecimal(start - 1) && cp - start < 100) start--;
    return (int)((cp - start) % 10);
}

/* Python's int()/float() read any Unicode decimal digit as its ASCII digit
 * and any Unicode space as a space (_PyUnicode_TransformDecimalAndSpaceToASCII). */
static void ascii_digits(Rt *rt, const char **s, size_t *n) {
    bool ascii = true;
    for (size_t i = 0; i < *n && ascii; i++) ascii = (unsigned char)(*s)[i] < 0x80;
    if (ascii) return;
    StrBuf sb;
    sb_init(rt, &sb, *n);
    for (size_t i = 0; i < *n;) {
        size_t k = i;
        uint32_t cp = utf8_next(*s, *n, &k);
        if (cp >= 0x80 && uc_isdecimal(cp)) sb_putc(&sb, (char)('0' + unicode_decimal_value(cp)));
        else if (cp >= 0x80 && uc_isspace(cp)) sb_putc(&sb, ' ');
        else sb_put(&sb, *s + i, k - i);
        i = k;
    }
    *s = sb.p;
    *n = sb.len;
}

static int digit_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'z') return c - 'a' + 10;
    if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
    return 99;
}

/* Bounds of s without Python's surrounding whitespace. */
static void strip_ws(const char *s, size_t n, size_t *lo, size_t *hi) {
    size_t a = 0, b = n;
    while (a < b) {
        size_t j = a;
        uint32_t cp = utf8_next(s, b, &j);
        if (!uc_isspace(cp)) break;
        a = j;
    }
    while (b > a) {
        size_t j = utf8_prev(s, b), k = j;
        uint32_t cp = utf8_next(s, b, &k);
        if (!uc_isspace(cp)) break;
        b = j;
    }
    *lo = a;
    *hi = b;
}

bool py_parse_int(Rt *rt, const char *s, size_t n, int base, Value *out) {
    if (base != 0 && (base < 2 || base > 36)) return false;
    ascii_digits(rt, &s, &n);
    size_t i, end;
    strip_ws(s, n, &i, &end);
    bool neg = false;
    if (i < end && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    /* prefixes: 0x / 0o / 0b, required for base 0 to pick the base */
    bool prefixed = false;
    if (end - i >= 2 && s[i] == '0') {
        char p = (char)(s[i + 1] | 0x20);
        int pb = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 0;
        if (pb && (base == 0 || base == pb)) {
            base = pb;
            i += 2;
            prefixed = true;
        }
    }
    bool base0_decimal = base == 0;
    if (base == 0) base = 10;
    if ((base & (base - 1)) != 0 && end - i > INT_MAX_STR_DIGITS) {   /* before the quadratic work */
        size_t count = 0;
        for (size_t j = i; j < end; j++) count += s[j] != '_';
        if (count > INT_MAX_STR_DIGITS) return false;
    }
    /* digits with single underscores between them (and after a prefix) */
    Big b;
    big_init(rt, &b, (end - i) / 8 + 2);
    size_t ndigits = 0;
    bool prev_us = !prefixed, all_zero = true;  /* '_' may follow a prefix only */
    if (i >= end) return false;
    for (; i < end; i++) {
        if (s[i] == '_') {
            if (prev_us) return false;
            prev_us = true;
            continue;
        }
        int d = digit_value(s[i]);
        if (d >= base) return false;
        if (d) all_zero = false;
        big_mul_add(rt, &b, (uint32_t)base, (uint32_t)d);
        ndigits++;
        prev_us = false;
        if ((ndigits & 1023) == 0) rt_step(rt, b.n / 64 + 1);
    }
    if (prev_us || ndigits == 0) return false;
    /* base 0 forbids leading zeros in decimal ("010") */
    if (base0_decimal && !prefixed && !all_zero) {
        size_t lo, hi;
        strip_ws(s, n, &lo, &hi);
        if (lo < hi && (s[lo] == '+' || s[lo] == '-')) lo++;
        if (s[lo] == '0') return false;
    }
    if ((base & (base - 1)) != 0 && ndigits > INT_MAX_STR_DIGITS) return false;
    *out = int_value(rt, &b, neg);
    return true;
}

/* Accept [sign] (digits [. [digits]] | . digits) [(e|E) [sign] digits] with
 * PEP 515 underscores between digits, or inf/infinity/nan. */
static bool ascii_ieq(const char *a, const char *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if ((a[i] | 0x20) != b[i]) return false;
    return true;
}

bool py_parse_float(Rt *rt, const char *s, size_t n, double *out) {
    ascii_digits(rt, &s, &n);
    size_t i, end;
    strip_ws(s, n, &i, &end);
    if (i >= end) return false;
    char *tmp = rt_alloc(rt, end - i + 1);
    size_t t = 0;
    const char *p = s + i, *e = s + end;
    bool ok = true;
    if (p < e && (*p == '+' || *p == '-')) tmp[t++] = *p++;
    size_t rest = (size_t)(e - p);
    static const char *const words[] = {"inf", "infinity", "nan"};
    bool word = false;
    for (int w = 0; w < 3; w++) {
        if (rest == strlen(words[w]) && ascii_ieq(p, words[w], rest)) word = true;
    }
    if (word) {
        memcpy(tmp + t, p, rest);
        t += rest;
    } else {
        /* part: 0 = integer digits, 1 = fraction, 2 = exponent */
        int part = 0;
        size_t digits_in_part = 0, mantissa_digits = 0;
        char prev = 0;
        for (; p < e && ok; p++) {
            char c = *p;
            if (c >= '0' && c <= '9') {
                digits_in_part++;
                if (part < 2) mantissa_digits++;
                tmp[t++] = c;
            } else if (c == '_') {
                if (!(prev >= '0' && prev <= '9') || p + 1 >= e || !(p[1] >= '0' && p[1] <= '9')) ok = false;
            } else if (c == '.' && part == 0) {
                part = 1;
                digits_in_part = 0;
                tmp[t++] = c;
            } else if ((c == 'e' || c == 'E') && part < 2 && mantissa_digits) {
                part = 2;
                digits_in_part = 0;
                tmp[t++] = c;
                if (p + 1 < e && (p[1] == '+' || p[1] == '-')) tmp[t++] = *++p;
            } else {
                ok = false;
            }
            prev = c;
        }
        if (!mantissa_digits || (part == 2 && !digits_in_part)) ok = false;
    }
    tmp[t] = 0;
    if (ok) {
        char *endp;
        *out = strtod(tmp, &endp);
        ok = *endp == 0;
    }
    return ok;
}

/* ------------------------------------------------------------------ */
/* Numbers to text                                                      */
/* ------------------------------------------------------------------ */

/* Digits of the magnitude of an int-like Value in `base`; returns whether
 * it is negative. */
static bool put_int_digits(Rt *rt, StrBuf *sb, Value v, int base, bool upper) {
    if (v.type == VT_BIGINT) {
        const char *d = v.u.s->data;
        size_t n = v.u.s->len;
        bool neg = n && d[0] == '-';
        if (neg) d++, n--;
        if (base == 10) {
            sb_put(sb, d, n);
        } else {
            Big b;
            big_from_decimal(rt, &b, d, n);
            big_put_pow2(sb, &b, base == 2 ? 1 : base == 8 ? 3 : 4, upper);
        }
        return neg;
    }
    int64_t i = v.type == VT_BOOL ? (int64_t)v.u.b : v.u.i;
    uint64_t m = i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i;
    char tmp[72];
    size_t k = sizeof tmp;
    const char *digs = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    do {
        tmp[--k] = digs[m % (uint64_t)base];
        m /= (uint64_t)base;
    } while (m);
    sb_put(sb, tmp + k, sizeof tmp - k);
    return i < 0;
}

/* float(v) for numbers; false for other types (caller raises). */
static bool number_as_double(Rt *rt, Value v, double *out) {
    switch (v.type) {
    case VT_FLOAT: *out = v.u.f; return true;
    case VT_INT: *out = (double)v.u.i; return true;
    case VT_BOOL: *out = v.u.b; return true;
    case VT_BIGINT:
        *out = strtod(v.u.s->data, NULL);
        if (isinf(*out)) rt_throw(rt, CF_ERR_OVERFLOW, "int too large to convert to float");
        return true;
    default: return false;
    }
}

/* C printf of a float in Python's spelling: nan never signed, inf/nan
 * upper-cased with the upper-case types. type is e E f F g G. */
static void put_float(Rt *rt, StrBuf *sb, double d, char type, int64_t prec, bool alt) {
    bool upper = type == 'E' || type == 'F' || type == 'G';
    if (isnan(d)) {
        sb_puts(sb, upper ? "NAN" : "nan");
        return;
    }
    if (isinf(d)) {
        sb_puts(sb, d < 0 ? (upper ? "-INF" : "-inf") : (upper ? "INF" : "inf"));
        return;
    }
    check_width(rt, prec);
    size_t cap = (size_t)prec + 400;
    char *buf = rt_alloc(rt, cap);
    char fmt[8] = "%";
    size_t k = 1;
    if (alt) fmt[k++] = '#';
    fmt[k++] = '.';
    fmt[k++] = '*';
    fmt[k++] = type;
    fmt[k] = 0;
    int len = snprintf(buf, cap, fmt, (int)prec, d);
    sb_put(sb, buf, (size_t)len);
}

/* Drop trailing zeros (and a bare '.') of the mantissa in buf[0..*n). */
static void strip_fraction_zeros(char *buf, size_t *n) {
    if (!memchr(buf, '.', *n)) return;
    while (*n && buf[*n - 1] == '0') (*n)--;
    if (*n && buf[*n - 1] == '.') (*n)--;
}

/* format(x, '.Np') with no presentation type: 'g' whose switch to exponent
 * notation comes one digit early, and ".0" added to integral results
 * (CPython's Py_DTSF_ADD_DOT_0), so format(1.5, '.1') == '2e+00'. */
static void put_float_general_dot0(Rt *rt, StrBuf *sb, double d, int64_t prec, bool alt) {
    if (!isfinite(d)) {
        put_float(rt, sb, d, 'g', prec, alt);
        return;
    }
    if (prec == 0) prec = 1;
    check_width(rt, prec);
    size_t cap = (size_t)prec + 400;
    char *buf = rt_alloc(rt, cap);
    int len = snprintf(buf, cap, alt ? "%#.*e" : "%.*e", (int)(prec - 1), d);
    int exp10 = atoi(strchr(buf, 'e') + 1);
    if (exp10 < -4 || exp10 >= prec - 1) {
        char *e = strchr(buf, 'e');
        size_t mlen = (size_t)(e - buf);
        if (!alt) strip_fraction_zeros(buf, &mlen);
        sb_put(sb, buf, mlen);
        sb_put(sb, e, (size_t)(buf + len - e));
        return;
    }
    len = snprintf(buf, cap, alt ? "%#.*f" : "%.*f", (int)(prec - 1 - exp10), d);
    size_t n = (size_t)len;
    if (!alt) strip_fraction_zeros(buf, &n);
    sb_put(sb, buf, n);
    if (!memchr(buf, '.', n)) sb_puts(sb, ".0");
}

/* ------------------------------------------------------------------ */
/* printf-style formatting: fmt % args                                   */
/* ------------------------------------------------------------------ */

enum { F_LJUST = 1, F_SIGN = 2, F_BLANK = 4, F_ALT = 8, F_ZERO = 16 };

typedef struct PctArgs {
    Value args;        /* the right operand */
    const Value *items;
    int64_t len, idx;  /* tuple: items/len/idx; else len = -1, idx -2/-1 */
    bool is_dict;      /* mapping right operand: %(key)s allowed, no leftover check */
    bool escape;       /* Markup left operand: escape every argument */
} PctArgs;

static Value pct_next(Rt *rt, PctArgs *a) {
    if (a->len < 0) {
        if (a->idx == -2) {
            a->idx = -1;
            return a->args;
        }
    } else if (a->idx < a->len) {
        return a->items[a->idx++];
    }
    rt_throw(rt, CF_ERR_TYPE, "not enough arguments for format string");
}

/* The text a conversion produces before width/sign handling. */
static void pct_convert(Rt *rt, StrBuf *sb, const PctArgs *a, Value v, char ch, int flags,
                        int64_t prec) {
    switch (ch) {
    case 's': case 'r': case 'a': {
        Str *s;
        if (ch == 's') {
            if (a->escape && !(v.type == VT_STR && (v.flags & VF_MARKUP))) {
                s = str_of(rt, v);
                put_escaped(sb, s->data, s->len);
                return;
            }
            s = str_of(rt, v);
            sb_put(sb, s->data, s->len);
            return;
        }
        s = repr_of(rt, v);
        if (a->escape) {
            StrBuf e;
            sb_init(rt, &e, s->len + 8);
            put_escaped(&e, s->data, s->len);
            s = sb_to_str(&e);
        }
        if (ch == 'a') put_ascii_escaped(sb, s->data, s->len);
        else sb_put(sb, s->data, s->len);
        return;
    }
    case 'd': case 'i': case 'u': case 'o': case 'x': case 'X': {
        bool decimal = ch == 'd' || ch == 'i' || ch == 'u';
        if (v.type == VT_UNDEFINED && decimal) v_undefined_fail(rt, v);
        if (v.type == VT_FLOAT && decimal) v = py_int_from_float(rt, v.u.f);
        if (!is_intlike(v) || (a->escape && !decimal)) {
            const char *tn = a->escape ? "_MarkupEscapeHelper" : v_type_name(v);
            if (decimal)
                rt_throw(rt, CF_ERR_TYPE, "%%%c format: a real number is required, not %s", ch, tn);
            rt_throw(rt, CF_ERR_TYPE, "%%%c format: an integer is required, not %s", ch, tn);
        }
        int base = decimal ? 10 : ch == 'o' ? 8 : 16;
        StrBuf digits;
        sb_init(rt, &digits, 24);
        bool neg = put_int_digits(rt, &digits, v, base, ch == 'X');
        if (neg) sb_putc(sb, '-');
        if ((flags & F_ALT) && !decimal) {
            sb_putc(sb, '0');
            sb_putc(sb, ch == 'o' ? 'o' : ch);
        }
        check_width(rt, prec);
        for (int64_t k = (int64_t)digits.len; k < prec; k++) sb_putc(sb, '0');
        sb_put(sb, digits.p, digits.len);
        return;
    }
    case 'e': case 'E': case 'f': case 'F': case 'g': case 'G': {
        double d;
        if (v.type == VT_UNDEFINED) v_undefined_fail(rt, v);
        if (!number_as_double(rt, v, &d))
            rt_throw(rt, CF_ERR_TYPE, "must be real number, not %s", v_type_name(v));
        put_float(rt, sb, d, ch, prec < 0 ? 6 : prec, flags & F_ALT);
        return;
    }
    case 'c': {
        if (!a->escape && v.type == VT_STR && str_nchars(v.u.s) == 1) {
            sb_put(sb, v.u.s->data, v.u.s->len);
            return;
        }
        if (a->escape || !is_intlike(v)) rt_throw(rt, CF_ERR_TYPE, "%%c requires int or char");
        int64_t c = v.type == VT_BOOL ? v.u.b : v.type == VT_INT ? v.u.i : -1;
        if (c < 0 || c > 0x10FFFF) rt_throw(rt, CF_ERR_OVERFLOW, "%%c arg not in range(0x110000)");
        sb_put_cp(sb, (uint32_t)c);
        return;
    }
    default: break;
    }
}

/* CPython's unicode_format_arg_output: sign, "0x" prefix and padding. */
static void pct_output(Rt *rt, StrBuf *out, const char *s, size_t n, char ch, int flags,
                       int64_t width, int64_t prec) {
    bool numeric = strchr("diuoxXeEfFgG", ch) != NULL;
    int64_t len = (int64_t)nchars(s, n);
    if ((width < 0 || width <= len) && (prec < 0 || prec >= len) && !(flags & (F_SIGN | F_BLANK))) {
        sb_put(out, s, n);
        return;
    }
    if ((ch == 's' || ch == 'r' || ch == 'a') && prec >= 0 && len > prec) {
        n = utf8_offset(s, n, (size_t)prec);
        len = prec;
    }
    size_t p = 0;  /* byte index of the next char of s to copy */
    char signchar = 0;
    if (numeric) {
        if (s[0] == '-' || s[0] == '+') {
            signchar = s[0];
            len--;
            p++;
        } else if (flags & F_SIGN) {
            signchar = '+';
        } else if (flags & F_BLANK) {
            signchar = ' ';
        }
    }
    if (width < len) width = len;
    check_width(rt, width);
    char fill = numeric && (flags & F_ZERO) && !(flags & F_LJUST) ? '0' : ' ';
    bool prefix = (flags & F_ALT) && (ch == 'x' || ch == 'X' || ch == 'o');
    if (signchar) {
        if (fill != ' ') sb_putc(out, signchar);
        if (width > len) width--;
    }
    if (prefix) {
        if (fill != ' ') {
            sb_put(out, s + p, 2);
            p += 2;
        }
        width -= 2;
        if (width < 0) width = 0;
        len -= 2;
    }
    if (width > len && !(flags & F_LJUST)) {
        put_fill(out, (uint32_t)fill, width - len);
        width = len;
    }
    if (fill == ' ') {
        if (signchar) sb_putc(out, signchar);
        if (prefix) {
            sb_put(out, s + p, 2);
            p += 2;
        }
    }
    sb_put(out, s + p, n - p);
    if (width > len) put_fill(out, ' ', width - len);
}

/* A run of decimal digits in the format (width or precision). */
static int64_t pct_number(Rt *rt, const char *f, size_t n, size_t *i, const char *what) {
    int64_t v = 0;
    while (*i < n && f[*i] >= '0' && f[*i] <= '9') {
        if (v > (INT64_MAX - 9) / 10) rt_throw(rt, CF_ERR_VALUE, "%s too big", what);
        v = v * 10 + (f[(*i)++] - '0');
    }
    return v;
}

static int64_t pct_star(Rt *rt, PctArgs *a) {
    Value v = pct_next(rt, a);
    if (v.type == VT_BOOL) return v.u.b;
    if (v.type != VT_INT) rt_throw(rt, CF_ERR_TYPE, "* wants int");
    return v.u.i;
}

Value py_percent_format(Rt *rt, Value fmt, Value args) {
    Str *fs = str_of(rt, fmt);
    const char *f = fs->data;
    size_t n = fs->len;
    PctArgs a = {.args = args, .len = -1, .idx = -2};
    a.escape = fmt.type == VT_STR && (fmt.flags & VF_MARKUP);
    if (args.type == VT_TUPLE) {
        a.items = args.u.list->items;
        a.len = (int64_t)args.u.list->len;
        a.idx = 0;
    }
    /* PyMapping_Check: anything subscriptable but a tuple or str */
    a.is_dict = args.type == VT_DICT || args.type == VT_LIST || args.type == VT_UNDEFINED;

    StrBuf out, conv;
    sb_init(rt, &out, n + 16);
    size_t i = 0, cpindex = 0;  /* cpindex: code point index of f[i], for messages */
    rt_step(rt, n / 1024 + 1);
    while (i < n) {
        if (f[i] != '%') {
            size_t j = i;
            while (j < n && f[j] != '%') j++;
            sb_put(&out, f + i, j - i);
            cpindex += nchars(f + i, j - i);
            i = j;
            continue;
        }
        i++;
        cpindex++;
        if (i < n && f[i] == '%') {
            sb_putc(&out, '%');
            i++;
            cpindex++;
            continue;
        }
        rt_step(rt, 1);
        size_t start = i;
        if (i < n && f[i] == '(') {
            if (!a.is_dict) rt_throw(rt, CF_ERR_TYPE, "format requires a mapping");
            int depth = 1;
            size_t ks = ++i;
            while (i < n && depth > 0) {
                if (f[i] == ')') depth--;
                else if (f[i] == '(') depth++;
                i++;
            }
            if (depth > 0) rt_throw(rt, CF_ERR_VALUE, "incomplete format key");
            Value key = v_str(rt, f + ks, i - 1 - ks);
            Value got;
            if (args.type == VT_DICT) {
                if (!dict_get(args.u.dict, key, &got)) {
                    StrBuf m;
                    sb_init(rt, &m, 32);
                    v_write_repr(rt, &m, key);
                    rt_throw(rt, CF_ERR_KEY, "%s", sb_to_str(&m)->data);
                }
            } else if (args.type == VT_LIST) {
                rt_throw(rt, CF_ERR_TYPE, "list indices must be integers or slices, not str");
            } else {
                v_undefined_fail(rt, args);
            }
            /* as CPython: the looked-up value becomes the single argument
             * and stays consumed ("%(a)s %s" % d runs out of arguments) */
            a.args = got;
            a.len = -1;
            a.idx = -2;
        }
        int flags = 0;
        for (; i < n; i++) {
            char c = f[i];
            if (c == '-') flags |= F_LJUST;
            else if (c == '+') flags |= F_SIGN;
            else if (c == ' ') flags |= F_BLANK;
            else if (c == '#') flags |= F_ALT;
            else if (c == '0') flags |= F_ZERO;
            else break;
        }
        int64_t width = -1, prec = -1;
        if (i < n && f[i] == '*') {
            width = pct_star(rt, &a);
            if (width < 0) {
                flags |= F_LJUST;
                width = -width;
            }
            i++;
        } else if (i < n && f[i] >= '0' && f[i] <= '9') {
            width = pct_number(rt, f, n, &i, "width");
        }
        if (i < n && f[i] == '.') {
            prec = 0;
            i++;
            if (i < n && f[i] == '*') {
                prec = pct_star(rt, &a);
                i++;
            } else {
                prec = pct_number(rt, f, n, &i, "precision");
            }
        }
        if (i < n && (f[i] == 'h' || f[i] == 'l' || f[i] == 'L')) i++;
        if (i >= n) rt_throw(rt, CF_ERR_VALUE, "incomplete format");
        cpindex += nchars(f + start, i - start);
        uint32_t ch = utf8_next(f, n, &i);
        cpindex++;
        Value v = pct_next(rt, &a);
        if (!strchr("sraiduoxXeEfFgGc", (int)ch) || ch == 0) {
            rt_throw(rt, CF_ERR_VALUE, "unsupported format character '%c' (0x%x) at index %zu",
                     ch >= 32 && ch <= 126 ? (char)ch : '?', ch, cpindex - 1);
        }
        if (prec > 0) check_width(rt, prec);
        sb_init(rt, &conv, 16);
        pct_convert(rt, &conv, &a, v, (char)ch, flags, prec);
        pct_output(rt, &out, conv.p, conv.len, (char)ch, flags, width, prec);
    }
    if (a.idx < a.len && !a.is_dict)
        rt_throw(rt, CF_ERR_TYPE, "not all arguments converted during string formatting");
    Value r = sb_to_value(&out);
    if (a.escape) r = v_markup(r);
    return r;
}

/* ------------------------------------------------------------------ */
/* The format-spec mini-language: format(value, spec)                   */
/* ------------------------------------------------------------------ */

typedef struct Spec {
    uint32_t fill;
    char align;        /* < > ^ = */
    char sign;         /* 0 + - space */
    bool no_neg_0;     /* z */
    bool alt;          /* # */
    char grouping;     /* 0 , _ */
    int64_t width, prec;  /* -1 = not given */
    uint32_t type;     /* 0 = none */
} Spec;

static bool is_align(uint32_t c) { return c == '<' || c == '>' || c == '^' || c == '='; }

static int64_t spec_integer(Rt *rt, const uint32_t *cp, size_t n, size_t *i, size_t *consumed) {
    int64_t v = 0;
    size_t start = *i;
    while (*i < n && cp[*i] >= '0' && cp[*i] <= '9') {
        if (v > (INT64_MAX - 9) / 10) rt_throw(rt, CF_ERR_VALUE, "Too many decimal digits in format string");
        v = v * 10 + (cp[(*i)++] - '0');
    }
    *consumed = *i - start;
    return v;
}

static void put_cp_repr(StrBuf *sb, uint32_t c) {
    if (c >= 32 && c < 127) sb_putc(sb, (char)c);
    else sb_printf(sb, "\\x%02x", c);
}

/* CPython's parse_internal_render_format_spec. */
static void spec_parse(Rt *rt, Str *spec, Value obj, char default_align, uint32_t default_type,
                       Spec *sp) {
    memset(sp, 0, sizeof *sp);
    sp->fill = ' ';
    sp->align = default_align;
    sp->width = sp->prec = -1;
    sp->type = default_type;
    size_t n = str_nchars(spec);
    uint32_t *cp = rt_alloc(rt, (n + 1) * sizeof(uint32_t));
    for (size_t i = 0, k = 0; i < spec->len; k++) cp[k] = utf8_next(spec->data, spec->len, &i);
    size_t i = 0;
    bool fill_given = false, align_given = false;
    if (n - i >= 2 && is_align(cp[i + 1])) {
        sp->align = (char)cp[i + 1];
        sp->fill = cp[i];
        fill_given = align_given = true;
        i += 2;
    } else if (n - i >= 1 && is_align(cp[i])) {
        sp->align = (char)cp[i];
        align_given = true;
        i++;
    }
    if (i < n && (cp[i] == '+' || cp[i] == '-' || cp[i] == ' ')) sp->sign = (char)cp[i++];
    if (i < n && cp[i] == 'z') {
        sp->no_neg_0 = true;
        i++;
    }
    if (i < n && cp[i] == '#') {
        sp->alt = true;
        i++;
    }
    if (!fill_given && i < n && cp[i] == '0') {
        sp->fill = '0';
        if (!align_given && default_align == '>') sp->align = '=';
        i++;
    }
    size_t consumed;
    int64_t w = spec_integer(rt, cp, n, &i, &consumed);
    if (consumed) sp->width = w;
    if (i < n && cp[i] == ',') {
        sp->grouping = ',';
        i++;
    }
    if (i < n && cp[i] == '_') {
        if (sp->grouping) rt_throw(rt, CF_ERR_VALUE, "Cannot specify both ',' and '_'.");
        sp->grouping = '_';
        i++;
    }
    if (i < n && cp[i] == ',' && sp->grouping == '_')
        rt_throw(rt, CF_ERR_VALUE, "Cannot specify both ',' and '_'.");
    if (i < n && cp[i] == '.') {
        i++;
        sp->prec = spec_integer(rt, cp, n, &i, &consumed);
        if (!consumed) rt_throw(rt, CF_ERR_VALUE, "Format specifier missing precision");
    }
    if (n - i > 1) {
        rt_throw(rt, CF_ERR_VALUE, "Invalid format specifier '%s' for object of type '%s'",
                 spec->data, v_type_name(obj));
    }
    if (n - i == 1) sp->type = cp[i];
    if (sp->grouping) {
        uint32_t t = sp->type;
        bool ok = t == 'd' || t == 'e' || t == 'f' || t == 'g' || t == 'E' || t == 'G' ||
                  t == '%' || t == 'F' || t == 0;
        if (!ok && sp->grouping == '_' && (t == 'b' || t == 'o' || t == 'x' || t == 'X')) ok = true;
        if (!ok) {
            StrBuf m;
            sb_init(rt, &m, 48);
            sb_printf(&m, "Cannot specify '%c' with '", sp->grouping);
            put_cp_repr(&m, t);
            sb_puts(&m, "'.");
            rt_throw(rt, CF_ERR_VALUE, "%s", sb_to_str(&m)->data);
        }
    }
    check_width(rt, sp->width);
    check_width(rt, sp->prec);
}

static _Noreturn void unknown_code(Rt *rt, uint32_t type, Value obj) {
    StrBuf m;
    sb_init(rt, &m, 64);
    sb_puts(&m, "Unknown format code '");
    if (type >= 32 && type < 127) sb_putc(&m, (char)type);
    else sb_printf(&m, "\\x%x", type);
    sb_printf(&m, "' for object of type '%s'", v_type_name(obj));
    rt_throw(rt, CF_ERR_VALUE, "%s", sb_to_str(&m)->data);
}

/* Pad `body` (n bytes) to sp->width with sp->fill per sp->align. */
static void put_aligned(StrBuf *sb, const Spec *sp, const char *body, size_t n) {
    int64_t len = (int64_t)nchars(body, n);
    int64_t pad = sp->width > len ? sp->width - len : 0;
    int64_t left = sp->align == '>' ? pad : sp->align == '^' ? pad / 2 : 0;
    put_fill(sb, sp->fill, left);
    sb_put(sb, body, n);
    put_fill(sb, sp->fill, pad - left);
}

/* CPython's _PyUnicode_InsertThousandsGrouping: the digits grouped by
 * `group` (0 = none) and zero-padded to min_width, written right to left. */
static void put_grouped(Rt *rt, StrBuf *sb, const char *d, int64_t nd, int64_t min_width, int group,
                        char sep) {
    if (nd == 0) return;
    if (min_width < 0) min_width = 0;
    int64_t cap = (nd > min_width ? nd : min_width) * 2 + 4;
    char *rev = rt_alloc(rt, (size_t)cap);
    int64_t k = 0, remaining = nd, pos = nd;
    bool use_sep = false, broken = false;
    if (group > 0) {
        for (;;) {
            int64_t len = group, m = remaining > min_width ? remaining : min_width;
            if (m < 1) m = 1;
            if (len > m) len = m;
            int64_t zeros = len - remaining > 0 ? len - remaining : 0;
            int64_t chars = remaining < len ? remaining : len;
            if (chars < 0) chars = 0;
            if (use_sep) rev[k++] = sep;
            for (int64_t j = 0; j < chars; j++) rev[k++] = d[--pos];
            for (int64_t j = 0; j < zeros; j++) rev[k++] = '0';
            use_sep = true;
            remaining -= chars;
            min_width -= len;
            if (remaining <= 0 && min_width <= 0) {
                broken = true;
                break;
            }
            min_width -= 1;
        }
    }
    if (!broken) {
        int64_t len = remaining > min_width ? remaining : min_width;
        if (len < 1) len = 1;
        int64_t zeros = len - remaining > 0 ? len - remaining : 0;
        int64_t chars = remaining < len ? remaining : len;
        if (use_sep) rev[k++] = sep;
        for (int64_t j = 0; j < chars; j++) rev[k++] = d[--pos];
        for (int64_t j = 0; j < zeros; j++) rev[k++] = '0';
    }
    for (int64_t j = k; j-- > 0;) sb_putc(sb, rev[j]);
}

/* CPython's calc_number_widths + fill_number: sign, prefix, grouped
 * digits, then the rest ("." fraction, exponent, "%", or a 'c' char). */
static void put_number(Rt *rt, StrBuf *sb, const Spec *sp, bool neg, const char *prefix,
                       const char *digits, size_t nd, const char *rest, size_t nrest, int group) {
    char sign = neg ? '-' : sp->sign == '+' ? '+' : sp->sign == ' ' ? ' ' : 0;
    int64_t nprefix = (int64_t)strlen(prefix);
    int64_t nonpad = (sign ? 1 : 0) + nprefix + (int64_t)nchars(rest, nrest);
    int64_t min_width = sp->fill == '0' && sp->align == '=' ? sp->width - nonpad : 0;
    StrBuf g;
    sb_init(rt, &g, nd * 2 + 8);
    put_grouped(rt, &g, digits, (int64_t)nd, min_width, group, sp->grouping == '_' ? '_' : ',');
    int64_t pad = sp->width - (nonpad + (int64_t)g.len);
    int64_t lpad = 0, spad = 0, rpad = 0;
    if (pad > 0) {
        switch (sp->align) {
        case '<': rpad = pad; break;
        case '^': lpad = pad / 2; rpad = pad - lpad; break;
        case '=': spad = pad; break;
        default: lpad = pad; break;
        }
    }
    put_fill(sb, sp->fill, lpad);
    if (sign) sb_putc(sb, sign);
    sb_puts(sb, prefix);
    put_fill(sb, sp->fill, spad);
    sb_put(sb, g.p, g.len);
    sb_put(sb, rest, nrest);
    put_fill(sb, sp->fill, rpad);
}

/* Split a formatted number into leading digits and the rest, then output. */
static void put_number_text(Rt *rt, StrBuf *sb, const Spec *sp, const char *text, size_t n,
                            const char *prefix) {
    bool neg = n && text[0] == '-';
    if (neg) text++, n--;
    size_t nd = 0;
    while (nd < n && text[nd] >= '0' && text[nd] <= '9') nd++;
    int group = !sp->grouping ? 0 : (sp->grouping == '_' && sp->type != 0 && strchr("boxX", (int)sp->type)) ? 4 : 3;
    put_number(rt, sb, sp, neg, prefix, text, nd, text + nd, n - nd, group);
}

static void format_str(Rt *rt, StrBuf *sb, Value v, Str *spec) {
    Spec sp;
    spec_parse(rt, spec, v, '<', 's', &sp);
    if (sp.type != 's') unknown_code(rt, sp.type, v);
    if (sp.sign)
        rt_throw(rt, CF_ERR_VALUE, "%s not allowed in string format specifier", sp.sign == ' ' ? "Space" : "Sign");
    if (sp.no_neg_0)
        rt_throw(rt, CF_ERR_VALUE, "Negative zero coercion (z) not allowed in string format specifier");
    if (sp.alt) rt_throw(rt, CF_ERR_VALUE, "Alternate form (#) not allowed in string format specifier");
    if (sp.align == '=')
        rt_throw(rt, CF_ERR_VALUE, "'=' alignment not allowed in string format specifier");
    Str *s = v.u.s;
    size_t n = s->len;
    if (sp.prec >= 0 && (size_t)sp.prec < str_nchars(s)) n = utf8_offset(s->data, s->len, (size_t)sp.prec);
    put_aligned(sb, &sp, s->data, n);
}

static void format_float_value(Rt *rt, StrBuf *sb, double d, Spec *sp) {
    uint32_t type = sp->type;
    bool add_dot0 = false, pct = false;
    int64_t prec = sp->prec;
    if (type == 0) {
        add_dot0 = true;
        type = prec < 0 ? 'r' : 'g';
    }
    if (type == 'n') type = 'g';
    if (type == '%') {
        type = 'f';
        d *= 100;
        pct = true;
    }
    if (prec < 0) prec = 6;
    StrBuf t;
    sb_init(rt, &t, 32);
    if (type == 'r') fmt_float_repr(&t, d);
    else if (add_dot0) put_float_general_dot0(rt, &t, d, prec, sp->alt);
    else put_float(rt, &t, d, (char)type, prec, sp->alt);
    if (isnan(d) && t.len && t.p[0] == '-') {  /* Python never signs a NaN */
        memmove(t.p, t.p + 1, --t.len);
    }
    if (pct) sb_putc(&t, '%');
    if (sp->no_neg_0 && t.len && t.p[0] == '-') {
        bool zero = true;
        for (size_t k = 1; k < t.len && zero; k++) {
            char c = t.p[k];
            if (c == 'e' || c == 'E' || c == '%') break;
            if (c >= '1' && c <= '9') zero = false;
        }
        if (zero && !isnan(d) && !isinf(d)) memmove(t.p, t.p + 1, --t.len);
    }
    put_number_text(rt, sb, sp, t.p, t.len, "");
}

static void format_int(Rt *rt, StrBuf *sb, Value v, Str *spec) {
    Spec sp;
    spec_parse(rt, spec, v, '>', 'd', &sp);
    uint32_t t = sp.type;
    if (t == 'e' || t == 'E' || t == 'f' || t == 'F' || t == 'g' || t == 'G' || t == '%') {
        double d;
        number_as_double(rt, v, &d);
        format_float_value(rt, sb, d, &sp);
        return;
    }
    if (!(t == 'b' || t == 'c' || t == 'd' || t == 'o' || t == 'x' || t == 'X' || t == 'n'))
        unknown_code(rt, t, v);
    if (sp.prec >= 0) rt_throw(rt, CF_ERR_VALUE, "Precision not allowed in integer format specifier");
    if (sp.no_neg_0)
        rt_throw(rt, CF_ERR_VALUE, "Negative zero coercion (z) not allowed in integer format specifier");
    if (t == 'c') {
        if (sp.sign) rt_throw(rt, CF_ERR_VALUE, "Sign not allowed with integer format specifier 'c'");
        if (sp.alt)
            rt_throw(rt, CF_ERR_VALUE, "Alternate form (#) not allowed with integer format specifier 'c'");
        int64_t c = v.type == VT_BOOL ? v.u.b : v.type == VT_INT ? v.u.i : -1;
        if (c < 0 || c > 0x10FFFF) rt_throw(rt, CF_ERR_OVERFLOW, "%%c arg not in range(0x110000)");
        char enc[4];
        int k = utf8_encode((uint32_t)c, enc);
        put_number(rt, sb, &sp, false, "", "", 0, enc, (size_t)k, 0);
        return;
    }
    int base = t == 'b' ? 2 : t == 'o' ? 8 : (t == 'x' || t == 'X') ? 16 : 10;
    const char *prefix = !sp.alt ? "" : t == 'b' ? "0b" : t == 'o' ? "0o" : t == 'x' ? "0x" : t == 'X' ? "0X" : "";
    StrBuf digits;
    sb_init(rt, &digits, 24);
    bool neg = put_int_digits(rt, &digits, v, base, t == 'X');
    int group = !sp.grouping ? 0 : base == 10 ? 3 : 4;
    put_number(rt, sb, &sp, neg, prefix, digits.p, digits.len, "", 0, group);
}

/* Python format(v, spec) as string.Formatter.format_field calls it. */
static void format_value(Rt *rt, StrBuf *sb, Value v, Str *spec) {
    if (spec->len == 0) {
        v_write_str(rt, sb, v);
        return;
    }
    switch (v.type) {
    case VT_STR: format_str(rt, sb, v, spec); return;
    case VT_INT: case VT_BIGINT: case VT_BOOL: format_int(rt, sb, v, spec); return;
    case VT_FLOAT: {
        Spec sp;
        spec_parse(rt, spec, v, '>', 0, &sp);
        uint32_t t = sp.type;
        if (!(t == 0 || t == 'e' || t == 'E' || t == 'f' || t == 'F' || t == 'g' || t == 'G' ||
              t == 'n' || t == '%'))
            unknown_code(rt, t, v);
        format_float_value(rt, sb, v.u.f, &sp);
        return;
    }
    default:
        rt_throw(rt, CF_ERR_TYPE, "unsupported format string passed to %s.__format__", v_type_name(v));
    }
}

/* ------------------------------------------------------------------ */
/* str.format through string.Formatter (the sandbox's formatter)         */
/* ------------------------------------------------------------------ */

typedef struct Fmt {
    Rt *rt;
    const Args *args;
    bool escape;        /* Markup format string: markupsafe's EscapeFormatter */
} Fmt;

static bool all_ascii_digits(const char *s, size_t n) {
    if (!n) return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9') return false;
    return true;
}

static int64_t parse_index(const char *s, size_t n) {
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (v > (INT64_MAX - 9) / 10) return INT64_MAX;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* string.Formatter.get_field: the first name, then .attr and [key] parts. */
static Value get_field(Fmt *fm, const char *name, size_t n) {
    Rt *rt = fm->rt;
    size_t i = 0;
    while (i < n && name[i] != '.' && name[i] != '[') i++;
    Value obj;
    if (all_ascii_digits(name, i)) {
        int64_t idx = parse_index(name, i);
        if (idx >= fm->args->npos) rt_throw(rt, CF_ERR_INDEX, "tuple index out of range");
        obj = fm->args->pos[idx];
    } else {
        int k;
        for (k = 0; k < fm->args->nkw; k++) {
            Str *kn = fm->args->kwnames[k];
            if (kn->len == i && memcmp(kn->data, name, i) == 0) break;
        }
        if (k == fm->args->nkw) {
            StrBuf m;
            sb_init(rt, &m, i + 4);
            v_write_repr(rt, &m, v_str(rt, name, i));
            rt_throw(rt, CF_ERR_KEY, "%s", sb_to_str(&m)->data);
        }
        obj = fm->args->kwvals[k];
    }
    while (i < n) {
        if (name[i] == '.') {
            size_t s = ++i;
            while (i < n && name[i] != '.' && name[i] != '[') i++;
            if (i == s) rt_throw(rt, CF_ERR_VALUE, "Empty attribute in format string");
            obj = v_getattr(rt, obj, name + s, i - s);
        } else if (name[i] == '[') {
            size_t s = ++i;
            while (i < n && name[i] != ']') i++;
            if (i >= n) rt_throw(rt, CF_ERR_VALUE, "Missing ']' in format string");
            if (i == s) rt_throw(rt, CF_ERR_VALUE, "Empty attribute in format string");
            Value key = all_ascii_digits(name + s, i - s) ? v_int(parse_index(name + s, i - s))
                                                          : v_str(rt, name + s, i - s);
            obj = v_getitem(rt, obj, key);
            i++;
            if (i < n && name[i] != '.' && name[i] != '[')
                rt_throw(rt, CF_ERR_VALUE, "Only '.' or '[' may follow ']' in format field specifier");
        } else {
            rt_throw(rt, CF_ERR_VALUE, "Only '.' or '[' may follow ']' in format field specifier");
        }
    }
    return obj;
}

/* Render one replacement field (already converted) into sb. */
static void format_field(Fmt *fm, StrBuf *sb, Value v, Str *spec) {
    Rt *rt = fm->rt;
    if (!fm->escape) {
        format_value(rt, sb, v, spec);
        return;
    }
    if (v.type == VT_STR && (v.flags & VF_MARKUP)) {  /* Markup.__html_format__ */
        if (spec->len) rt_throw(rt, CF_ERR_VALUE, "Unsupported format specification for Markup.");
        sb_put(sb, v.u.s->data, v.u.s->len);
        return;
    }
    StrBuf t;
    sb_init(rt, &t, 32);
    format_value(rt, &t, v, spec);
    put_escaped(sb, t.p, t.len);
}

/* string.Formatter._vformat; returns the next automatic index (or -1 once
 * manual numbering was used), as Python threads auto_arg_index through. */
static int64_t vformat(Fmt *fm, StrBuf *out, const char *s, size_t n, int depth, int64_t auto_idx) {
    Rt *rt = fm->rt;
    if (depth < 0) rt_throw(rt, CF_ERR_VALUE, "Max string recursion exceeded");
    size_t i = 0;
    rt_step(rt, n / 1024 + 1);
    while (i < n) {
        /* literal text up to '{' or '}' */
        size_t start = i;
        char c = 0;
        while (i < n) {
            c = s[i++];
            if (c == '{' || c == '}') break;
            c = 0;
        }
        bool at_end = i >= n;
        size_t litlen = i - start;
        bool markup = c != 0;
        if (c == '}' && (at_end || s[i] != '}'))
            rt_throw(rt, CF_ERR_VALUE, "Single '}' encountered in format string");
        if (at_end && c == '{') rt_throw(rt, CF_ERR_VALUE, "Single '{' encountered in format string");
        if (!at_end && markup) {
            if (s[i] == c) {
                i++;          /* "{{" or "}}": the literal keeps one brace */
                markup = false;
            } else {
                litlen--;
            }
        }
        sb_put(out, s + start, litlen);
        if (!markup) continue;

        /* field name up to ':' '!' or '}', skipping [..] */
        size_t fname = i;
        c = 0;
        while (i < n) {
            c = s[i++];
            if (c == '{') rt_throw(rt, CF_ERR_VALUE, "unexpected '{' in field name");
            if (c == '[') {
                while (i < n && s[i] != ']') i++;
                c = 0;
                continue;
            }
            if (c == '}' || c == ':' || c == '!') break;
            c = 0;
        }
        size_t fname_end = c ? i - 1 : i;
        char conversion = 0;
        size_t spec_start = i, spec_end = i;
        if (c == '!' || c == ':') {
            bool have_spec = true;
            if (c == '!') {
                if (i >= n) rt_throw(rt, CF_ERR_VALUE, "end of string while looking for conversion specifier");
                conversion = s[i++];
                if (i < n) {
                    char d = s[i++];
                    if (d == '}') have_spec = false;
                    else if (d != ':') rt_throw(rt, CF_ERR_VALUE, "expected ':' after conversion specifier");
                }
            }
            if (have_spec) {
                spec_start = i;
                int count = 1;
                bool closed = false;
                while (i < n) {
                    char d = s[i++];
                    if (d == '{') {
                        count++;
                    } else if (d == '}') {
                        if (--count == 0) {
                            closed = true;
                            break;
                        }
                    }
                }
                if (!closed) rt_throw(rt, CF_ERR_VALUE, "unmatched '{' in format spec");
                spec_end = i - 1;
            } else {
                spec_start = spec_end = i;
            }
        } else if (c != '}') {
            rt_throw(rt, CF_ERR_VALUE, "expected '}' before end of string");
        }

        /* automatic / manual numbering */
        const char *name = s + fname;
        size_t nlen = fname_end - fname;
        char numbuf[24];
        if (nlen == 0) {
            if (auto_idx < 0)
                rt_throw(rt, CF_ERR_VALUE,
                         "cannot switch from manual field specification to automatic field numbering");
            nlen = (size_t)snprintf(numbuf, sizeof numbuf, "%lld", (long long)auto_idx++);
            name = numbuf;
        } else if (all_ascii_digits(name, nlen)) {
            if (auto_idx > 0)
                rt_throw(rt, CF_ERR_VALUE,
                         "cannot switch from manual field specification to automatic field numbering");
            auto_idx = -1;
        }
        Value obj = get_field(fm, name, nlen);
        switch (conversion) {
        case 0: break;
        case 's': obj = v_str_of(str_of(rt, obj)); break;
        case 'r': obj = v_str_of(repr_of(rt, obj)); break;
        case 'a': {
            Str *r = repr_of(rt, obj);
            StrBuf a;
            sb_init(rt, &a, r->len + 8);
            put_ascii_escaped(&a, r->data, r->len);
            obj = sb_to_value(&a);
            break;
        }
        default: {
            StrBuf m;
            sb_init(rt, &m, 48);
            sb_puts(&m, "Unknown conversion specifier ");
            sb_putc(&m, conversion);
            rt_throw(rt, CF_ERR_VALUE, "%s", sb_to_str(&m)->data);
        }
        }
        if (obj.type == VT_STR && conversion) obj.flags &= (uint8_t)~VF_MARKUP;
        StrBuf spec;
        sb_init(rt, &spec, spec_end - spec_start + 1);
        auto_idx = vformat(fm, &spec, s + spec_start, spec_end - spec_start, depth - 1, auto_idx);
        format_field(fm, out, obj, sb_to_str(&spec));
    }
    return auto_idx;
}

Value py_str_format(Rt *rt, Value fmt, const Args *args) {
    Str *fs = str_of(rt, fmt);
    Fmt fm = {rt, args, fmt.type == VT_STR && (fmt.flags & VF_MARKUP)};
    StrBuf out;
    sb_init(rt, &out, fs->len + 16);
    vformat(&fm, &out, fs->data, fs->len, 2, 0);
    Value r = sb_to_value(&out);
    if (fm.escape) r = v_markup(r);
    return r;
}
