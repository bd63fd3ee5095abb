/* complex.h — Python's complex numbers (complex.c): what `**` gives for a
 * negative number to a fractional power, and its arithmetic. */
#ifndef CF_COMPLEX_H
#define CF_COMPLEX_H

#include "value.h"
#include "lexer.h"   /* OP_* */

Value v_complex(Rt *rt, double re, double im);
bool v_is_complex(Value v);
bool complex_parts(Value v, double *re, double *im);   /* false: not a complex */
/* x ** y for floats where Python's float.__pow__ hands over to complex (x < 0, y not integral) */
Value complex_pow_real(Rt *rt, double x, double y);
/* a op b (OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_POW) when one is a complex and
 * the other a number or complex: *out and true; false otherwise. Throws
 * Python's ZeroDivisionError / OverflowError. */
bool complex_binop(Rt *rt, uint8_t op, Value a, Value b, Value *out);
Value complex_neg(Rt *rt, Value v);
Value complex_abs(Rt *rt, Value v);                    /* a float (hypot) */
bool complex_equals(Value a, Value b);                /* a complex and a number or complex */
bool complex_truthy(Value v);

#endif
