/* bigint.c — Python int arithmetic beyond 64 bits.
 *
 * Operands arrive as Values (int64 or decimal-digit VT_BIGINT) and are
 * converted to magnitudes of base-2^32 limbs in the arena; results go back
 * through big_value(), which yields VT_INT whenever the result fits. Binary
 * limbs make the float conversions exact (true division and float(int) are
 * correctly rounded, as in CPython); decimal conversion is quadratic, which
 * is fine at template sizes and is charged to the step budget beforehand.
 * Schoolbook multiplication and Knuth's algorithm D for division. */
#include "bigint.h"

#include <float.h>
#include <math.h>
#include "lexer.h"

typedef struct Big {
    const uint32_t *d;  /* magnitude, least significant limb first */
    size_t n;           /* limbs in use, no high zero limbs; 0 for zero */
    bool neg;           /* never set for zero */
} Big;

static const uint32_t POW10[10] = {1, 10, 100, 1000, 10000, 100000, 1000000,
                                   10000000, 100000000, 1000000000};
static const double LOG2_10 = 3.321928094887362;

/* ======================================================================
 * Budget: results are capped in size, work is charged to rt_step.
 * ====================================================================== */

/* One step per 16 limb operations, charged before the work so that a
 * hopeless computation fails at once instead of after the budget's worth. */
static void charge(Rt *rt, double limb_ops) {
    if (!rt) return;
    double steps = limb_ops / 16;
    rt_step(rt, steps > 1e15 ? (uint64_t)1e15 : (uint64_t)steps);
}

/* Throw LimitError when a result of about `bits` bits would be longer than
 * max_string / 4 decimal digits. */
static void check_result_bits(Rt *rt, double bits) {
    size_t max_digits = rt->lim.max_string / 4;
    if (bits > (double)max_digits * LOG2_10 + 1)
        rt_throw(rt, CF_ERR_LIMIT,
                 "integer result of about %.3g digits exceeds max_string / 4 (%zu digits; raise it with --max-string / cf_limits.max_string)",
                 bits / LOG2_10, max_digits);
}

/* ======================================================================
 * Magnitudes: limb arrays. Outputs go to caller-provided buffers.
 * ====================================================================== */

static uint32_t *limbs(Rt *rt, size_t n) { return rt_alloc(rt, (n ? n : 1) * sizeof(uint32_t)); }

static size_t trimmed(const uint32_t *d, size_t n) {
    while (n && !d[n - 1]) n--;
    return n;
}

static int clz32(uint32_t x) {
    int n = 0;
    while (!(x & 0x80000000u)) x <<= 1, n++;
    return n;
}

static size_t mag_bits(const uint32_t *d, size_t n) {
    return n ? n * 32 - (size_t)clz32(d[n - 1]) : 0;
}

static int mag_cmp(const uint32_t *a, size_t an, const uint32_t *b, size_t bn) {
    if (an != bn) return an < bn ? -1 : 1;
    for (size_t i = an; i-- > 0;)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}

/* r = a + b; r holds max(an, bn) + 1 limbs. */
static size_t mag_add(uint32_t *r, const uint32_t *a, size_t an, const uint32_t *b, size_t bn) {
    if (an < bn) {
        const uint32_t *t = a; a = b; b = t;
        size_t tn = an; an = bn; bn = tn;
    }
    uint64_t carry = 0;
    for (size_t i = 0; i < an; i++) {
        carry += (uint64_t)a[i] + (i < bn ? b[i] : 0);
        r[i] = (uint32_t)carry;
        carry >>= 32;
    }
    r[an] = (uint32_t)carry;
    return trimmed(r, an + 1);
}

/* r = a - b for a >= b; r holds an limbs. */
static size_t mag_sub(uint32_t *r, const uint32_t *a, size_t an, const uint32_t *b, size_t bn) {
    uint64_t borrow = 0;
    for (size_t i = 0; i < an; i++) {
        uint64_t t = (uint64_t)a[i] - (i < bn ? b[i] : 0) - borrow;
        r[i] = (uint32_t)t;
        borrow = t >> 63;
    }
    return trimmed(r, an);
}

