/*
 * page.h: self-contained HTML pages with inline SVG charts, drawn here in
 * C: report.html (html.c), compare.html (compare.c) and sweep.html
 * (sweep.c).  A page fetches nothing: no script, no font, no image, no
 * style sheet from outside; it opens from file:// as it is.
 *
 * Every chart is <figure class="chart" data-chart=ID data-points=N> with
 * one <polyline class="series" data-series=LABEL> per series holding its
 * N points, so a test can count what was drawn; a band is a <polygon
 * class="band">, and a series' role (data-role: "band", "median", "p90",
 * "outlier") says what it stands for.  No two labels of a chart overlap:
 * each is placed where its box is free (ticks first, then the legend, the
 * marks and the windows' labels), or left out, its text still in the
 * shape's <title>.  An axis whose values are all whole numbers gets whole
 * ticks.
 */
#ifndef PAGE_H
#define PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct page_series {
	const char	*label;
	const double	*x, *y;
	size_t		 n;
	const double	*ylo, *yhi;	/* an error bar per point, or NULL */
	bool		 bars;		/* bars from 0 instead of a line */
	bool		 steps;		/* a step line (a CDF) */
	bool		 band;		/* the area from ylo to yhi, y a line */
	bool		 dots;		/* points only, no line */
	const char	*role;		/* data-role, or NULL */
	int		 hue;		/* 0: by position; k: colour k - 1, so
					 * a peer keeps its colour throughout */
};

struct page_window {			/* a shaded span of x */
	double		 x0, x1;
	const char	*label;
};

struct page_mark {			/* a dashed vertical line */
	double		 x;
	const char	*label;
};

struct page_chart {
	const char		*id;		/* data-chart */
	const char		*title;
	const char		*xlabel, *ylabel;
	const char		*xunit, *yunit;	/* tick labels: num_human */
	bool			 xlog, ylog;
	bool			 yzero;		/* the y axis starts at 0 */
	const char *const	*xcats;		/* x = 0..ncats-1, these names */
	size_t			 ncats;
	const struct page_series *series;
	size_t			 nseries;
	const struct page_window *windows;
	size_t			 nwindows;
	const struct page_mark	*marks;
	size_t			 nmarks;
	int			 width;		/* px; 0: the default 720 */
};

/* <!doctype html> to <body>, with the one inline style sheet. */
void	page_start(FILE *fp, const char *title);
void	page_end(FILE *fp);
/* s with &, <, >, " escaped. */
void	page_esc(FILE *fp, const char *s);
/* One chart as described above. */
void	page_chart(FILE *fp, const struct page_chart *c);

#endif
