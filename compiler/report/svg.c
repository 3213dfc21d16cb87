/* svg.c — line, step and scatter charts as inline SVG, for `texc records report|plot`.
 * Plain SVG 1.1 with presentation attributes only (no CSS classes needed to draw), so a
 * chart also renders when saved alone as curve.svg. */
#include "report/report.h"

#include <math.h>
#include <string.h>

#define ML 72 /* margins: left (y tick labels), right, top (title), bottom (x labels) */
#define MR 24
#define MT 28
#define MB 44

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                      "#9467bd", "#8c564b", "#e377c2", "#17becf"};

const char *svg_color(int i) { return palette[(i < 0 ? -i : i) % 8]; }

void html_escape(FILE *f, const char *s) {
  for (; s && *s; s++) {
    switch (*s) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    case '\'': fputs("&#39;", f); break;
    default: fputc(*s, f);
    }
  }
}

/* The data range of one axis and how values map onto pixels. */
typedef struct Axis {
  double lo, hi;   /* data range shown */
  bool log;        /* log10 scale */
  double p0, p1;   /* pixels of lo and hi */
} Axis;

static double axis_t(const Axis *a, double v) {
  double t = a->log ? (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo))
                    : (v - a->lo) / (a->hi - a->lo);
  return a->p0 + t * (a->p1 - a->p0);
}

/* A step of 1, 2 or 5 x 10^k near SPAN / 5. */
static double nice_step(double span) {
  double raw = span / 5, p = pow(10, floor(log10(raw))), m = raw / p;
  return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

/* The extent of the finite values of every series (X: the x values). */
static bool extent(const SvgChart *c, bool x, double *lo, double *hi) {
  *lo = INFINITY, *hi = -INFINITY;
  for (int s = 0; s < c->nseries; s++)
    for (int i = 0; i < c->series[s].n; i++) {
      double v = x ? c->series[s].x[i] : c->series[s].y[i];
      double other = x ? c->series[s].y[i] : c->series[s].x[i];
      if (!isfinite(v) || !isfinite(other) || (!x && v <= 0)) continue;
      *lo = fmin(*lo, v), *hi = fmax(*hi, v);
    }
  return *lo <= *hi;
}

static void axis_setup(Axis *a, double lo, double hi, bool allow_log) {
  a->log = allow_log && lo > 0 && hi / lo > 30;
  if (a->log) {
    a->lo = pow(10, floor(log10(lo))), a->hi = pow(10, ceil(log10(hi)));
    if (a->hi <= a->lo) a->hi = a->lo * 10;
    return;
  }
  if (hi <= lo) hi = lo + (lo != 0 ? fabs(lo) * 0.1 : 1), lo = lo - (lo != 0 ? fabs(lo) * 0.1 : 0);
  double st = nice_step(hi - lo);
  a->lo = floor(lo / st) * st, a->hi = ceil(hi / st) * st;
  if (a->lo < 0 && lo >= 0) a->lo = 0;
}

/* A tick label: whole numbers in full (10000, not 1e+04), others in 4 digits. */
static void tick_label(char *buf, size_t n, double v) {
  if (fabs(v) < 1e9 && v == floor(v)) snprintf(buf, n, "%.0f", v);
  else snprintf(buf, n, "%.4g", v);
}

/* Grid lines and tick labels of A (Y: the vertical axis) across the plot area. */
static void ticks(FILE *f, const Axis *a, bool y, int x0, int x1, int y0, int y1) {
  double vals[64];
  int n = 0;
  if (a->log) {
    for (double d = a->lo; d <= a->hi * 1.0001 && n < 60; d *= 10) {
      vals[n++] = d;
      if (log10(a->hi / a->lo) <= 2)
        for (int m = 2; m <= 5; m += 3)
          if (d * m < a->hi) vals[n++] = d * m;
    }
  } else {
    double st = nice_step(a->hi - a->lo);
    for (double v = a->lo; v <= a->hi + st * 1e-6 && n < 60; v += st) vals[n++] = fabs(v) < st * 1e-9 ? 0 : v;
  }
  for (int i = 0; i < n; i++) {
    double p = axis_t(a, vals[i]);
    char label[32];
    tick_label(label, sizeof label, vals[i]);
    if (y) {
      fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>", x0, p, x1, p);
      fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\" fill=\"#444\">%s</text>\n",
              x0 - 5, p + 4, label);
    } else {
      fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#e4e4e4\"/>", p, y0, p, y1);
      fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" font-size=\"11\" fill=\"#444\">%s</text>\n",
              p, y1 + 15, label);
    }
  }
}

