/* server.c — texc-measure-server: times compiled candidates for `texc tune --runner`
 * (docs/TUNING.md). It reads request frames (wire.h) on stdin and answers each on stdout;
 * it links texc's runtime and libc only, so it can be cross-built for a board that has no
 * compiler. A candidate is a shared object (CPU code) or OpenCL C with its launch plan,
 * which the runtime's OpenCL (the device's own compiler) builds here. Candidates are
 * loaded and timed in a forked worker that serves up to WORKER_CANDIDATES of them,
 * keeping its OpenCL context (a board's driver starts once, not per candidate; measure.c's
 * local workers do the same): a candidate that fails to build is an error answer, one that
 * crashes or hangs costs an error answer and that worker, replaced at the next request.
 *
 *   texc-measure-server            serve on stdin/stdout (started by ssh or a local command)
 *   texc-measure-server --check    print what this machine has: CPU, ISA, threads, OpenCL
 */
#include "../wire.h"
#include "rt_gpu.h"
#include "texrt.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_ARGS 64
#define MAX_COSTS 16
/* Candidates one worker serves before it is replaced: a candidate that corrupts the
 * worker's memory without crashing can spoil only those after it in the same worker. */
#define WORKER_CANDIDATES 32

/* rt_opencl.c: absent from a server built without OpenCL (make aarch64-server). */
#pragma weak rt_opencl_module
#pragma weak rt_opencl_query

static char device_name[256]; /* in the child: the OpenCL device measured on ("": the CPU) */

/* ORDER TuneError (compiler/autosched/autosched.h): the codes the client records. */
enum { E_OK = 0, E_COMPILE = 2, E_RUNTIME = 3, E_BUILD_TIMEOUT = 5, E_RUN_TIMEOUT = 6 };

/* ---------------------------------------------------------------- this machine */

/* What this machine is; OPENCL: also its OpenCL devices (which starts their drivers). */
static void machine_header(WireText *t, bool opencl) {
  wire_put(t, "server", "texc-measure-server");
  wire_put(t, "version", "%d", WIRE_VERSION);
  wire_put(t, "cpu", "%s", rt_cpu_name());
  wire_put(t, "isa", "%s", rt_cpu_isa());
  wire_put(t, "threads", "%d", rt_num_threads());
  wire_put(t, "artifacts", WIRE_ARTIFACT_SO "%s", rt_opencl_module ? " " WIRE_ARTIFACT_OPENCL : "");
  for (int i = 0; opencl && i < 8 && rt_device_exists((RtDevice){RT_OPENCL, i}); i++)
    wire_put(t, "opencl", "%d %s", i, rt_device_name((RtDevice){RT_OPENCL, i}));
}

static int check_main(void) {
  WireText t = {0};
  machine_header(&t, true);
  fputs(t.s, stdout);
  if (!strstr(t.s, "\nopencl ")) puts("opencl none");
  wire_text_free(&t);
  return 0;
}

/* ---------------------------------------------------------------- in the worker */

/* Random inputs (a splitmix64 stream): floats in [-1, 1), halves in [0.5, 1), integers in
 * [0, 4) so that index tensors stay in bounds of any axis of 4 or more. */
static void fill(void *data, char kind, int bytes, int64_t n, uint64_t seed) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t i = 0; i < n; i++) {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    double u = (double)(z >> 11) / 9007199254740992.0;
    unsigned char *p = (unsigned char *)data + i * bytes;
    if (kind == 'f' && bytes == 4) *(float *)p = (float)(2 * u - 1);
    else if (kind == 'f' && bytes == 8) *(double *)p = 2 * u - 1;
    else if (kind == 'h') *(uint16_t *)p = (uint16_t)(0x3800 + (z & 0x3ff));
    else {
      memset(p, 0, (size_t)bytes);
      p[0] = (unsigned char)(z & 3); /* little-endian: a small non-negative integer */
    }
  }
}

typedef struct Arg {
  char kind; /* f h i: an input of that kind; o: an output */
  int bytes, ndim;
  int64_t shape[8], count;
} Arg;

static int parse_args(const char *hdr, Arg *a) {
  char v[512];
  int n = 0;
  while (n < MAX_ARGS && wire_get_nth(hdr, "arg", n, v, sizeof v)) {
    char *p = v;
    a[n].kind = *p++;
    a[n].bytes = (int)strtol(p, &p, 10);
    a[n].ndim = (int)strtol(p, &p, 10);
    a[n].count = 1;
    for (int d = 0; d < a[n].ndim && d < 8; d++) a[n].count *= a[n].shape[d] = strtoll(p, &p, 10);
    n++;
  }
  return n;
}

