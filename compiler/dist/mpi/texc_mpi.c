/* texc_mpi.c — texc-mpi: `mpirun -n K texc-mpi tune FILE ...` (docs/TUNING.md, "A cluster").
 *
 * Every rank parses the same command line. Rank 0 is texc itself (drv_main): it searches,
 * trains the model, checks new bests and writes the records log, with a Measurer that
 * hands each candidate (its workload key and step text) to an idle rank. Ranks >= 1 find
 * the kernel of that workload in their own parse of FILE (a kernel file or a network),
 * build and time the candidate with the local measurer (a forked child: a crash is an
 * error record) on the cores they are pinned to, and send back the record's fields. So
 * builds and runs are spread over the ranks; rank 0 does the search alone.
 *
 * A rank that does not answer within the candidate's limits (or whose message fails) is
 * lost (on rank 0's host, also as soon as its process is gone): its candidate in flight
 * becomes an error record naming it, the search goes on with the others, and with none
 * left the tune stops (exit 1; every record written is kept). mpirun (Open MPI 4) ends
 * the whole job when one of its processes dies unless it runs with --enable-recovery;
 * the records log stays whole either way (one write(2) per record).
 *
 * A GPU tune (--target cuda or opencl) gives each measuring rank one device of its node:
 * the R-th measuring rank there (1-based) takes device (R - 1) mod N of the node's N
 * (gpu_for_rank).
 *
 * Kept out of texc itself so that the plain build needs no MPI. Built by `make mpi`.
 */
#include <mpi.h>

#include "autosched/autosched.h"
#include "cli/driver.h"
#include "cli/options.h"
#include "dist/wire.h"
#include "front/network.h"
#include "onnx/onnx.h"
#include "rt_gpu.h"
#include "rt_internal.h"

#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { TAG_REQ = 1, TAG_RES = 2, TAG_QUIT = 3, TAG_HELLO = 4 };
#define ANSWER_SLACK_S 10 /* past a candidate's build and run limits: a lost rank */
#define SEND_TIMEOUT_S 5
#define MAX_MSG (1 << 20)

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ================================================================ rank 0: the measurer */

typedef struct Rank {
  bool alive;
  bool here;          /* on rank 0's host: its pid tells whether it lives */
  int pid;
  int busy;           /* the candidate in flight, -1: idle */
  double deadline;
  MPI_Request req;
  char *buf;          /* the answer */
} Rank;

typedef struct MpiCtx {
  int size;
  Rank *ranks;
  int count, crash_at, hang_at; /* TEXC_TUNE_INJECT, counted here: the same for any K */
} MpiCtx;

static int alive_ranks(const MpiCtx *c) {
  int n = 0;
  for (int w = 1; w < c->size; w++) n += c->ranks[w].alive;
  return n;
}

static void set_error(Record *r, int code, const char *msg) {
  r->error = code;
  free(r->error_msg);
  r->error_msg = strdup(msg);
  r->ncosts = 0;
}

/* Is process PID there and not a zombie (/proc/PID/stat's state)? */
static bool pid_alive(int pid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f) return false;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  const char *p = strrchr(buf, ')'); /* "PID (COMM) STATE ..." */
  return p && p[1] && p[2] != 'Z' && p[2] != 'X';
}

/* Has rank W died (when it runs on this host: its process is gone)? */
static bool rank_died(const Rank *r) { return r->here && !pid_alive(r->pid); }

