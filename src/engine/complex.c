/* complex.c — Python's complex numbers, as far as a template can reach them.
 *
 * A template makes one only by `**`: a negative number to a fractional
 * power is complex in Python ((-1.25) ** 0.5 is 6.8e-17+1.118j). From there
 * it prints, compares equal to numbers, takes .real and .imag, |abs, and
 * + - * / ** with numbers and complexes, with CPython's algorithms
 * (Objects/complexobject.c), so that the digits are Python's. Everything
 * else (ordering, //, %, |round, tojson...) refuses it by its type name
 * 'complex', as Python does. */
#include "complex.h"
#include <math.h>
#include "bigint.h"
#include <string.h>

typedef struct Complex { double re, im; } Complex;

static void complex_repr(Rt *rt, Obj *self, struct StrBuf *sb);
static bool complex_getattr(Rt *rt, Obj *self, const char *name, size_t n, Value *out);
static const ObjType COMPLEX_TYPE = {"complex", complex_getattr, NULL, complex_repr, NULL};

Value v_complex(Rt *rt, double re, double im) {
    Complex *c = rt_alloc(rt, sizeof(Complex));
    c->re = re;
    c->im = im;
    return v_object(rt, VT_OBJECT, &COMPLEX_TYPE, c);
}

bool v_is_complex(Value v) { return v.type == VT_OBJECT && v.u.obj->type == &COMPLEX_TYPE; }

static Complex parts(Value v) { return *(const Complex *)v.u.obj->data; }

bool complex_parts(Value v, double *re, double *im) {
    if (!v_is_complex(v)) return false;
    Complex c = parts(v);
    *re = c.re;
    *im = c.im;
    return true;
}

/* repr(float) without the ".0" Python adds to integral values (format 'r'
 * with no flags), signed when sign. */
static void part_repr(StrBuf *sb, double d, bool sign) {
    StrBuf t;
    sb_init(sb->rt, &t, 32);
    fmt_float_repr(&t, d);
    size_t n = t.len;
    if (n >= 2 && t.p[n - 2] == '.' && t.p[n - 1] == '0') n -= 2;
    if (sign && t.p[0] != '-') sb_putc(sb, '+');
    sb_put(sb, t.p, n);
}

static void complex_repr(Rt *rt, Obj *self, struct StrBuf *sb) {
    Complex c = *(const Complex *)self->data;
    if (c.re == 0 && !signbit(c.re)) {   /* +0 real part: the imaginary part alone */
        part_repr(sb, c.im, false);
        sb_putc(sb, 'j');
        return;
    }
    sb_putc(sb, '(');
    part_repr(sb, c.re, false);
    part_repr(sb, c.im, true);
    sb_puts(sb, "j)");
}

/* c.conjugate, bound to c */
static Value conjugate_call(Rt *rt, Obj *self, const Args *args) {
    if (args->nkw) rt_throw(rt, CF_ERR_TYPE, "complex.conjugate() takes no keyword arguments");
    if (args->npos) rt_throw(rt, CF_ERR_TYPE, "complex.conjugate() takes no arguments (%d given)", args->npos);
    Complex c = *(const Complex *)self->data;
    return v_complex(rt, c.re, -c.im);
}
static void conjugate_repr(Rt *rt, Obj *self, struct StrBuf *sb) {
    sb_puts(sb, "<built-in method conjugate of complex object at 0x0>");
}
static const ObjType CONJUGATE_TYPE = {"builtin_function_or_method", NULL, conjugate_call, conjugate_repr, NULL};

static bool complex_getattr(Rt *rt, Obj *self, const char *name, size_t n, Value *out) {
    Complex c = *(const Complex *)self->data;
    if (n == 4 && memcmp(name, "real", 4) == 0) *out = v_float(c.re);
    else if (n == 4 && memcmp(name, "imag", 4) == 0) *out = v_float(c.im);
    else if (n == 9 && memcmp(name, "conjugate", 9) == 0) *out = v_object(rt, VT_CALLABLE, &CONJUGATE_TYPE, self->data);
    else return false;
    return true;
}

/* ---- arithmetic (CPython's _Py_c_* functions) ---- */