/* Answer the server: 'A', the answer's length (8 bytes), then "ERROR\nMESSAGE\nCOSTS\nDEVICE\0"
 * and the outputs' bytes (op run). false when the server is gone. */
static bool answer(int fd, int err, const char *msg, const double *c, int nc, RtTensor **out, int nout) {
  char buf[2048];
  snprintf(buf, sizeof buf - 256, "%d\n%s", err, msg);
  for (char *p = strchr(buf, '\n') + 1; *p; p++) /* one line (an OpenCL build log has many) */
    if (*p == '\n') *p = ' ';
  size_t len = strlen(buf);
  buf[len++] = '\n', buf[len] = 0;
  for (int i = 0; i < nc && len < sizeof buf - 32; i++)
    len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%.9g", i ? " " : "", c[i]);
  if (len < sizeof buf - 2)
    len += (size_t)snprintf(buf + len, sizeof buf - len, "\n%.*s", (int)(sizeof buf - len - 2), device_name);
  uint64_t total = len + 1;
  for (int i = 0; i < nout; i++) total += (uint64_t)out[i]->nbytes;
  char head[9] = {'A'};
  memcpy(head + 1, &total, 8);
  if (write(fd, head, 9) != 9 || write(fd, buf, len + 1) != (ssize_t)(len + 1)) return false;
  for (int i = 0; i < nout; i++) {
    void *h = malloc((size_t)out[i]->nbytes + 1);
    rt_tensor_to_host(h, out[i]);
    if (i == 0 && getenv("TEXC_SERVER_INJECT_WRONG")) /* test hook: a wrong board */
      ((unsigned char *)h)[out[i]->dtype_bytes - 1] ^= 0x40;
    for (int64_t off = 0; off < out[i]->nbytes;) {
      ssize_t w = write(fd, (char *)h + off, (size_t)(out[i]->nbytes - off));
      if (w <= 0) return free(h), false;
      off += w;
    }
    free(h);
  }
  return true;
}

/* The OpenCL C ART (NART bytes) built on the request's `opencl_device` (none: the first)
 * with its launch plan, as the local measurer builds it (target/opencl.c); *DEV: that
 * device. NULL with MSG. */
static RtFunc *load_opencl(const char *hdr, const char *func, const unsigned char *art,
                           uint64_t nart, RtDevice *dev, RtModule **mod, char *msg, size_t sz) {
  char spec[256], why[256];
  int id = 0;
  RtGpuFunc plan;
  if (!rt_opencl_module) return snprintf(msg, sz, "this texc-measure-server was built without OpenCL"), NULL;
  const char *device = wire_get(hdr, "opencl_device", spec, sizeof spec) && spec[0] ? spec : NULL;
  if (rt_opencl_query(device, &id, NULL)) return snprintf(msg, sz, "%s", rt_last_error()), NULL;
  if (!wire_get_gpu_plan(hdr, &plan, why, sizeof why)) return snprintf(msg, sz, "%s", why), NULL;
  char *src = malloc((size_t)nart + 1);
  memcpy(src, art, (size_t)nart);
  src[nart] = 0;
  RtModule *m = *mod = rt_opencl_module(src, device, &plan, 1); /* copies the plan */
  RtFunc *f = m ? rt_module_func(m, func) : NULL;
  if (!f) snprintf(msg, sz, "%s", rt_last_error());
  wire_free_gpu_plan(&plan);
  free(src);
  *dev = (RtDevice){RT_OPENCL, id};
  snprintf(device_name, sizeof device_name, "%s", rt_device_name(*dev));
  return f;
}

/* The candidate's function: the shared object ART (artifact so; written to a file for the
 * loader, removed once loaded), or the OpenCL C ART (artifact opencl); *DEV: where its
 * tensors live; *MOD: its module, to free. NULL with MSG. */