/* r = a * b; r holds an + bn limbs. */
static size_t mag_mul(uint32_t *r, const uint32_t *a, size_t an, const uint32_t *b, size_t bn) {
    memset(r, 0, (an + bn) * sizeof *r);
    for (size_t i = 0; i < an; i++) {
        uint64_t carry = 0;
        for (size_t j = 0; j < bn; j++) {
            carry += (uint64_t)a[i] * b[j] + r[i + j];
            r[i + j] = (uint32_t)carry;
            carry >>= 32;
        }
        r[i + bn] = (uint32_t)carry;
    }
    return trimmed(r, an + bn);
}

/* d = d * mul + add in place (d has room for one more limb); returns the new length. */
static size_t mag_mul_add_small(uint32_t *d, size_t n, uint32_t mul, uint32_t add) {
    uint64_t carry = add;
    for (size_t i = 0; i < n; i++) {
        carry += (uint64_t)d[i] * mul;
        d[i] = (uint32_t)carry;
        carry >>= 32;
    }
    if (carry) d[n++] = (uint32_t)carry;
    return n;
}

/* q = a / v, returns the remainder; q holds an limbs (may be a itself). */
static uint32_t mag_div_small(uint32_t *q, const uint32_t *a, size_t an, uint32_t v) {
    uint64_t rem = 0;
    for (size_t i = an; i-- > 0;) {
        uint64_t cur = rem << 32 | a[i];
        q[i] = (uint32_t)(cur / v);
        rem = cur % v;
    }
    return (uint32_t)rem;
}

/* r = a >> s; r holds an limbs. *sticky |= whether any shifted-out bit was set. */
static size_t mag_shr(uint32_t *r, const uint32_t *a, size_t an, size_t s, bool *sticky) {
    size_t limb = s / 32;
    unsigned bit = (unsigned)(s % 32);
    if (limb >= an) {
        *sticky |= an > 0;
        return 0;
    }
    for (size_t i = 0; i < limb; i++) *sticky |= a[i] != 0;
    if (bit) *sticky |= (a[limb] & ((1u << bit) - 1)) != 0;
    size_t rn = an - limb;
    for (size_t i = 0; i < rn; i++) {
        uint32_t lo = a[limb + i] >> bit;
        uint32_t hi = (bit && limb + i + 1 < an) ? a[limb + i + 1] << (32 - bit) : 0;
        r[i] = lo | hi;
    }
    return trimmed(r, rn);
}

/* r = a << s; r holds an + s / 32 + 1 limbs. */
static size_t mag_shl(uint32_t *r, const uint32_t *a, size_t an, size_t s) {
    size_t limb = s / 32;
    unsigned bit = (unsigned)(s % 32);
    memset(r, 0, limb * sizeof *r);
    r[an + limb] = 0;
    for (size_t i = an; i-- > 0;) {
        if (bit) r[i + limb + 1] |= a[i] >> (32 - bit);
        r[i + limb] = a[i] << bit;
    }
    return trimmed(r, an + limb + 1);
}

/* Knuth's algorithm D (TAOCP 4.3.1): u (m limbs) by v (n >= 2 limbs, m >= n).
 * q gets m - n + 1 limbs, r gets n limbs. */
static void mag_divmod_long(Rt *rt, const uint32_t *u, size_t m, const uint32_t *v, size_t n,
                            uint32_t *q, uint32_t *r) {
    /* Normalise so that the divisor's top bit is set: the quotient digit
     * estimate is then off by at most 2. */
    int s = clz32(v[n - 1]);
    uint32_t *vn = limbs(rt, n + 1), *un = limbs(rt, m + 1);
    mag_shl(vn, v, n, (size_t)s);      /* writes n + 1 limbs, the top one 0 */
    mag_shl(un, u, m, (size_t)s);      /* writes all m + 1 limbs */
    const uint64_t B = (uint64_t)1 << 32;
    for (size_t j = m - n + 1; j-- > 0;) {
        uint64_t num = (uint64_t)un[j + n] << 32 | un[j + n - 1];
        uint64_t qhat = num / vn[n - 1], rhat = num % vn[n - 1];
        while (qhat >= B || qhat * vn[n - 2] > (rhat << 32 | un[j + n - 2])) {
            qhat--;
            rhat += vn[n - 1];
            if (rhat >= B) break;
        }
        /* un[j .. j+n] -= qhat * vn */
        uint64_t carry = 0, borrow = 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t p = qhat * vn[i] + carry;
            carry = p >> 32;
            uint64_t t = (uint64_t)un[i + j] - (uint32_t)p - borrow;
            un[i + j] = (uint32_t)t;
            borrow = t >> 63;
        }
        uint64_t t = (uint64_t)un[j + n] - carry - borrow;
        un[j + n] = (uint32_t)t;
        q[j] = (uint32_t)qhat;
        if (t >> 63) {       /* qhat was one too large: add the divisor back */
            q[j]--;
            uint64_t c = 0;
            for (size_t i = 0; i < n; i++) {
                c += (uint64_t)un[i + j] + vn[i];
                un[i + j] = (uint32_t)c;
                c >>= 32;
            }
            un[j + n] += (uint32_t)c;
        }
    }
    bool dropped = false;               /* always false: the low s bits are 0 */
    mag_shr(r, un, n, (size_t)s, &dropped);   /* writes all n limbs */
}