/* Send candidate I (TEXT of TASK) to rank W. */
static bool send_req(MpiCtx *c, Measurer *m, int w, const Task *task, const char *text, int i) {
  Rank *r = &c->ranks[w];
  int k = c->count++;
  WireText h = {0};
  wire_put(&h, "workload", "%s", task->workload);
  wire_put(&h, "kernel", "%s", task->kernel->name);
  wire_put(&h, "repeat", "%d", m->o.repeat);
  wire_put(&h, "min_repeat_ms", "%g", m->o.min_repeat_ms);
  wire_put(&h, "run_timeout_s", "%g", m->o.run_timeout_s);
  wire_put(&h, "build_timeout_s", "%g", m->o.build_timeout_s);
  wire_put(&h, "full", "%d", m->o.full);
  wire_put(&h, "cold", "%llu", (unsigned long long)task->cold_args);
  wire_put(&h, "inject", "%s", k == c->crash_at ? "crash:0" : k == c->hang_at ? "hang:0" : "");
  size_t n = h.len + strlen(text) + 1;
  char *msg = malloc(n + 1);
  memcpy(msg, h.s, h.len);
  msg[h.len] = 0; /* header, NUL, steps */
  strcpy(msg + h.len + 1, text);
  wire_text_free(&h);
  /* not MPI_Send: to a dead rank it can block for ever */
  MPI_Request sreq;
  int rc = MPI_Isend(msg, (int)n + 1, MPI_CHAR, w, TAG_REQ, MPI_COMM_WORLD, &sreq), done = 0;
  for (double end = now_s() + SEND_TIMEOUT_S; rc == MPI_SUCCESS && !done;) {
    rc = MPI_Test(&sreq, &done, MPI_STATUS_IGNORE);
    if (!done && (now_s() > end || rank_died(r))) {
      MPI_Cancel(&sreq);
      rc = MPI_ERR_OTHER;
    } else if (!done) nanosleep(&(struct timespec){0, 200000}, NULL);
  }
  free(msg);
  if (rc == MPI_SUCCESS)
    rc = MPI_Irecv(r->buf, MAX_MSG, MPI_CHAR, w, TAG_RES, MPI_COMM_WORLD, &r->req);
  if (rc != MPI_SUCCESS) return false;
  r->busy = i;
  r->deadline = now_s() + m->o.build_timeout_s + m->o.run_timeout_s + ANSWER_SLACK_S;
  return true;
}

/* The answer in R->buf into OUT. */
static void answer(MpiCtx *c, Rank *r, Record *out) {
  const char *a = r->buf;
  char msg[512], costs[1024], cpu[256], host[256], isa[256], gpu[256];
  out->error = (int)wire_num(a, "error", TE_RUNTIME);
  wire_get(a, "msg", msg, sizeof msg);
  out->error_msg = strdup(msg);
  wire_get(a, "costs", costs, sizeof costs);
  char *p = costs, *end;
  for (out->ncosts = 0; out->ncosts < REC_MAX_COSTS; out->ncosts++, p = end) {
    out->costs[out->ncosts] = strtod(p, &end);
    if (end == p) break;
  }
  wire_get(a, "cpu", cpu, sizeof cpu);
  wire_get(a, "isa", isa, sizeof isa);
  if (!wire_get(a, "host", host, sizeof host)) snprintf(host, sizeof host, "%s", cpu);
  if (!wire_get(a, "gpu", gpu, sizeof gpu)) gpu[0] = 0;
  out->cpu = strdup(cpu), out->host = strdup(host), out->isa = strdup(isa), out->gpu = strdup(gpu);
  out->threads = (int)wire_num(a, "threads", 1);
}

static void lose_rank(MpiCtx *c, Measurer *m, int w, Record *out, const char *why) {
  Rank *r = &c->ranks[w];
  char msg[256];
  snprintf(msg, sizeof msg, "rank %d was lost: %s", w, why);
  fprintf(stderr, "texc-mpi: error: %s; %d rank(s) left\n", msg, alive_ranks(c) - 1);
  if (r->busy >= 0) {
    MPI_Cancel(&r->req);
    set_error(out, TE_RUNTIME, msg);
  }
  r->alive = false, r->busy = -1;
  if (alive_ranks(c) == 0) m->lost = true;
}