static Complex c_prod(Complex a, Complex b) {
    return (Complex){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}

/* Smith's division; *zero when b is 0. */
static Complex c_quot(Complex a, Complex b, bool *zero) {
    double abs_re = fabs(b.re), abs_im = fabs(b.im);
    if (abs_re >= abs_im) {
        if (abs_re == 0.0) {
            *zero = true;
            return (Complex){0, 0};
        }
        double ratio = b.im / b.re, denom = b.re + b.im * ratio;
        return (Complex){(a.re + a.im * ratio) / denom, (a.im - a.re * ratio) / denom};
    }
    if (abs_im >= abs_re) {
        double ratio = b.re / b.im, denom = b.re * ratio + b.im;
        return (Complex){(a.re * ratio + a.im) / denom, (a.im * ratio - a.re) / denom};
    }
    return (Complex){NAN, NAN};   /* a NaN in b */
}

static Complex c_powu(Complex x, long n) {
    Complex r = {1, 0}, p = x;
    for (long mask = 1; mask > 0 && n >= mask; mask <<= 1) {
        if (n & mask) r = c_prod(r, p);
        p = c_prod(p, p);
    }
    return r;
}

/* a ** b; *zero: 0 to a negative or complex power. */
static Complex c_pow(Complex a, Complex b, bool *zero) {
    if (b.re == 0 && b.im == 0) return (Complex){1, 0};
    if (a.re == 0 && a.im == 0) {
        if (b.im != 0 || b.re < 0) *zero = true;
        return (Complex){0, 0};
    }
    double vabs = hypot(a.re, a.im), len = pow(vabs, b.re), at = atan2(a.im, a.re), phase = at * b.re;
    if (b.im != 0) {
        len /= exp(at * b.im);
        phase += b.im * log(vabs);
    }
    return (Complex){len * cos(phase), len * sin(phase)};
}

static Value complex_power(Rt *rt, Complex a, Complex b) {
    bool zero = false;
    Complex p;
    if (b.im == 0 && b.re == floor(b.re) && fabs(b.re) <= 100) {   /* a small integer: repeated products */
        long n = (long)b.re;
        if (n > 0) p = c_powu(a, n);
        else p = c_quot((Complex){1, 0}, c_powu(a, -n), &zero);
    } else {
        p = c_pow(a, b, &zero);
    }
    if (zero) rt_throw(rt, CF_ERR_ZERO_DIVISION, "0.0 to a negative or complex power");
    if (isinf(p.re) || isinf(p.im)) rt_throw(rt, CF_ERR_OVERFLOW, "complex exponentiation");
    return v_complex(rt, p.re, p.im);
}

Value complex_pow_real(Rt *rt, double x, double y) {
    return complex_power(rt, (Complex){x, 0}, (Complex){y, 0});
}

/* A number as Python's complex() takes it for arithmetic (false: not one). */
static bool as_complex(Rt *rt, Value v, Complex *c) {
    switch (v.type) {
    case VT_BOOL: *c = (Complex){v.u.b, 0}; return true;
    case VT_INT: *c = (Complex){(double)v.u.i, 0}; return true;
    case VT_BIGINT: *c = (Complex){bigint_to_float(rt, v), 0}; return true;
    case VT_FLOAT: *c = (Complex){v.u.f, 0}; return true;
    default:
        if (!v_is_complex(v)) return false;
        *c = parts(v);
        return true;
    }
}

bool complex_binop(Rt *rt, uint8_t op, Value a, Value b, Value *out) {
    Complex x, y;
    if (!as_complex(rt, a, &x) || !as_complex(rt, b, &y)) return false;
    bool zero = false;
    Complex r;
    switch (op) {
    case OP_ADD: r = (Complex){x.re + y.re, x.im + y.im}; break;
    case OP_SUB: r = (Complex){x.re - y.re, x.im - y.im}; break;
    case OP_MUL: r = c_prod(x, y); break;
    case OP_DIV:
        r = c_quot(x, y, &zero);
        if (zero) rt_throw(rt, CF_ERR_ZERO_DIVISION, "complex division by zero");
        break;
    case OP_POW: *out = complex_power(rt, x, y); return true;
    default: return false;   /* //, %: Python's TypeError, by the caller */
    }
    *out = v_complex(rt, r.re, r.im);
    return true;
}

Value complex_neg(Rt *rt, Value v) {
    Complex c = parts(v);
    return v_complex(rt, -c.re, -c.im);
}

Value complex_abs(Rt *rt, Value v) {
    Complex c = parts(v);
    double r = hypot(c.re, c.im);
    if (isinf(r) && !isinf(c.re) && !isinf(c.im)) rt_throw(rt, CF_ERR_OVERFLOW, "absolute value too large");
    return v_float(r);
}

bool complex_equals(Value a, Value b) {
    Complex x, y;
    /* (an int beyond a double's range never equals one) */
    if (a.type == VT_BIGINT || b.type == VT_BIGINT || !as_complex(NULL, a, &x) || !as_complex(NULL, b, &y)) return false;
    return x.re == y.re && x.im == y.im;
}

bool complex_truthy(Value v) {
    Complex c = parts(v);
    return c.re != 0 || c.im != 0;
}