static RtFunc *load_candidate(const char *hdr, const unsigned char *art, uint64_t nart, RtDevice *dev,
                              RtModule **mod, char *msg, size_t sz) {
  char func[256], kind[32], path[256];
  wire_get(hdr, "func", func, sizeof func);
  *dev = (RtDevice){RT_CPU, 0};
  *mod = NULL;
  if (!wire_get(hdr, "artifact", kind, sizeof kind) || !strcmp(kind, WIRE_ARTIFACT_SO)) {
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(path, sizeof path, "%s/texc-ms-XXXXXX.so", tmp);
    int fd = mkstemps(path, 3);
    if (fd < 0 || write(fd, art, (size_t)nart) != (ssize_t)nart) {
      snprintf(msg, sz, "the server cannot write %s: %s", path, strerror(errno));
      if (fd >= 0) close(fd), unlink(path);
      return NULL;
    }
    close(fd);
    RtModule *m = *mod = rt_module_load(path);
    unlink(path);
    RtFunc *f = m ? rt_module_func(m, func) : NULL;
    if (!f) snprintf(msg, sz, "%s", rt_last_error());
    return f;
  }
  if (!strcmp(kind, WIRE_ARTIFACT_OPENCL)) return load_opencl(hdr, func, art, nart, dev, mod, msg, sz);
  snprintf(msg, sz, "this texc-measure-server does not run %s artifacts (a newer texc sent it: update the server)", kind);
  return NULL;
}

/* Tensors for the NA arguments A on DEV (T zeroed by the caller: the ones made are
 * freed by it), as the local measurer makes them: inputs the request's bytes INPUTS (op
 * run) or random, outputs zeroed; outputs' in OUTS. Their count, or -1 with *MSG. */
static int make_tensors(const Arg *a, int na, RtDevice dev, bool run, const unsigned char *inputs,
                        uint64_t ninputs, RtTensor **t, RtTensor **outs, const char **msg) {
  int nout = 0;
  uint64_t off = 0;
  for (int i = 0; i < na; i++) {
    if (!(t[i] = rt_tensor_alloc(dev, a[i].bytes, a[i].ndim, a[i].shape))) return *msg = rt_last_error(), -1;
    uint64_t nb = (uint64_t)t[i]->nbytes;
    unsigned char *h = calloc(1, (size_t)nb + 1);
    if (a[i].kind == 'o') outs[nout++] = t[i];
    else if (!run) fill(h, a[i].kind, a[i].bytes, a[i].count, (uint64_t)i + 1);
    else if (off + nb <= ninputs) memcpy(h, inputs + off, (size_t)nb), off += nb;
    else return free(h), *msg = "the request holds too few input bytes", -1;
    rt_tensor_from_host(t[i], h);
    free(h);
  }
  return nout;
}

/* One request in the worker: load the candidate (the shared object or the OpenCL C in the
 * payload PL, whose inputs follow it: op run), make the tensors, tell the server 'B'
 * (built), then time (op measure) or run once and send the outputs (op run); answer, and
 * free what the candidate made. A GPU candidate's first launch is part of its build, as in
 * the local measurer (measure.c: PoCL compiles the work-group function for its local size
 * there). false when the server is gone. */
static bool serve_candidate(const char *hdr, const unsigned char *pl, uint64_t n, int fd) {
  char op[16], msg[2048];
  wire_get(hdr, "op", op, sizeof op);
  bool run = strcmp(op, "run") == 0;
  uint64_t nart = (uint64_t)wire_num(hdr, "so_bytes", (double)n);
  if (nart > n) return answer(fd, E_RUNTIME, "so_bytes beyond the payload", NULL, 0, NULL, 0);
  Arg a[MAX_ARGS];
  int na = parse_args(hdr, a);
  RtDevice dev;
  RtModule *m;
  RtFunc *f = load_candidate(hdr, pl, nart, &dev, &m, msg, sizeof msg);
  if (!f) {
    if (m) rt_module_free(m);
    return answer(fd, E_COMPILE, msg, NULL, 0, NULL, 0);
  }
  RtTensor *t[MAX_ARGS] = {0}, *outs[MAX_ARGS];
  const char *why = NULL;
  int nout = make_tensors(a, na, dev, run, pl + nart, n - nart, t, outs, &why);
  double costs[MAX_COSTS];
  int nc = 0, err = E_OK;
  if (nout < 0 || (dev.kind != RT_CPU && !run && rt_func_call(f, t, na, NULL, 0))) {
    err = E_RUNTIME, why = why ? why : rt_last_error();
  } else {
    if (write(fd, "B", 1) != 1) return false;
    int inject = (int)wire_num(hdr, "inject", 0);
    if (inject == 1) raise(SIGSEGV);
    if (inject == 2)
      for (;;) pause();
    if (run) {
      if (rt_func_call(f, t, na, NULL, 0)) err = E_RUNTIME, why = rt_last_error();
    } else { /* as the local measurer times: rt_time_candidate_cold */
      nc = rt_time_candidate_cold(f, t, na, (uint64_t)wire_num(hdr, "cold", 0), (int)wire_num(hdr, "repeat", 3),
                                  wire_num(hdr, "min_repeat_ms", 0), wire_num(hdr, "best_ms", 0), costs, MAX_COSTS);
      if (nc < 0) nc = 0, err = E_RUNTIME, why = rt_last_error();
    }
  }
  bool ok = answer(fd, err, err ? why : "", costs, nc, outs, run && !err ? nout : 0);
  for (int i = 0; i < na; i++)
    if (t[i]) rt_tensor_free(t[i]);
  rt_module_free(m);
  return ok;
}

