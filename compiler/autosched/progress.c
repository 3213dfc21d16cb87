/* progress.c — the progress line of `texc tune`: trials done of the total, trials per
 * second, the best so far and, under --time, the time left. On a terminal it is redrawn
 * in place (\r and clear to the end of the line); into a file or a pipe each call prints
 * one plain line, so that a CI log stays readable (the callers call once per round). */
#include "autosched.h"

#include <limits.h>
#include <math.h>
#include <time.h>
#include <unistd.h>

static double mono_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void progress_start(TuneProgress *p) {
  p->t0 = mono_s();
  p->tty = isatty(STDERR_FILENO) == 1;
  p->drawn = false;
}

/* "1 h 02 min", "3 min 05 s", "42 s". */
static void fmt_duration(char *buf, size_t n, double s) {
  long t = s > 0 ? (long)ceil(s) : 0;
  if (t >= 3600) snprintf(buf, n, "%ld h %02ld min", t / 3600, t % 3600 / 60);
  else if (t >= 60) snprintf(buf, n, "%ld min %02ld s", t / 60, t % 60);
  else snprintf(buf, n, "%ld s", t);
}

void progress_format(char *buf, size_t n, const char *label, int done, int total,
                     double best_ms, double gflops, double time_s, double elapsed) {
  double rate = elapsed > 0 ? done / elapsed : 0;
  int k = total > 0 && total != INT_MAX ? snprintf(buf, n, "%s: %4d/%d trials", label, done, total)
                                        : snprintf(buf, n, "%s: %4d trials", label, done);
  if (k < 0 || (size_t)k >= n) return;
  if (isinf(best_ms)) k += snprintf(buf + k, n - (size_t)k, ", best - ms");
  else if (gflops > 0) k += snprintf(buf + k, n - (size_t)k, ", best %.4f ms (%.2f GFLOP/s)", best_ms, gflops);
  else k += snprintf(buf + k, n - (size_t)k, ", best %.4f ms", best_ms);
  if ((size_t)k >= n) return;
  k += snprintf(buf + k, n - (size_t)k, ", %.1f trials/s", rate);
  if ((size_t)k >= n) return;
  /* the time left: the budget's rest, or sooner when the trials will run out first */
  double left = -1;
  if (time_s > 0) left = time_s - elapsed;
  if (total > 0 && total != INT_MAX && rate > 0) {
    double by_trials = (total - done) / rate;
    if (left < 0 || by_trials < left) left = by_trials;
  }
  if (left >= 0 && done < total) {
    char d[32];
    fmt_duration(d, sizeof d, left);
    snprintf(buf + k, n - (size_t)k, ", %s left", d);
  }
}

void progress_show(TuneProgress *p, const char *label, int done, int total, double best_ms,
                   double gflops, double time_s) {
  char line[256];
  progress_format(line, sizeof line, label, done, total, best_ms, gflops, time_s,
                  mono_s() - p->t0);
  if (p->tty) {
    fprintf(stderr, "\r%s\033[K", line);
    p->drawn = true;
  } else {
    fprintf(stderr, "%s\n", line);
  }
  fflush(stderr);
}

void progress_end(TuneProgress *p) {
  if (p->drawn) fputc('\n', stderr);
  p->drawn = false;
  fflush(stderr);
}
