/* dist.h — measuring somewhere else (compiler/dist/, docs/TUNING.md).
 *
 *   runner.c   `texc tune --runner SPEC`: a Measurer that builds each candidate here (for
 *              --mtriple/--mcpu), sends the shared object to a texc-measure-server started
 *              once over ssh (or as a local command) and reads back its times
 *   wire.c     the frames both sides speak (wire.h)
 *   server/    texc-measure-server, the program on the board (runtime and libc only)
 */
#ifndef DIST_H
#define DIST_H

#include "autosched/autosched.h"

/* Start the runner of SPEC ("ssh://[USER@]HOST[:PORT][/PATH/TO/texc-measure-server]" or
 * "exec:SHELL COMMAND") and wait for the server's hello; false (reported) when it does not
 * answer. The Measurer then measures through it and sets m->lost when the connection dies:
 * the candidate in flight is an error record with the reason, the rest TE_UNMEASURED. */
bool runner_start(const char *spec, const MeasureOpts *o, Measurer *out);
/* Tell the server to quit, wait for it (killed after a few seconds) and free M's runner. */
void runner_stop(Measurer *m);
/* The runner's name and the reason it was lost ("" while it is alive). */
const char *runner_lost_reason(const Measurer *m);

#endif
