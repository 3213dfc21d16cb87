/* test_report.c — the pieces of `texc records report` and the tune's progress line:
 * the record's optional machine/network members (written, read back, absent in old
 * lines), the progress line's text, HTML escaping, and the SVG chart's axes and curves. */
#include "autosched/autosched.h"
#include "report/report.h"
#include "unit.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char old_line[] =
    "{\"workload\":\"00ff\",\"kernel\":\"k\",\"target\":{\"name\":\"llvm\",\"cpu\":\"old cpu\","
    "\"threads\":2},\"schedule\":\"\",\"costs_ms\":[1.5],\"error\":0,\"error_msg\":\"\","
    "\"flops\":1,\"timestamp\":1,\"version\":\"0.1.0\"}";

static void test_record_machine(void) {
  Record r;
  check("an old record (no machine, no network) still loads", rec_from_json(old_line, &r));
  check("an old record: machine and network absent, weight 1",
        !r.host && !r.isa && !r.gpu && !r.network && r.weight == 1);
  rec_set_machine(&r);
  r.network = strdup("resnet<18>");
  r.weight = 3;
  char *s = rec_to_json(&r);
  Record q;
  bool ok = rec_from_json(s, &q);
  check("machine and network round trip",
        ok && !strcmp(q.host, rt_cpu_name()) && !strcmp(q.isa, rt_cpu_isa()) &&
            !strcmp(q.gpu, tune_gpu_name()) && !strcmp(q.network, "resnet<18>") && q.weight == 3);
  check("the old target.cpu is still written", strstr(s, "\"cpu\":\"old cpu\"") != NULL);
  free(s);
  rec_free(&r);
  if (ok) rec_free(&q);
}

static void test_progress(void) {
  char b[256];
  progress_format(b, sizeof b, "round   2", 16, 64, 0.5, 12.5, 0, 8);
  check("progress: done/total, best, rate, time left by the trials",
        !strcmp(b, "round   2:   16/64 trials, best 0.5000 ms (12.50 GFLOP/s), 2.0 trials/s, 24 s left"));
  progress_format(b, sizeof b, "round   1", 8, INT_MAX, INFINITY, 0, 600, 30);
  check("progress: --time alone: no total, no best yet, the budget's rest",
        !strcmp(b, "round   1:    8 trials, best - ms, 0.3 trials/s, 9 min 30 s left"));
  progress_format(b, sizeof b, "network", 64, 64, 2.25, 0, 0, 10);
  check("progress: done: no time left shown",
        !strcmp(b, "network:   64/64 trials, best 2.2500 ms, 6.4 trials/s"));
  progress_format(b, sizeof b, "round  40", 640, 10000, 1, 0, 600, 60);
  check("progress: the budget ends before the trials", strstr(b, ", 9 min 00 s left") != NULL);
}

/* What F wrote, as a malloc'd string. */
static char *capture(void (*fn)(FILE *, const void *), const void *arg) {
  char *s = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&s, &n);
  fn(f, arg);
  fclose(f);
  return s;
}

static void write_escaped(FILE *f, const void *s) { html_escape(f, s); }
static void write_chart(FILE *f, const void *c) { svg_chart(f, c); }

static void test_svg(void) {
  char *s = capture(write_escaped, "<a href=\"x\">&'");
  check("html_escape", !strcmp(s, "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"));
  free(s);
  double x[] = {1, 2, 3, 4}, y[] = {INFINITY, 8, 4, 0.1}, lin[] = {3, 2, 2, 1};
  SvgSeries step = {x, lin, 4, SVG_STEP, NULL, NULL};
  s = capture(write_chart, &(SvgChart){400, 200, "t<1>", "trials", "ms", &step, 1});
  const char *d = strstr(s, "<path class=\"curve\"");
  d = d ? strstr(d, " d=\"M") : NULL;
  int h = 0, vv = 0;
  for (const char *p = d ? d + 4 : ""; *p && *p != '"'; p++) h += *p == 'H', vv += *p == 'V';
  check("svg: a step curve of 4 points: 3 steps and a hold to the end; escaped title",
        d && h == 4 && vv == 3 && strstr(s, "t&lt;1&gt;") && !strstr(s, "(log scale)"));
  free(s);
  SvgSeries dots[2] = {{x, y, 4, SVG_DOTS, "all", NULL}, {x, y, 4, SVG_LINE, "best", NULL}};
  s = capture(write_chart, &(SvgChart){400, 200, NULL, NULL, "ms", dots, 2});
  int circles = 0;
  for (const char *p = s; (p = strstr(p, "<circle")); p++) circles++;
  check("svg: values spanning 80x: a log axis; an infinite value left out",
        strstr(s, "(log scale)") && circles == 3 && strstr(s, ">all</text>"));
  free(s);
  SvgSeries none = {x, (double[]){INFINITY, INFINITY, INFINITY, INFINITY}, 4, SVG_STEP, NULL, NULL};
  s = capture(write_chart, &(SvgChart){400, 200, NULL, NULL, NULL, &none, 1});
  check("svg: no finite value: says so, no curve",
        strstr(s, "no successful measurement") && !strstr(s, "class=\"curve\""));
  free(s);
}

int main(void) {
  test_record_machine();
  test_progress();
  test_svg();
  return failures ? 1 : 0;
}