/* The worker: requests from IN (frames as the client sent them), answers to OUT, until
 * WORKER_CANDIDATES are served or the server closes IN. */
static _Noreturn void worker_main(int in, int out) {
  for (int k = 0; k < WORKER_CANDIDATES; k++) {
    char *hdr, why[128];
    unsigned char *pl;
    uint64_t n;
    if (wire_read(in, -1, &hdr, &pl, &n, why, sizeof why) != 1) break;
    bool ok = serve_candidate(hdr, pl, n, out);
    free(hdr);
    free(pl);
    if (!ok) break;
  }
  _exit(0);
}

/* ---------------------------------------------------------------- the server */

/* The worker: its pid (0: none), its request and answer pipes, the candidates it served. */
typedef struct {
  pid_t pid;
  int req, ans, served;
} Worker;
static Worker worker;

/* End the worker (killed first when KILL), and reap it; its wait status. */
static int worker_end(bool kill_it) {
  int st = 0;
  if (!worker.pid) return 0;
  if (kill_it) kill(worker.pid, SIGKILL);
  close(worker.req);
  close(worker.ans);
  waitpid(worker.pid, &st, 0);
  worker.pid = 0;
  return st;
}

/* A worker ready for a request: the current one, or a new one (after WORKER_CANDIDATES,
 * a crash or a timeout). false when none can be made. */
static bool worker_ready(int out) {
  if (worker.pid && worker.served < WORKER_CANDIDATES) return true;
  worker_end(false); /* served its share: it exits on its own */
  int req[2], ans[2];
  if (pipe(req)) return false;
  if (pipe(ans)) return close(req[0]), close(req[1]), false;
  pid_t pid = fork();
  if (pid < 0) return close(req[0]), close(req[1]), close(ans[0]), close(ans[1]), false;
  if (pid == 0) {
    close(req[1]);
    close(ans[0]);
    close(out);
    worker_main(req[0], ans[1]);
  }
  close(req[0]);
  close(ans[1]);
  worker = (Worker){.pid = pid, .req = req[1], .ans = ans[0]};
  return true;
}

/* Read N bytes of FD into P before DEADLINE (rt_now_ms); 1: read, 0: end of file, -1: time
 * out. */
static int read_until(int fd, void *p, size_t n, double deadline) {
  for (size_t got = 0; got < n;) {
    double left = deadline - rt_now_ms();
    struct pollfd q = {fd, POLLIN, 0};
    int r = left > 0 ? poll(&q, 1, (int)left + 1) : 0;
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) return -1;
    ssize_t k = read(fd, (char *)p + got, n - got);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return 0;
    got += (size_t)k;
  }
  return 1;
}

/* The worker's answer to the request just sent: 'B' once built (within BUILD_S seconds),
 * then 'A' and the answer (within RUN_S more): 1 with *BUF, *LEN; 0: the worker ended
 * without answering (crashed); -1: build timeout, -2: run timeout. */
static int collect(double build_s, double run_s, char **buf, uint64_t *len) {
  double deadline = rt_now_ms() + build_s * 1e3;
  bool built = false;
  char c;
  int r;
  *buf = NULL;
  for (;;) {
    if ((r = read_until(worker.ans, &c, 1, deadline)) != 1) return r ? (built ? -2 : -1) : 0;
    if (c == 'B' && !built) {
      built = true;
      deadline = rt_now_ms() + run_s * 1e3;
      continue;
    }
    if (c != 'A' || (r = read_until(worker.ans, len, 8, deadline)) != 1) return r < 0 ? (built ? -2 : -1) : 0;
    *buf = malloc((size_t)*len + 1);
    if ((r = read_until(worker.ans, *buf, (size_t)*len, deadline)) != 1) return r < 0 ? (built ? -2 : -1) : 0;
    (*buf)[*len] = 0;
    return 1;
  }
}