/* Decimal digits (no sign) -> limbs in d, which holds len / 9 + 1 limbs. */
static size_t mag_from_decimal(Rt *rt, uint32_t *d, const char *s, size_t len) {
    size_t n = 0;
    size_t chunk = len % 9 ? len % 9 : 9;
    for (size_t i = 0; i < len; i += chunk, chunk = 9) {
        uint32_t part = 0;
        for (size_t k = 0; k < chunk; k++) part = part * 10 + (uint32_t)(s[i + k] - '0');
        n = mag_mul_add_small(d, n, POW10[chunk], part);
        charge(rt, (double)n);
    }
    return n;
}

/* ======================================================================
 * Signed numbers in the arena
 * ====================================================================== */

static Big big_make(const uint32_t *d, size_t n, bool neg) {
    Big b = {d, n, neg && n > 0};
    return b;
}

static Big big_of(Rt *rt, Value v) {
    if (v.type == VT_BIGINT) {
        const char *s = v.u.s->data;
        size_t len = v.u.s->len;
        bool neg = s[0] == '-';
        if (neg) s++, len--;
        uint32_t *d = limbs(rt, len / 9 + 1);
        return big_make(d, mag_from_decimal(rt, d, s, len), neg);
    }
    int64_t i = v.type == VT_BOOL ? (int64_t)v.u.b : v.u.i;
    uint64_t m = i < 0 ? 0 - (uint64_t)i : (uint64_t)i;
    uint32_t *d = limbs(rt, 2);
    d[0] = (uint32_t)m;
    d[1] = (uint32_t)(m >> 32);
    return big_make(d, trimmed(d, 2), i < 0);
}

/* The Value for b: VT_INT when it fits, else decimal digits. */
static Value big_value(Rt *rt, Big b) {
    if (b.n <= 2) {
        uint64_t m = b.n == 0 ? 0 : b.n == 1 ? b.d[0] : (b.d[0] | (uint64_t)b.d[1] << 32);
        if (!b.neg && m <= (uint64_t)INT64_MAX) return v_int((int64_t)m);
        if (b.neg && m <= (uint64_t)INT64_MAX + 1) return v_int(-(int64_t)(m - 1) - 1);
    }
    check_result_bits(rt, (double)mag_bits(b.d, b.n));
    /* about 1.07 n passes over n / 2 limbs on average, each a division */
    charge(rt, (double)b.n * (double)b.n * 2);
    /* Peel off 9 decimal digits at a time from a scratch copy. */
    uint32_t *t = limbs(rt, b.n);
    memcpy(t, b.d, b.n * sizeof *t);
    size_t tn = b.n, cap = b.n * 10 + 12, k = cap;
    char *buf = rt_alloc(rt, cap);
    while (tn) {
        /* a constant divisor, so the compiler divides by multiplying */
        uint64_t rem = 0;
        for (size_t i = tn; i-- > 0;) {
            uint64_t cur = rem << 32 | t[i];
            t[i] = (uint32_t)(cur / 1000000000u);
            rem = cur % 1000000000u;
        }
        uint32_t group = (uint32_t)rem;
        tn = trimmed(t, tn);
        for (int i = 0; i < 9 && (tn || group); i++) {
            buf[--k] = (char)('0' + group % 10);
            group /= 10;
        }
    }
    if (b.neg) buf[--k] = '-';
    return v_bigint(rt, buf + k, cap - k);
}

