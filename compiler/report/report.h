/* report.h — `texc records report|plot` (report.c) and the SVG charts they draw (svg.c).
 *
 * Everything is written by texc itself: one HTML file with inline SVG and inline CSS, no
 * script, font or image fetched from anywhere, so the page is the same offline, in a CI
 * artifact or in a mail. Every string that comes from a log is escaped (html_escape). */
#ifndef REPORT_H
#define REPORT_H

#include <stdbool.h>
#include <stdio.h>

/* ---------------------------------------------------------------- svg.c */

typedef enum {
  SVG_STEP, /* a step line: y holds until the next x (a best-so-far curve) */
  SVG_LINE, /* straight segments between the points */
  SVG_DOTS, /* one small circle per point (a scatter) */
} SvgStyle;

typedef struct SvgSeries {
  const double *x, *y; /* N points; a y that is not finite is left out */
  int n;
  SvgStyle style;
  const char *name;    /* for the legend; NULL: none */
  const char *color;   /* CSS colour; NULL: the palette's */
} SvgSeries;

typedef struct SvgChart {
  int width, height;   /* pixels */
  const char *title, *xlabel, *ylabel;
  const SvgSeries *series;
  int nseries;
} SvgChart;

/* Write CHART as one <svg> element. The y axis is logarithmic when the values span more
 * than 30x. Paths of SVG_STEP and SVG_LINE series carry class="curve", dots class="dot". */
void svg_chart(FILE *f, const SvgChart *chart);
/* A horizontal bar of N parts (VALUES, non-negative) in proportion, labelled NAMES[i]
 * with its percentage where it fits: each task's share of a network's latency. */
void svg_share_bar(FILE *f, int width, const double *values, const char *const *names, int n);
/* The I-th colour of the palette (cycled). */
const char *svg_color(int i);
/* S with & < > " ' escaped, for HTML text, attributes and SVG <text>. */
void html_escape(FILE *f, const char *s);

/* ---------------------------------------------------------------- report.c */

struct Cli;
/* `texc records report LOG [-o OUT.html]` and `texc records plot LOG -o OUT.svg`. */
int report_main(struct Cli *c);

#endif