/* Handle one request: forward it to the worker, answer from its answer, or from how it
 * ended (a crash, a timeout: that worker is gone, the next request makes another). */
static void serve_one(int out, const char *hdr, const unsigned char *pl, uint64_t n) {
  WireText ans = {0};
  char id[32];
  wire_get(hdr, "id", id, sizeof id);
  wire_put(&ans, "id", "%s", id);
  char *buf = NULL;
  uint64_t len = 0;
  int r = 0, st = 0;
  if (!worker_ready(out)) {
    wire_put(&ans, "error", "%d", E_RUNTIME);
    wire_put(&ans, "msg", "the server cannot start a worker: %s", strerror(errno));
    wire_write(out, ans.s, NULL, 0);
    wire_text_free(&ans);
    return;
  }
  worker.served++;
  if (wire_write(worker.req, hdr, pl, n))
    r = collect(wire_num(hdr, "build_timeout_s", 20), wire_num(hdr, "timeout_s", 10), &buf, &len);
  if (r != 1) st = worker_end(r < 0);
  size_t text = buf ? strnlen(buf, (size_t)len) : 0;
  const unsigned char *outputs = NULL;
  uint64_t nout = 0;
  if (r == -1 || r == -2) {
    wire_put(&ans, "error", "%d", r == -1 ? E_BUILD_TIMEOUT : E_RUN_TIMEOUT);
    wire_put(&ans, "msg", r == -1 ? "loading the candidate timed out"
                                  : "the run timed out (stopped after %.0f ms)",
             wire_num(hdr, "timeout_s", 10) * 1e3);
  } else if (r == 0 && WIFSIGNALED(st)) {
    wire_put(&ans, "error", "%d", E_RUNTIME);
    wire_put(&ans, "msg", "the candidate crashed (signal %d: %s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
  } else if (r == 0 || text == len) {
    wire_put(&ans, "error", "%d", E_RUNTIME);
    wire_put(&ans, "msg", "the candidate exited with status %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  } else { /* "ERROR\nMESSAGE\nCOSTS\nDEVICE" */
    char *msg = strchr(buf, '\n'), *costs = msg ? strchr(msg + 1, '\n') : NULL;
    char *dev = costs ? strchr(costs + 1, '\n') : NULL;
    if (msg) *msg++ = 0;
    if (costs) *costs++ = 0;
    if (dev) *dev++ = 0;
    wire_put(&ans, "error", "%s", buf);
    wire_put(&ans, "msg", "%s", msg ? msg : "");
    wire_put(&ans, "costs", "%s", costs ? costs : "");
    if (dev && *dev) wire_put(&ans, "device", "%s", dev);
    outputs = (const unsigned char *)buf + text + 1, nout = len - text - 1;
  }
  wire_write(out, ans.s, outputs, nout);
  wire_text_free(&ans);
  free(buf);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--check") == 0) return check_main();
  if (argc > 1) {
    fprintf(stderr, "usage: texc-measure-server [--check]\n"
                    "  serves `texc tune --runner` on stdin/stdout (docs/TUNING.md)\n");
    return strcmp(argv[1], "--help") ? 1 : 0;
  }
  signal(SIGPIPE, SIG_IGN);
  /* the frames own stdout: whatever a candidate prints goes to stderr */
  int out = dup(1);
  dup2(2, 1);
  WireText hello = {0};
  machine_header(&hello, false);
  if (!wire_write(out, hello.s, NULL, 0)) return 1;
  wire_text_free(&hello);
  for (;;) {
    char *hdr, why[128];
    unsigned char *pl;
    uint64_t n;
    if (wire_read(0, -1, &hdr, &pl, &n, why, sizeof why) != 1) return worker_end(false), 0; /* the client left */
    char op[16];
    wire_get(hdr, "op", op, sizeof op);
    if (strcmp(op, "quit") == 0) return worker_end(false), 0;
    serve_one(out, hdr, pl, n);
    free(hdr);
    free(pl);
  }
}