static Big big_add(Rt *rt, Big a, Big b) {
    size_t cap = (a.n > b.n ? a.n : b.n) + 1;
    uint32_t *r = limbs(rt, cap);
    if (a.neg == b.neg) return big_make(r, mag_add(r, a.d, a.n, b.d, b.n), a.neg);
    if (mag_cmp(a.d, a.n, b.d, b.n) >= 0) return big_make(r, mag_sub(r, a.d, a.n, b.d, b.n), a.neg);
    return big_make(r, mag_sub(r, b.d, b.n, a.d, a.n), b.neg);
}

static Big big_negated(Big a) {
    a.neg = !a.neg && a.n > 0;
    return a;
}

static Big big_mul(Rt *rt, Big a, Big b) {
    check_result_bits(rt, (double)mag_bits(a.d, a.n) + (double)mag_bits(b.d, b.n) - 1);
    charge(rt, (double)a.n * (double)b.n);
    uint32_t *r = limbs(rt, a.n + b.n);
    return big_make(r, mag_mul(r, a.d, a.n, b.d, b.n), a.neg != b.neg);
}

/* Python's floor division and modulo together; b is not zero. */
static void big_floordivmod(Rt *rt, Big a, Big b, Big *q, Big *r) {
    Big mq = {0}, mr = a;
    mr.neg = false;
    if (mag_cmp(a.d, a.n, b.d, b.n) >= 0) {
        uint32_t *qd = limbs(rt, a.n - b.n + 1);
        if (b.n == 1) {
            uint32_t *rd = limbs(rt, 1);
            rd[0] = mag_div_small(qd, a.d, a.n, b.d[0]);
            mr = big_make(rd, trimmed(rd, 1), false);
        } else {
            charge(rt, (double)(a.n - b.n + 1) * (double)b.n);
            uint32_t *rd = limbs(rt, b.n);
            mag_divmod_long(rt, a.d, a.n, b.d, b.n, qd, rd);
            mr = big_make(rd, trimmed(rd, b.n), false);
        }
        mq = big_make(qd, trimmed(qd, a.n - b.n + 1), false);
    }
    /* Truncated -> floored: with mixed signs and a remainder, the quotient
     * moves one further from zero and the remainder becomes |b| - r. */
    bool mixed = a.neg != b.neg;
    if (mixed && mr.n) {
        static const uint32_t one_limb = 1;
        Big one = {&one_limb, 1, false};
        mq = big_add(rt, mq, one);
        Big babs = b;
        babs.neg = false;
        mr = big_add(rt, babs, big_negated(mr));
    }
    if (q) *q = big_make(mq.d, mq.n, mixed);
    if (r) *r = big_make(mr.d, mr.n, b.neg);
}

/* log2(|a|) to double precision; a is not zero. */
static double big_log2(Big a) {
    double top = a.d[a.n - 1];
    if (a.n > 1) top = top * 4294967296.0 + a.d[a.n - 2];
    return log2(top) + 32.0 * (double)(a.n > 1 ? a.n - 2 : 0);
}

/* ======================================================================
 * Floats
 * ====================================================================== */

/* |a| correctly rounded to a double (half to even); inf when too large.
 * Keeps 55 bits, folds the rest into a sticky bit, and lets the exact
 * uint64 -> double conversion do the 53-bit rounding. */
static double mag_to_double(const uint32_t *d, size_t n, uint32_t *scratch) {
    size_t bits = mag_bits(d, n);
    if (bits <= 64) return (double)(n == 0 ? 0 : n == 1 ? d[0] : (d[0] | (uint64_t)d[1] << 32));
    if (bits > DBL_MAX_EXP) return INFINITY;
    bool sticky = false;
    size_t tn = mag_shr(scratch, d, n, bits - (DBL_MANT_DIG + 2), &sticky);
    uint64_t top = scratch[0] | (tn > 1 ? (uint64_t)scratch[1] << 32 : 0);
    return ldexp((double)(top | sticky), (int)(bits - (DBL_MANT_DIG + 2)));
}

