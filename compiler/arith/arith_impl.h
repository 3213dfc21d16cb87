/* arith_impl.h — private to arith.c and simplify.c. */
#ifndef ARITH_IMPL_H
#define ARITH_IMPL_H
#include "texc.h"

/* Set when the simplifier's linear arithmetic (coefficients, constants) wrapped: its
 * result is then right modulo 2^64 only, not as an integer (an interval end). */
extern bool arith_wrapped;

/* Does the machine compute E without wrapping, for every value of RANGES' variables (and
 * of the sizes)? Then E's value is its linear form's value as an integer. */
bool arith_no_wrap(Expr *e, const RangeMap *ranges);

#endif
