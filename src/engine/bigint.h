/* bigint.h — Python's arbitrary-precision integer arithmetic.
 *
 * Values keep their representation from value.h: VT_INT inside int64,
 * VT_BIGINT (decimal digits) outside. These functions convert to binary
 * limbs in the arena, compute, and hand back normalised Values, so every
 * result prints exactly as Python prints it. */
#ifndef CF_BIGINT_H
#define CF_BIGINT_H

#include "value.h"

/* a <op> b for ints, bools and bigints, as Python computes it. op is an
 * OpCode from lexer.h: OP_ADD, OP_SUB, OP_MUL, OP_FLOORDIV, OP_MOD, OP_POW,
 * OP_DIV. OP_DIV, and OP_POW with a negative exponent, give a float
 * (true division correctly rounded, like CPython's long_true_divide).
 * Returns false, leaving *out alone, when an operand is not an int/bool/
 * bigint or op is not arithmetic. Throws ZeroDivisionError / OverflowError
 * with Python's messages, and LimitError before building a result of more
 * than about lim.max_string / 4 decimal digits (checked before the work,
 * so 2 ** 10 ** 9 fails at once). */
bool bigint_arith(Rt *rt, uint8_t op, Value a, Value b, Value *out);

/* -a for an int, bool or bigint (-INT64_MIN becomes a bigint). */
Value bigint_neg(Rt *rt, Value a);

/* Python float(a) for an int, bool or bigint: correctly rounded (half to
 * even); ±inf when the value is too large — the caller raises then. */
double bigint_to_double(Value a);

/* The same, raising OverflowError "int too large to convert to float" as
 * Python does where it converts an int operand to float. */
double bigint_to_float(Rt *rt, Value a);

/* int.bit_length() and int.bit_count() of an int, bool or bigint (of
 * its absolute value, as Python). */
size_t bigint_bit_length(Rt *rt, Value a);
uint64_t bigint_bit_count(Rt *rt, Value a);

#endif