double bigint_to_double(Value a) {
    if (a.type != VT_BIGINT) return a.type == VT_BOOL ? (double)a.u.b : (double)a.u.i;
    const char *s = a.u.s->data;
    size_t len = a.u.s->len;
    bool neg = s[0] == '-';
    if (neg) s++, len--;
    /* 10^309 > DBL_MAX rounds to inf; anything shorter fits these buffers
     * (309 digits < 1027 bits), so no arena is needed. */
    double r = INFINITY;
    if (len <= 309) {
        uint32_t d[40], scratch[40];
        size_t n = mag_from_decimal(NULL, d, s, len);
        r = mag_to_double(d, n, scratch);
    }
    return neg ? -r : r;
}

double bigint_to_float(Rt *rt, Value a) {
    double d = bigint_to_double(a);
    if (isinf(d)) rt_throw(rt, CF_ERR_OVERFLOW, "int too large to convert to float");
    return d;
}

static _Noreturn void division_overflow(Rt *rt) {
    rt_throw(rt, CF_ERR_OVERFLOW, "integer division result too large for a float");
}

/* a / b correctly rounded, following CPython's long_true_divide: scale a by
 * a power of two so the integer quotient has DBL_MANT_DIG + 2 bits (fewer
 * for subnormal results), fold the remainder into a sticky bit, round half
 * to even by hand, then scale back with ldexp. */
static double big_true_divide(Rt *rt, Big a, Big b) {
    if (b.n == 0) rt_throw(rt, CF_ERR_ZERO_DIVISION, "division by zero");
    bool negate = a.neg != b.neg;
    if (a.n == 0) return negate ? -0.0 : 0.0;
    size_t a_bits = mag_bits(a.d, a.n), b_bits = mag_bits(b.d, b.n);
    if (a_bits <= DBL_MANT_DIG && b_bits <= DBL_MANT_DIG) {
        /* both exact as doubles: one IEEE division rounds correctly */
        double r = mag_to_double(a.d, a.n, NULL) / mag_to_double(b.d, b.n, NULL);
        return negate ? -r : r;
    }
    /* diff = a_bits - b_bits; the quotient lies in [2^(diff-1), 2^(diff+1)) */
    int64_t diff = (int64_t)a_bits - (int64_t)b_bits;
    if (diff > DBL_MAX_EXP) division_overflow(rt);
    if (diff < DBL_MIN_EXP - DBL_MANT_DIG - 1) return negate ? -0.0 : 0.0;
    int64_t shift = (diff > DBL_MIN_EXP ? diff : DBL_MIN_EXP) - DBL_MANT_DIG - 2;
    bool inexact = false;
    uint32_t *x;
    size_t xn;
    if (shift <= 0) {
        x = limbs(rt, a.n + (size_t)-shift / 32 + 1);
        xn = mag_shl(x, a.d, a.n, (size_t)-shift);
    } else {
        x = limbs(rt, a.n);
        xn = mag_shr(x, a.d, a.n, (size_t)shift, &inexact);
    }
    Big q, rem;
    big_floordivmod(rt, big_make(x, xn, false), big_make(b.d, b.n, false), &q, &rem);
    inexact |= rem.n > 0;
    /* q has at most DBL_MANT_DIG + 3 bits: it fits a uint64 */
    uint64_t xq = q.n == 0 ? 0 : q.n == 1 ? q.d[0] : (q.d[0] | (uint64_t)q.d[1] << 32);
    int64_t x_bits = (int64_t)mag_bits(q.d, q.n);
    int64_t extra = (x_bits > DBL_MIN_EXP - shift ? x_bits : DBL_MIN_EXP - shift) - DBL_MANT_DIG;
    uint64_t mask = (uint64_t)1 << (extra - 1);
    uint64_t low = xq | inexact;
    if ((low & mask) && (low & (3 * mask - 1))) xq += mask;
    xq &= ~(2 * mask - 1);
    double dx = (double)xq;   /* exact: at most 53 significant bits */
    if (shift + x_bits >= DBL_MAX_EXP && (shift + x_bits > DBL_MAX_EXP || dx == ldexp(1.0, (int)x_bits)))
        division_overflow(rt);
    double r = ldexp(dx, (int)shift);
    return negate ? -r : r;
}

