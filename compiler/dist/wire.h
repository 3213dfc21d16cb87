/* wire.h — the frames of texc's measure protocol (docs/TUNING.md, "The measure
 * protocol"): what `texc tune --runner` and texc-measure-server (compiler/dist/server/)
 * say to each other over a pipe, an SSH connection or an MPI message.
 *
 *   frame   = "TXM1" | header length (u32, big-endian) | payload length (u64, big-endian)
 *             | header | payload
 *   header  = lines "KEY VALUE\n" (VALUE: the rest of the line; numbers in decimal)
 *   payload = raw bytes: a shared object, tensors
 *
 * The header is flat text rather than JSON so that the server, which is cross-built for
 * boards, needs nothing but libc and texc's runtime (Debian has no cross build of cJSON).
 * This file depends on libc alone: the server links it too.
 */
#ifndef DIST_WIRE_H
#define DIST_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WIRE_MAGIC "TXM1"
#define WIRE_MAX_HEADER (1u << 20)
#define WIRE_MAX_PAYLOAD ((uint64_t)1 << 32)
#define WIRE_VERSION 1
/* The artifact kinds a request's `artifact` line may name (none: "so"); a server's hello
 * lists those it runs in its `artifacts` line (none: an older server, "so" only). */
#define WIRE_ARTIFACT_SO "so"
#define WIRE_ARTIFACT_OPENCL "opencl"

struct RtGpuFunc; /* runtime/rt_gpu.h */

/* A growing header text. */
typedef struct WireText {
  char *s;
  size_t len, cap;
} WireText;

/* Append the line "KEY VALUE\n", VALUE printf-formatted; newlines in it become spaces. */
void wire_put(WireText *t, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void wire_text_free(WireText *t);

/* The value of the first line of HDR whose key is KEY, copied into BUF (size N); false when
 * there is none. wire_num: its value as a number, DEF when missing. */
bool wire_get(const char *hdr, const char *key, char *buf, size_t n);
double wire_num(const char *hdr, const char *key, double def);
/* The INDEX-th line (0-based) of HDR with key KEY: its value (up to the newline) in BUF. */
bool wire_get_nth(const char *hdr, const char *key, int index, char *buf, size_t n);

/* An OpenCL artifact's launch plan (runtime/rt_gpu.h: kernels, launch extents, temps) as
 * header lines: `gpu_func NAME NPARAMS NSIZES NTEMPS NKERNELS`, one `gpu_temp N CODE...` per
 * temp, and per kernel `gpu_kernel NAME NARGS ARGS...` followed by six `gpu_extent N
 * CODE...` (grid x y z, block x y z). false when a line does not fit. */
bool wire_put_gpu_plan(WireText *t, const struct RtGpuFunc *f);
/* The plan of HDR's gpu_* lines into *F (names and arrays malloc'd: wire_free_gpu_plan);
 * false with WHY when HDR has none or a malformed one. */
bool wire_get_gpu_plan(const char *hdr, struct RtGpuFunc *f, char *why, size_t whysz);
void wire_free_gpu_plan(struct RtGpuFunc *f);

/* Write one frame to FD (all of it, retrying short writes); false when the other end is
 * gone (SIGPIPE is the caller's to ignore). PAYLOAD may be NULL when N is 0. */
bool wire_write(int fd, const char *hdr, const void *payload, uint64_t n);
/* Read one frame from FD within TIMEOUT_S seconds (< 0: no limit). 1: read, *HDR (NUL-ended)
 * and *PAYLOAD malloc'd; 0: end of file or a broken frame (WHY says which); -1: timeout. */
int wire_read(int fd, double timeout_s, char **hdr, unsigned char **payload, uint64_t *n,
              char *why, size_t whysz);

#endif