/* Candidates to idle ranks, in order; answers as they come. */
static void measure_mpi(Measurer *m, const Task *task, char **texts, int n, Record *out) {
  MpiCtx *c = m->ctx;
  int next = 0, inflight = 0;
  while ((next < n || inflight > 0) && !m->lost) {
    for (int w = 1; w < c->size && next < n; w++) {
      if (!c->ranks[w].alive || c->ranks[w].busy >= 0) continue;
      if (send_req(c, m, w, task, texts[next], next)) next++, inflight++;
      else lose_rank(c, m, w, NULL, "sending a candidate failed");
    }
    bool got = false;
    for (int w = 1; w < c->size; w++) {
      Rank *r = &c->ranks[w];
      if (!r->alive || r->busy < 0) continue;
      int done = 0;
      if (MPI_Test(&r->req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
        lose_rank(c, m, w, &out[r->busy], "its answer failed"), inflight--;
      } else if (done) {
        answer(c, r, &out[r->busy]);
        r->busy = -1, inflight--, got = true;
      } else if (rank_died(r)) {
        lose_rank(c, m, w, &out[r->busy], "its process died"), inflight--;
      } else if (now_s() > r->deadline) {
        lose_rank(c, m, w, &out[r->busy], "no answer within the candidate's limits"), inflight--;
      }
    }
    if (!got) nanosleep(&(struct timespec){0, 1000000}, NULL); /* rank 0's core is shared */
  }
  for (int i = next; i < n; i++) out[i].error = TE_UNMEASURED;
}

static Measurer measurer_mpi(int size) {
  MpiCtx *c = calloc(1, sizeof *c);
  c->size = size;
  c->ranks = calloc((size_t)size, sizeof *c->ranks);
  for (int w = 1; w < size; w++) {
    c->ranks[w] = (Rank){.alive = true, .busy = -1};
    c->ranks[w].buf = calloc(1, MAX_MSG);
  }
  char host[256] = "", theirs[300];
  gethostname(host, sizeof host - 1);
  for (int w = 1; w < size; w++) { /* each rank's "HOST PID" */
    MPI_Status st;
    if (MPI_Recv(theirs, sizeof theirs, MPI_CHAR, MPI_ANY_SOURCE, TAG_HELLO, MPI_COMM_WORLD, &st) != MPI_SUCCESS) continue;
    char *sp = strrchr(theirs, ' ');
    if (!sp || st.MPI_SOURCE < 1 || st.MPI_SOURCE >= size) continue;
    *sp = 0;
    c->ranks[st.MPI_SOURCE].here = !strcmp(theirs, host);
    c->ranks[st.MPI_SOURCE].pid = atoi(sp + 1);
  }
  c->crash_at = c->hang_at = -1;
  const char *e = getenv("TEXC_TUNE_INJECT"), *p;
  if (e && (p = strstr(e, "crash:"))) c->crash_at = atoi(p + 6);
  if (e && (p = strstr(e, "hang:"))) c->hang_at = atoi(p + 5);
  return (Measurer){.measure = measure_mpi, .ctx = c};
}

/* ================================================================ one GPU per rank */

typedef struct DeviceCount {
  int platform, n; /* OpenCL: the platform of the named device; its devices (CUDA: all) */
} DeviceCount;

/* In a child (rt_in_child): this process initialises no GPU runtime before it chose. */
static void count_child(void *ctx, void *out) {
  const Cli *c = ctx;
  DeviceCount *d = out;
  *d = (DeviceCount){0, 0};
  if (c->o.target == TARGET_CUDA) {
    while (d->n < 64 && rt_cuda_query(d->n, NULL, NULL, NULL) == 0) d->n++;
    return;
  }
  int want, id;
  if (rt_opencl_query(c->o.opencl_device, &want, NULL)) return;
  for (int p = 0; p < 64; p++) { /* "P:D" for P:0, P:1 ... until one is not there */
    int n = 0;
    char spec[32];
    for (;; n++) {
      snprintf(spec, sizeof spec, "%d:%d", p, n);
      if (rt_opencl_query(spec, &id, NULL)) break;
      if (id == want) d->platform = p;
    }
    if (n == 0) break;
    if (d->platform == p) d->n = n;
  }
}

/* The device of the R-th (1-based) measuring rank of a node with N devices. */
static int device_of(int r, int n) { return n > 0 && r > 0 ? (r - 1) % n : 0; }

/* For a GPU tune: this rank (the LOCAL-th measuring rank of its node, 1-based) takes its
 * device: CUDA through CUDA_VISIBLE_DEVICES (set before CUDA starts here; an entry of the
 * list when one is set already), OpenCL through --opencl-device P:D on the platform of
 * the device the command line names (the first by default). TEXC_MPI_GPUS=N pretends the
 * node has N devices (tests); TEXC_MPI_PIN=0 leaves the choice to the command line. */
static void gpu_for_rank(Cli *c, int local) {
  const char *off = getenv("TEXC_MPI_PIN"), *fake = getenv("TEXC_MPI_GPUS");
  bool cuda = c->o.target == TARGET_CUDA;
  if ((!cuda && c->o.target != TARGET_OPENCL) || (off && !strcmp(off, "0"))) return;
  DeviceCount d = {0, fake ? atoi(fake) : 0};
  if (!fake && rt_in_child(count_child, c, &d, sizeof d)) d.n = 0;
  int rank, dev = device_of(local, d.n);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char name[300];
  if (d.n == 0) {
    snprintf(name, sizeof name, "none found: the command line's");
  } else if (cuda) { /* entry DEV of the list CUDA_VISIBLE_DEVICES holds, else ordinal DEV */
    char list[256];
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    snprintf(list, sizeof list, "%s", vis ? vis : "");
    char *pick = strtok(list, ",");
    for (int i = 0; i < dev && pick; i++) pick = strtok(NULL, ",");
    if (!pick) snprintf(list, sizeof list, "%d", dev), pick = list;
    setenv("CUDA_VISIBLE_DEVICES", pick, 1);
    snprintf(name, sizeof name, "%d of %d (CUDA_VISIBLE_DEVICES=%s)", dev, d.n, pick);
  } else {
    char *spec = malloc(32);
    snprintf(spec, 32, "%d:%d", d.platform, dev);
    c->o.opencl_device = spec;
    snprintf(name, sizeof name, "%d of %d (--opencl-device %s)", dev, d.n, spec);
  }
  fprintf(stderr, "texc-mpi: rank %d (measuring rank %d here): %s device %s\n", rank, local,
          target_names[c->o.target], name);
}

/* ================================================================ ranks >= 1: measuring */

typedef struct Known {
  Task *tasks;
  int n;
} Known;

/* The tasks this rank can measure: every kernel of FILE, or every task of the network. */
static bool load_tasks(Cli *c, Known *k) {
  if (onnx_is_model(c->file) || net_is_network_file(c->file)) {
    NetRewrites rw = net_rewrites(c->o.target);
    Network *net = net_load(c->file, c->kernel, c->defs, c->ndefs, &rw);
    if (!net) return false;
    k->tasks = calloc((size_t)net->ntasks + 1, sizeof *k->tasks);
    for (int i = 0; i < net->ntasks; i++) {
      Task *t = &k->tasks[k->n++];
      t->kernel = net->groups[net->tasks[i].group]->kernel;
      t->target = c->o.target;
      t->opts = (Options){.target = c->o.target, .opt_level = 3}; /* as network_tune.c */
      t->opts.opencl_device = c->o.opencl_device; /* this rank's (gpu_for_rank) */
      snprintf(t->workload, sizeof t->workload, "%016llx", (unsigned long long)net->tasks[i].key);
    }
    return true;
  }
  Program *p = drv_load(c);
  if (!p) return false;
  k->tasks = calloc((size_t)p->nkernels + 1, sizeof *k->tasks);
  for (int i = 0; i < p->nkernels; i++) {
    Task *t = &k->tasks[k->n++];
    t->kernel = p->kernels[i];
    t->target = c->o.target;
    t->opts = c->o; /* as tune.c */
    snprintf(t->workload, sizeof t->workload, "%016llx",
             (unsigned long long)kernel_workload_key(p->kernels[i]));
  }
  return true;
}

/* Measure one request (header, NUL, steps) into the answer A. */
static void serve(const Known *k, Measurer *local, const char *req, WireText *a) {
  char wl[32], kern[256], inject[32];
  wire_get(req, "workload", wl, sizeof wl);
  wire_get(req, "kernel", kern, sizeof kern);
  wire_get(req, "inject", inject, sizeof inject);
  const char *text = req + strlen(req) + 1;
  const Task *t = NULL;
  for (int i = 0; i < k->n && !t; i++)
    if (!strcmp(k->tasks[i].workload, wl) && !strcmp(k->tasks[i].kernel->name, kern)) t = &k->tasks[i];
  Record r = {0};
  if (!t) {
    r.error = TE_RUNTIME, r.error_msg = strdup("this rank's parse of the file has no such workload");
  } else {
    Measurer *me = local, once;
    MeasureOpts o = {.repeat = (int)wire_num(req, "repeat", 3),
                     .min_repeat_ms = wire_num(req, "min_repeat_ms", 0),
                     .run_timeout_s = wire_num(req, "run_timeout_s", 10),
                     .build_timeout_s = wire_num(req, "build_timeout_s", 20), .jobs = 1,
                     .full = wire_num(req, "full", 0) != 0};
    if (inject[0]) { /* a test's crash or hang: a measurer of its own that injects it */
      setenv("TEXC_TUNE_INJECT", inject, 1);
      once = measurer_local(&o);
      unsetenv("TEXC_TUNE_INJECT");
      me = &once;
    }
    me->o = o;
    char *texts[1] = {(char *)text};
    Task cold = *t; /* the weights rank 0's network knows to be cold */
    cold.cold_args = (uint64_t)wire_num(req, "cold", 0);
    me->measure(me, &cold, texts, 1, &r);
    if (me == &once) measurer_local_free(&once);
  }
  wire_put(a, "error", "%d", r.error);
  wire_put(a, "msg", "%s", r.error_msg ? r.error_msg : "");
  char costs[1024] = "";
  size_t len = 0;
  for (int i = 0; i < r.ncosts && len < sizeof costs - 32; i++)
    len += (size_t)snprintf(costs + len, sizeof costs - len, "%s%.9g", i ? " " : "", r.costs[i]);
  wire_put(a, "costs", "%s", costs);
  /* as search.c's fill_record here: a GPU record's "cpu" is its target */
  bool gpu = t && backend_for(t->target)->device == DEVICE_GPU;
  wire_put(a, "cpu", "%s", gpu ? target_names[t->target] : rt_cpu_name());
  wire_put(a, "host", "%s", rt_cpu_name());
  wire_put(a, "gpu", "%s", tune_gpu_name());
  wire_put(a, "isa", "%s", rt_cpu_isa());
  wire_put(a, "threads", "%d", tune_threads());
  rec_free(&r);
}

static int worker_main(int argc, char **argv, int node_rank) {
  Cli c;
  cli_parse(&c, argc, argv);
  gpu_for_rank(&c, node_rank);
  Known k = {0};
  bool ok = c.cmd == CMD_TUNE && load_tasks(&c, &k);
  MeasureOpts o = {.repeat = 3, .run_timeout_s = 10, .build_timeout_s = 20, .jobs = 1};
  unsetenv("TEXC_TUNE_INJECT"); /* rank 0 counts the candidates */
  Measurer local = measurer_local(&o);
  char *req = malloc(MAX_MSG), hello[300], host[256] = "";
  gethostname(host, sizeof host - 1);
  snprintf(hello, sizeof hello, "%s %d", host, (int)getpid());
  MPI_Send(hello, (int)strlen(hello) + 1, MPI_CHAR, 0, TAG_HELLO, MPI_COMM_WORLD);
  for (;;) {
    MPI_Status st;
    int any = 0;
    /* not MPI_Recv alone: Open MPI waits for a message by spinning, which would take a
     * core from the candidates being measured */
    while (MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &any, &st) == MPI_SUCCESS && !any)
      nanosleep(&(struct timespec){0, 1000000}, NULL);
    if (!any || MPI_Recv(req, MAX_MSG - 1, MPI_CHAR, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st) != MPI_SUCCESS)
      break;
    if (st.MPI_TAG == TAG_QUIT && req[0] == 'L') _exit(0); /* a rank was lost: no MPI_Finalize */
    if (st.MPI_TAG == TAG_QUIT) break;
    WireText a = {0};
    if (ok) serve(&k, &local, req, &a);
    else {
      wire_put(&a, "error", "%d", TE_RUNTIME);
      wire_put(&a, "msg", "this rank could not load the file");
    }
    MPI_Send(a.s, (int)a.len + 1, MPI_CHAR, 0, TAG_RES, MPI_COMM_WORLD);
    wire_text_free(&a);
  }
  free(req);
  return 0;
}

