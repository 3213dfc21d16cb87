/* dist.h — measuring somewhere else (compiler/dist/, docs/TUNING.md).
 *
 *   runner.c   `texc tune --runner SPEC`: a Measurer that builds each candidate here (a
 *              shared object for --mtriple/--mcpu, or OpenCL C and its launch plan for
 *              --target opencl), sends it to a free one of the texc-measure-servers
 *              started once over ssh (or as local commands) and reads back its times
 *   wire.c     the frames both sides speak (wire.h)
 *   server/    texc-measure-server, the program on the board (runtime and libc only)
 */
#ifndef DIST_H
#define DIST_H

#include "autosched/autosched.h"

/* Start the runners of SPEC, one a line (--runner given again), each
 * "ssh://[USER@]HOST[:PORT][/PATH/TO/texc-measure-server]" or "exec:SHELL COMMAND", and
 * wait for each server's hello; one that does not answer is reported and left out; false
 * (reported) when a line is no runner or none answers. The Measurer then measures through
 * them, each candidate on whichever is free. A runner whose connection dies costs its
 * candidate in flight (an error record with the reason); when the last one is lost it
 * sets m->lost and the candidates not sent are TE_UNMEASURED. */
bool runner_start(const char *spec, const MeasureOpts *o, Measurer *out);
/* Tell the servers to quit, wait for them (killed after a few seconds), remove the
 * artifacts' folder and free M's runners. */
void runner_stop(Measurer *m);
/* The lost runners' names and reasons ("" while all are alive). */
const char *runner_lost_reason(const Measurer *m);

#endif