/* One series: a path (step or line) or dots. */
static void series(FILE *f, const SvgSeries *s, const Axis *ax, const Axis *ay, int k) {
  const char *col = s->color ? s->color : svg_color(k);
  if (s->style == SVG_DOTS) {
    fprintf(f, "<g class=\"dot\" fill=\"%s\" fill-opacity=\"0.45\">", col);
    for (int i = 0; i < s->n; i++)
      if (isfinite(s->x[i]) && isfinite(s->y[i]) && s->y[i] > 0)
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\"/>", axis_t(ax, s->x[i]), axis_t(ay, s->y[i]));
    fprintf(f, "</g>\n");
    return;
  }
  fprintf(f, "<path class=\"curve\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" d=\"", col);
  bool first = true;
  double last_y = 0;
  for (int i = 0; i < s->n; i++) {
    if (!isfinite(s->x[i]) || !isfinite(s->y[i]) || s->y[i] <= 0) continue;
    double px = axis_t(ax, s->x[i]), py = axis_t(ay, s->y[i]);
    if (first) fprintf(f, "M%.1f %.1f", px, py);
    else if (s->style == SVG_STEP) fprintf(f, "H%.1fV%.1f", px, py);
    else fprintf(f, "L%.1f %.1f", px, py);
    first = false, last_y = py;
  }
  if (!first && s->style == SVG_STEP) fprintf(f, "H%.1f", ax->p1); /* holds to the end */
  (void)last_y;
  fprintf(f, "\"/>\n");
}

static void legend(FILE *f, const SvgChart *c, int x1) {
  int y = MT + 6;
  for (int s = 0; s < c->nseries; s++) {
    if (!c->series[s].name) continue;
    const char *col = c->series[s].color ? c->series[s].color : svg_color(s);
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>", x1 - 170, y, col);
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#222\">", x1 - 155, y + 9);
    html_escape(f, c->series[s].name);
    fprintf(f, "</text>\n");
    y += 15;
  }
}

void svg_chart(FILE *f, const SvgChart *c) {
  int w = c->width, h = c->height, x0 = ML, x1 = w - MR, y0 = MT, y1 = h - MB;
  fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
             "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n", w, h, w, h);
  fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", w, h);
  if (c->title) {
    fprintf(f, "<text x=\"%d\" y=\"18\" font-size=\"13\" font-weight=\"bold\" fill=\"#222\">", x0);
    html_escape(f, c->title);
    fprintf(f, "</text>\n");
  }
  double xl, xh, yl, yh;
  if (!extent(c, true, &xl, &xh) || !extent(c, false, &yl, &yh)) {
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" fill=\"#888\">no successful "
               "measurement</text>\n</svg>\n", x0, (y0 + y1) / 2);
    return;
  }
  Axis ax = {.p0 = x0, .p1 = x1}, ay = {.p0 = y1, .p1 = y0};
  axis_setup(&ax, xl > 0 ? 0 : xl, xh, false); /* trials and time: from 0, where they start */
  axis_setup(&ay, yl, yh, true);
  ticks(f, &ax, false, x0, x1, y0, y1);
  ticks(f, &ay, true, x0, x1, y0, y1);
  fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#888\"/>\n",
          x0, y0, x1 - x0, y1 - y0);
  for (int s = 0; s < c->nseries; s++) series(f, &c->series[s], &ax, &ay, s);
  if (c->xlabel) {
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"12\" fill=\"#222\">",
            (x0 + x1) / 2, h - 8);
    html_escape(f, c->xlabel);
    fprintf(f, "</text>\n");
  }
  if (c->ylabel) {
    fprintf(f, "<text transform=\"translate(14,%d) rotate(-90)\" text-anchor=\"middle\" "
               "font-size=\"12\" fill=\"#222\">", (y0 + y1) / 2);
    html_escape(f, c->ylabel);
    fprintf(f, "%s</text>\n", ay.log ? " (log scale)" : "");
  }
  if (c->nseries > 1) legend(f, c, x1);
  fprintf(f, "</svg>\n");
}

void svg_share_bar(FILE *f, int width, const double *values, const char *const *names, int n) {
  double total = 0;
  for (int i = 0; i < n; i++) total += values[i] > 0 && isfinite(values[i]) ? values[i] : 0;
  fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"34\" "
             "viewBox=\"0 0 %d 34\" font-family=\"sans-serif\">\n", width, width);
  double x = 0;
  for (int i = 0; i < n && total > 0; i++) {
    double v = values[i] > 0 && isfinite(values[i]) ? values[i] : 0;
    double bw = v / total * width;
    fprintf(f, "<rect class=\"share\" x=\"%.1f\" y=\"2\" width=\"%.1f\" height=\"30\" fill=\"%s\">"
               "<title>", x, bw, svg_color(i));
    html_escape(f, names[i]);
    fprintf(f, ": %.1f %%</title></rect>", 100 * v / total);
    if (bw > 60) {
      fprintf(f, "<text x=\"%.1f\" y=\"21\" font-size=\"11\" fill=\"#fff\">%.0f%% ", x + 4, 100 * v / total);
      html_escape(f, names[i]);
      fprintf(f, "</text>");
    }
    fputc('\n', f);
    x += bw;
  }
  fprintf(f, "</svg>\n");
}
