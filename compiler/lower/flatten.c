/* flatten.c — lowering pass `flatten`: FN->flat, FN->body with every load and store by
 * one row-major offset (ir/flatten.c). The back ends emit FN->flat; the readable FN->body
 * stays what `--emit ir` prints and what the interpreter runs, so that an index outside
 * its dimension is caught there even when its offset is in range. */
#include "lower.h"

bool pass_flatten(LowerCtx *L) {
  L->fn->flat = ir_flatten(L->fn->body);
  return true;
}
