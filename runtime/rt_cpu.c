/* rt_cpu.c — the CPU thread pool behind `parallel` loops.
 *
 * One pool per process, created on first use with TEX_NUM_THREADS threads (default:
 * every online core), the caller counting as thread 0. rt_parallel_for splits [0, n)
 * into CHUNKS_PER_THREAD contiguous chunks per thread, in one contiguous run of chunks
 * per thread (its slot: thread t owns the t-th part of [0, n), so that consecutive loops
 * of a network give each core the same part of the tensors, still in its cache). Each
 * thread claims the chunks of its own slot first, one at a time from the slot's atomic
 * word (job generation << 32 | the slot's end << 16 | next chunk: at most 4 x 256 chunks,
 * and one word, so that a worker still in the last job can never claim from the next),
 * then those left in the others' slots. The
 * caller never waits for a worker that has not started: on a shared machine a descheduled
 * worker would otherwise stall every parallel loop for a scheduler slice; the caller
 * takes a late worker's chunks and the worker finds nothing left to claim. Workers spin
 * briefly after a job (a kernel usually issues the next one at once), then sleep on a
 * condvar.
 *
 * This file depends on nothing else of the runtime, so that a `--emit so` library that
 * only calls rt_parallel_for pulls in just this object from libtexrt.a.
 */
#include "texrt.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#define SPIN_ROUNDS 20000
#define CHUNKS_PER_THREAD 4

#define MAX_THREADS 256
_Static_assert(MAX_THREADS * CHUNKS_PER_THREAD < 0x10000, "a slot's chunk numbers take 16 bits");

/* The claim word of one thread's slot, alone on its cache line. */
typedef struct Slot {
  _Atomic unsigned long long claim; /* generation << 32 | end << 16 | next chunk to claim */
  char pad[64 - sizeof(unsigned long long)];
} Slot;

typedef struct Pool {
  int nthreads; /* including the caller */
  pthread_mutex_t lock;
  pthread_cond_t wake;
  pthread_mutex_t busy; /* one parallel_for at a time; others run serially */
  atomic_ulong generation;
  Slot slot[MAX_THREADS];
  atomic_long done; /* chunks of the current job finished */
  RtTask task;
  void *closure;
  int64_t n, chunk, nchunks;
} Pool;

static Pool pool;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
/* Set in workers and while the caller runs a job: nested loops run serially. */
static _Thread_local int in_parallel;

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

int rt_num_threads(void) {
  const char *s = getenv("TEX_NUM_THREADS");
  int n = s ? atoi(s) : 0;
  if (n <= 0) n = (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (n <= 0) n = 1;
  return n > MAX_THREADS ? MAX_THREADS : n;
}

/* Claim and run chunks of job GEN until none is left: those of thread SELF's slot first,
 * then the others'. A chunk can only be claimed while its slot's word still names GEN, so
 * the fields of the job are those of GEN. */
static void run_chunks(unsigned long gen, int self) {
  for (int k = 0; k < pool.nthreads; k++) {
    Slot *s = &pool.slot[(self + k) % pool.nthreads];
    for (;;) {
      unsigned long long c = atomic_load(&s->claim);
      if ((c >> 32) != (gen & 0xffffffffu) || (c & 0xffffu) >= ((c >> 16) & 0xffffu)) break;
      if (!atomic_compare_exchange_weak(&s->claim, &c, c + 1)) continue;
      int64_t begin = (int64_t)(c & 0xffffu) * pool.chunk, end = begin + pool.chunk;
      if (end > pool.n) end = pool.n;
      pool.task(begin, end, pool.closure);
      atomic_fetch_add(&pool.done, 1);
    }
  }
}

/* Wait until the job generation moves past SEEN: spin first, then sleep. */
static unsigned long wait_job(unsigned long seen) {
  unsigned long g;
  for (int i = 0; i < SPIN_ROUNDS; i++) {
    if ((g = atomic_load(&pool.generation)) != seen) return g;
    cpu_relax();
  }
  pthread_mutex_lock(&pool.lock);
  while ((g = atomic_load(&pool.generation)) == seen) pthread_cond_wait(&pool.wake, &pool.lock);
  pthread_mutex_unlock(&pool.lock);
  return g;
}

static void *worker(void *arg) {
  int self = (int)(intptr_t)arg;
  unsigned long seen = 0;
  in_parallel = 1;
  for (;;) {
    seen = wait_job(seen);
    run_chunks(seen, self);
  }
  return NULL;
}

static void pool_init(void) {
  pool.nthreads = rt_num_threads();
  pthread_mutex_init(&pool.lock, NULL);
  pthread_cond_init(&pool.wake, NULL);
  pthread_mutex_init(&pool.busy, NULL);
  for (int i = 1; i < pool.nthreads; i++) {
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &attr, worker, (void *)(intptr_t)i) != 0) {
      pool.nthreads = i; /* fewer workers than asked: still correct */
      pthread_attr_destroy(&attr);
      break;
    }
    pthread_attr_destroy(&attr);
  }
}

void rt_parallel_for(int64_t n, RtTask task, void *closure) {
  if (n <= 0) return;
  pthread_once(&pool_once, pool_init);
  if (in_parallel || pool.nthreads == 1 || n == 1 || pthread_mutex_trylock(&pool.busy) != 0) {
    task(0, n, closure);
    return;
  }
  int64_t want = (int64_t)pool.nthreads * CHUNKS_PER_THREAD;
  if (want > n) want = n;
  pool.task = task;
  pool.closure = closure;
  pool.n = n;
  pool.chunk = (n + want - 1) / want;
  pool.nchunks = (n + pool.chunk - 1) / pool.chunk;
  atomic_store(&pool.done, 0);
  unsigned long gen = atomic_load(&pool.generation) + 1;
  int64_t per = (pool.nchunks + pool.nthreads - 1) / pool.nthreads;
  for (int t = 0; t < pool.nthreads; t++) {
    int64_t first = (int64_t)t * per < pool.nchunks ? (int64_t)t * per : pool.nchunks;
    int64_t last = first + per < pool.nchunks ? first + per : pool.nchunks;
    atomic_store(&pool.slot[t].claim, (unsigned long long)(gen & 0xffffffffu) << 32 |
                                          (unsigned long long)last << 16 | (unsigned long long)first);
  }
  pthread_mutex_lock(&pool.lock);
  atomic_store(&pool.generation, gen);
  pthread_cond_broadcast(&pool.wake);
  pthread_mutex_unlock(&pool.lock);
  in_parallel = 1;
  run_chunks(gen, 0);
  in_parallel = 0;
  /* Only chunks that a worker already claimed are left to wait for. */
  for (int spins = 0; atomic_load(&pool.done) < pool.nchunks; spins++) {
    if (spins < SPIN_ROUNDS) cpu_relax();
    else sched_yield();
  }
  pthread_mutex_unlock(&pool.busy);
}