/* Which measuring rank of its node this one is (1-based; rank 0 measures nothing): the
 * ranks of a node in world order, less rank 0 where it runs there. Collective. */
static int local_measuring_rank(int rank) {
  MPI_Comm node;
  int here = 0, lowest = rank;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) != MPI_SUCCESS)
    return rank;
  MPI_Comm_rank(node, &here);
  MPI_Allreduce(&rank, &lowest, 1, MPI_INT, MPI_MIN, node);
  MPI_Comm_free(&node);
  return lowest == 0 ? here : here + 1;
}

/* Pin rank R's process to its share of this node's cores (OMPI_COMM_WORLD_LOCAL_RANK of
 * LOCAL_SIZE), and its kernels' threads to that share; TEXC_MPI_PIN=0: neither. */
static void pin(int rank) {
  const char *lr = getenv("OMPI_COMM_WORLD_LOCAL_RANK"), *ls = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  const char *off = getenv("TEXC_MPI_PIN");
  if (rank == 0 || (off && !strcmp(off, "0"))) return;
  int ncores = (int)sysconf(_SC_NPROCESSORS_ONLN), local = lr ? atoi(lr) : rank;
  int size = ls ? atoi(ls) : 1, per = ncores / (size > 0 ? size : 1);
  if (per < 1) per = 1;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int i = 0; i < per; i++) CPU_SET((local * per + i) % ncores, &set);
  if (sched_setaffinity(0, sizeof set, &set) == 0) {
    char n[16];
    snprintf(n, sizeof n, "%d", per);
    setenv("TEX_NUM_THREADS", n, 1);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int local = local_measuring_rank(rank);
  pin(rank);
  if (rank > 0) {
    int rc = worker_main(argc, argv, local);
    MPI_Finalize();
    return rc;
  }
  Measurer m = measurer_mpi(size);
  if (size > 1) tune_shared_measurer = &m; /* one rank alone measures here */
  fflush(stdout);
  int rc = drv_main(argc, argv);
  fflush(stdout);
  fflush(stderr);
  MpiCtx *c = m.ctx;
  bool lost = false;
  for (int w = 1; w < size; w++) lost |= !c->ranks[w].alive || c->ranks[w].busy >= 0;
  /* MPI_Finalize waits for every rank, a dead one too: with a rank lost, every rank leaves
   * without it ("L"); the records are closed already (drv_main) */
  char quit[2] = {lost ? 'L' : 0, 0};
  for (int w = 1; w < size; w++)
    if (c->ranks[w].alive && c->ranks[w].busy < 0)
      MPI_Send(quit, 2, MPI_CHAR, w, TAG_QUIT, MPI_COMM_WORLD);
  if (lost) _exit(rc);
  MPI_Finalize();
  return rc;
}