/* int ** negative int: Python converts both to float (float_pow). */
static Value pow_negative(Rt *rt, Value a, Value b) {
    double x = bigint_to_float(rt, a), y = bigint_to_float(rt, b);
    if (x == 0) rt_throw(rt, CF_ERR_ZERO_DIVISION, "0.0 cannot be raised to a negative power");
    return v_float(pow(x, y));   /* |x| >= 1 and y < 0: no overflow */
}

/* ======================================================================
 * Power
 * ====================================================================== */

static Value big_pow(Rt *rt, Value av, Value bv) {
    Big e = big_of(rt, bv);
    if (e.neg) return pow_negative(rt, av, bv);
    Big base = big_of(rt, av);
    bool odd = e.n && (e.d[0] & 1);
    /* 0, 1 and -1 stay small whatever the exponent */
    if (base.n == 0) return v_int(e.n == 0);
    if (base.n == 1 && base.d[0] == 1) return v_int(base.neg && odd ? -1 : 1);
    if (e.n) check_result_bits(rt, big_log2(base) * exp2(big_log2(e)));   /* before any work */
    uint64_t n = e.n == 0 ? 0 : e.n == 1 ? e.d[0] : (e.d[0] | (uint64_t)e.d[1] << 32);
    static const uint32_t one_limb = 1;
    Big result = {&one_limb, 1, false};
    Big sq = base;
    sq.neg = false;
    while (n) {
        if (n & 1) result = big_mul(rt, result, sq);
        n >>= 1;
        if (n) sq = big_mul(rt, sq, sq);
    }
    result.neg = base.neg && odd;
    return big_value(rt, result);
}

/* ======================================================================
 * Entry points
 * ====================================================================== */

static bool is_integer(Value v) { return v.type == VT_INT || v.type == VT_BOOL || v.type == VT_BIGINT; }

bool bigint_arith(Rt *rt, uint8_t op, Value a, Value b, Value *out) {
    if (!is_integer(a) || !is_integer(b)) return false;
    switch (op) {
    case OP_ADD: *out = big_value(rt, big_add(rt, big_of(rt, a), big_of(rt, b))); return true;
    case OP_SUB: *out = big_value(rt, big_add(rt, big_of(rt, a), big_negated(big_of(rt, b)))); return true;
    case OP_MUL: *out = big_value(rt, big_mul(rt, big_of(rt, a), big_of(rt, b))); return true;
    case OP_DIV: *out = v_float(big_true_divide(rt, big_of(rt, a), big_of(rt, b))); return true;
    case OP_FLOORDIV: case OP_MOD: {
        Big x = big_of(rt, a), y = big_of(rt, b), res;
        if (y.n == 0)
            rt_throw(rt, CF_ERR_ZERO_DIVISION, op == OP_MOD ? "integer modulo by zero" : "integer division or modulo by zero");
        if (op == OP_MOD) big_floordivmod(rt, x, y, NULL, &res);
        else big_floordivmod(rt, x, y, &res, NULL);
        *out = big_value(rt, res);
        return true;
    }
    case OP_POW: *out = big_pow(rt, a, b); return true;
    default: return false;
    }
}

Value bigint_neg(Rt *rt, Value a) {
    if (a.type == VT_BIGINT) {
        const Str *s = a.u.s;
        if (s->data[0] == '-') return v_bigint(rt, s->data + 1, s->len - 1);
        char *buf = rt_alloc(rt, s->len + 1);
        buf[0] = '-';
        memcpy(buf + 1, s->data, s->len);
        return v_bigint(rt, buf, s->len + 1);
    }
    if (a.type == VT_BOOL) return v_int(-(int64_t)a.u.b);
    if (a.type == VT_INT) {
        if (a.u.i == INT64_MIN) return v_bigint(rt, "9223372036854775808", 19);
        return v_int(-a.u.i);
    }
    if (a.type == VT_FLOAT) return v_float(-a.u.f);
    rt_throw(rt, CF_ERR_TYPE, "bad operand type for unary -: '%s'", v_type_name(a));
}

size_t bigint_bit_length(Rt *rt, Value a) {
    Big b = big_of(rt, a);
    return mag_bits(b.d, b.n);
}

uint64_t bigint_bit_count(Rt *rt, Value a) {
    Big b = big_of(rt, a);
    uint64_t ones = 0;
    for (size_t i = 0; i < b.n; i++) ones += (uint64_t)__builtin_popcount(b.d[i]);
    return ones;
}
