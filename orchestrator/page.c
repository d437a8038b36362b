/*
 * page.c: the HTML and SVG of the report pages (see page.h).  Charts are
 * plain SVG with computed coordinates: axes with "nice" ticks (1, 2, 5 x
 * 10^k, or powers of ten on a log axis; whole ones for whole data), shaded
 * windows with their labels, dashed marks, bands, one colour per series
 * and a legend.  Every label goes through one placer (struct boxes) that
 * keeps it clear of those placed before it.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "num.h"
#include "page.h"

static int	W = 720;	/* this chart's width in CSS pixels */
#define H	260
#define ML	70		/* margins: left, right, top, bottom */
#define MR	(W >= 600 ? 150 : 118)
#define MT	28
#define MB	40
#define CHAR_W	6.8		/* an 11 px glyph's width at most, about */
#define ASCENT	10		/* a label's box above its baseline */
#define DESCENT	3		/* and below */

static const char *const colours[] = {
	"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
	"#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
};
#define NCOLOURS (sizeof(colours) / sizeof(colours[0]))

void
page_esc(FILE *fp, const char *s)
{
	for (; s != NULL && *s != '\0'; s++)
		switch (*s) {
		case '&': fputs("&amp;", fp); break;
		case '<': fputs("&lt;", fp); break;
		case '>': fputs("&gt;", fp); break;
		case '"': fputs("&quot;", fp); break;
		default: fputc(*s, fp); break;
		}
}

void
page_start(FILE *fp, const char *title)
{
	fputs("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	    "\n<title>", fp);
	page_esc(fp, title);
	fputs("</title>\n<style>\n"
	    "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;"
	    "max-width:1000px;color:#222;padding:0 1em}\n"
	    "h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.2em;margin-top:"
	    "1.6em;border-bottom:1px solid #ddd}\n"
	    "table{border-collapse:collapse;margin:.5em 0}td,th{padding:2px 8px;"
	    "border-bottom:1px solid #eee;text-align:left}"
	    "td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}\n"
	    ".PASS,.pass{color:#1a7f37;font-weight:bold}"
	    ".FAIL,.fail,.ERROR,.error,.UNKNOWN{color:#c62828;font-weight:bold}"
	    ".flag{background:#fff3cd}\n"
	    "figure.chart{margin:.8em 0;display:inline-block;"
	    "vertical-align:top}.pair{display:flex;gap:10px}"
	    "figcaption{font-weight:600;margin-bottom:2px}\n"
	    "svg text{font:11px system-ui,sans-serif;fill:#333}"
	    "svg .grid{stroke:#eee}svg .axis{stroke:#888}"
	    "svg .window{fill:#f4a261;fill-opacity:.18;stroke:#f4a261;"
	    "stroke-opacity:.5}svg .wlabel{fill:#b5651d}"
	    "svg .mark{stroke:#555;stroke-dasharray:4 3}"
	    "svg .series{fill:none;stroke-width:1.6}"
	    "svg .band{stroke:none}\n"
	    ".muted{color:#777}\n"
	    "</style></head><body>\n", fp);
}

void
page_end(FILE *fp)
{
	fputs("</body></html>\n", fp);
}

/* ---- the label placer -------------------------------------------------- */

#define MAX_BOXES	512

struct boxes {
	double	b[MAX_BOXES][4];	/* x0, y0, x1, y1 */
	size_t	n;
};

/* A label's width, a little over what an 11 px sans-serif draws: wide,
 * capital, narrow and other glyphs apart (a UTF-8 sequence counts one). */
static double
text_w(const char *s)
{
	double w = 0;

	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c & 0xc0) == 0x80)
			continue;
		if (strchr("MWmw%@", c) != NULL && c != '\0')
			w += 10;
		else if (c >= 'A' && c <= 'Z')
			w += 8.2;
		else if (strchr(" .,:;'!|iljtfrI()[]", c) != NULL && c != '\0')
			w += 4.2;
		else
			w += CHAR_W;
	}
	return w;
}

static bool
box_free(const struct boxes *bx, double x0, double y0, double x1, double y1)
{
	for (size_t i = 0; i < bx->n; i++)
		if (x0 < bx->b[i][2] && bx->b[i][0] < x1 && y0 < bx->b[i][3] &&
		    bx->b[i][1] < y1)
			return false;
	return true;
}

static void
box_add(struct boxes *bx, double x0, double y0, double x1, double y1)
{
	if (bx->n < MAX_BOXES) {
		bx->b[bx->n][0] = x0;
		bx->b[bx->n][1] = y0;
		bx->b[bx->n][2] = x1;
		bx->b[bx->n++][3] = y1;
	}
}

/* A label's box at baseline (x, y): anchor 's'tart, 'm'iddle or 'e'nd. */
static void
label_box(const char *s, double x, double y, char anchor, double out[4])
{
	double w = text_w(s);

	out[0] = anchor == 's' ? x : anchor == 'm' ? x - w / 2 : x - w;
	out[2] = out[0] + w;
	out[1] = y - ASCENT;
	out[3] = y + DESCENT;
}

/*
 * Place s at (x, y), then (x, y + dy), ... up to ymax, at the first spot
 * whose box is free and inside [xmin, xmax]; write it with class cls.
 * false when no spot was free: the label is left out.
 */
static bool
label_place(FILE *fp, struct boxes *bx, const char *s, double x, double y,
    double dy, double ymax, char anchor, double xmin, double xmax,
    const char *cls)
{
	double b[4];

	for (; dy > 0 ? y <= ymax : true; y += dy) {
		label_box(s, x, y, anchor, b);
		if (b[0] >= xmin && b[2] <= xmax && box_free(bx, b[0] - 1, b[1],
		    b[2] + 1, b[3])) {
			box_add(bx, b[0], b[1], b[2], b[3]);
			fprintf(fp, "<text%s%s%s x=\"%.1f\" y=\"%.1f\"%s>",
			    cls ? " class=\"" : "", cls ? cls : "", cls ? "\"" :
			    "", x, y, anchor == 's' ? "" : anchor == 'm' ?
			    " text-anchor=\"middle\"" : " text-anchor=\"end\"");
			page_esc(fp, s);
			fputs("</text>", fp);
			return true;
		}
		if (dy <= 0)
			break;
	}
	return false;
}

/* ---- axes -------------------------------------------------------------- */

struct axis {
	double	 lo, hi;
	bool	 log;
	bool	 whole;		/* every value a whole number: whole ticks */
	double	 p0, p1;		/* pixel range */
};

static double
ax_map(const struct axis *a, double v)
{
	double lo = a->lo, hi = a->hi;

	if (a->log) {
		v = log10(v > 0 ? v : lo > 0 ? pow(10, lo) : 1);
		/* lo and hi are already log10 on a log axis */
	}
	if (hi == lo)
		return (a->p0 + a->p1) / 2;
	return a->p0 + (v - lo) / (hi - lo) * (a->p1 - a->p0);
}

/* lo..hi from the data, padded and made "nice" (linear) or whole decades
 * (log: lo and hi become log10 of the bounds). */
static void
ax_fit(struct axis *a, double lo, double hi, bool log_, bool zero)
{
	a->log = log_;
	if (!(lo <= hi)) {
		lo = 0;
		hi = 1;
	}
	if (log_) {
		if (lo <= 0)
			lo = hi > 0 ? hi / 1000 : 1;
		if (hi <= 0)
			hi = 1;
		a->lo = floor(log10(lo));
		a->hi = ceil(log10(hi));
		if (a->hi == a->lo)
			a->hi = a->lo + 1;
		return;
	}
	if (zero && lo > 0)
		lo = 0;
	if (zero && hi < 0)
		hi = 0;
	if (hi == lo) {
		hi = lo + (lo == 0 ? 1 : fabs(lo) * 0.1);
		lo = lo - (lo == 0 ? 0 : fabs(lo) * 0.1);
	}
	if (a->whole && hi - lo < 5) {	/* 0..1 of a count: ticks 0..5 */
		lo = floor(lo);
		hi = fmax(ceil(hi), lo + 5);
	}
	a->lo = lo;
	a->hi = hi;
}

/* The tick step of a linear axis, 3 to 5 ticks: the least 1, 2 or 5 x
 * 10^k at or above a fifth of the range; for bytes in the unit the top
 * tick reads in (KiB, MiB: x 1024^j), so the labels read 0.5 MiB, 1 MiB,
 * not 1.95 MiB; at least 1 on a whole axis. */
static double
ax_step(const struct axis *a, const char *unit)
{
	double raw = (a->hi - a->lo) / 5, base = 1, m, st;

	if (unit != NULL && strcmp(unit, "bytes") == 0)
		while (fmax(fabs(a->hi), fabs(a->lo)) / base >= 1024)
			base *= 1024;
	m = pow(10, floor(log10(raw / base))) * base;
	st = raw <= m * (1 + 1e-9) ? m : raw <= 2 * m * (1 + 1e-9) ? 2 * m :
	    raw <= 5 * m * (1 + 1e-9) ? 5 * m : 10 * m;
	return a->whole && st < 1 ? 1 : st;
}

/* Decimals that tell apart ticks step apart, shown in units of scale. */
static int
decimals(double step, double scale)
{
	double d = step / scale;
	int k = 0;

	while (k < 6 && fabs(d * pow(10, k) - round(d * pow(10, k))) > 1e-6)
		k++;
	return k;
}

/*
 * A tick's label: num_human's form, unless that would read the same for
 * two ticks step apart (2.002 s and 2.004 s are both "2 s" there): then
 * as many decimals as the step needs, in the unit of the largest tick.
 */
static void
tick_text(double v, double step, double top, const char *unit, char *buf,
    size_t len)
{
	char a[NUM_BUF], b[NUM_BUF];
	const char *u = unit != NULL ? unit : "";
	double scale = 1;
	const char *sfx = "";

	num_human(v, unit, a, sizeof(a));
	num_human(v + step, unit, b, sizeof(b));
	if (step <= 0 || strcmp(a, b) != 0) {
		snprintf(buf, len, "%s", a);
		return;
	}
	if (strcmp(u, "us") == 0)
		scale = fabs(top) >= 1e6 ? 1e6 : fabs(top) >= 1e3 ? 1e3 : 1,
		sfx = scale == 1e6 ? " s" : scale == 1e3 ? " ms" : " us";
	else if (strcmp(u, "ms") == 0)
		scale = fabs(top) >= 1e3 ? 1e3 : 1, sfx = scale == 1e3 ? " s" :
		    " ms";
	else if (strcmp(u, "bytes") == 0)
		scale = fabs(top) >= 1048576 ? 1048576 : fabs(top) >= 1024 ?
		    1024 : 1, sfx = scale == 1048576 ? " MiB" : scale == 1024 ?
		    " KiB" : " B";
	snprintf(buf, len, "%.*f%s", decimals(step, scale), v / scale, sfx);
}

static void
draw_axes(FILE *fp, struct boxes *bx, const struct page_chart *c,
    const struct axis *x, const struct axis *y)
{
	double v, step;
	char t[NUM_BUF];

	/* y ticks and grid */
	if (y->log) {
		for (double e = y->lo; e <= y->hi + 1e-9; e++) {
			double py = ax_map(y, pow(10, e));

			fprintf(fp, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" "
			    "y1=\"%.1f\" y2=\"%.1f\"/>", ML, W - MR, py, py);
			num_human(pow(10, e), c->yunit, t, sizeof(t));
			label_place(fp, bx, t, ML - 4, py + 4, 0, 0, 'e', 0, ML,
			    NULL);
			fputc('\n', fp);
		}
	} else {
		step = ax_step(y, c->yunit);
		for (v = ceil(y->lo / step) * step; v <= y->hi + step * 1e-9;
		    v += step) {
			double py = ax_map(y, v);

			fprintf(fp, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" "
			    "y1=\"%.1f\" y2=\"%.1f\"/>", ML, W - MR, py, py);
			tick_text(fabs(v) < step * 1e-9 ? 0 : v, step, y->hi,
			    c->yunit, t, sizeof(t));
			label_place(fp, bx, t, ML - 4, py + 4, 0, 0, 'e', 0, ML,
			    NULL);
			fputc('\n', fp);
		}
	}
	/* x ticks: one that would touch the last is left out */
	if (c->xcats != NULL) {
		for (size_t i = 0; i < c->ncats; i++)
			label_place(fp, bx, c->xcats[i], ax_map(x, (double)i),
			    H - MB + 14, 0, 0, 'm', 0, W, NULL);
		fputc('\n', fp);
	} else if (x->log) {
		for (double e = x->lo; e <= x->hi + 1e-9; e++) {
			double px = ax_map(x, pow(10, e));

			fprintf(fp, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" "
			    "y1=\"%d\" y2=\"%d\"/>", px, px, MT, H - MB);
			num_human(pow(10, e), c->xunit, t, sizeof(t));
			label_place(fp, bx, t, px, H - MB + 14, 0, 0, 'm', 0, W,
			    NULL);
			fputc('\n', fp);
		}
	} else {
		step = ax_step(x, c->xunit);
		for (v = ceil(x->lo / step) * step; v <= x->hi + step * 1e-9;
		    v += step) {
			double px = ax_map(x, v);

			fprintf(fp, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" "
			    "y1=\"%d\" y2=\"%d\"/>", px, px, MT, H - MB);
			tick_text(fabs(v) < step * 1e-9 ? 0 : v, step, x->hi,
			    c->xunit, t, sizeof(t));
			label_place(fp, bx, t, px, H - MB + 14, 0, 0, 'm', 0, W,
			    NULL);
			fputc('\n', fp);
		}
	}
	fprintf(fp, "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%d\" "
	    "y2=\"%d\"/><line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%d\" "
	    "y2=\"%d\"/>\n", ML, W - MR, H - MB, H - MB, ML, ML, MT, H - MB);
	if (c->xlabel != NULL)
		label_place(fp, bx, c->xlabel, (ML + W - MR) / 2.0, H - 6, 0, 0,
		    'm', 0, W, NULL);
	if (c->ylabel != NULL) {
		/* cut to the width above the plot, so it cannot run off */
		char yl[96];
		size_t fit = (size_t)((W - 8) / CHAR_W);

		snprintf(yl, sizeof(yl), "%s", c->ylabel);
		if (strlen(yl) > fit && fit > 3)
			snprintf(yl + fit - 3, sizeof(yl) - (fit - 3), "...");
		label_place(fp, bx, yl, 4, MT - 12, 0, 0, 's', 0, W, NULL);
	}
}

/* Whether every x (or y) of the chart's series is a whole number. */
static bool
all_whole(const struct page_chart *c, bool ys)
{
	for (size_t s = 0; s < c->nseries; s++)
		for (size_t i = 0; i < c->series[s].n; i++) {
			double v = ys ? c->series[s].y[i] : c->series[s].x[i];

			if (isfinite(v) && v != floor(v))
				return false;
		}
	return c->nseries > 0;
}

/* The legend: a swatch and the label, cut to the margin's width; series
 * beyond the margin's height are summed up in a last line. */
static void
legend(FILE *fp, struct boxes *bx, const struct page_chart *c)
{
	size_t rows = (size_t)((H - MB - MT) / 15), shown = c->nseries;
	size_t fit = (size_t)((MR - 26) / CHAR_W);

	if (shown > rows)
		shown = rows - 1;
	for (size_t s = 0; s < shown; s++) {
		const struct page_series *se = &c->series[s];
		const char *col = colours[(se->hue > 0 ? (size_t)se->hue - 1 :
		    s) % NCOLOURS];
		char lab[64];

		snprintf(lab, sizeof(lab), "%s", se->label);
		if (strlen(lab) > fit && fit > 3)
			snprintf(lab + fit - 3, sizeof(lab) - (fit - 3), "...");
		fprintf(fp, "<rect x=\"%d\" y=\"%zu\" width=\"10\" height=\"10\" "
		    "fill=\"%s\"%s/>", W - MR + 10, MT + s * 15, col, se->band ?
		    " fill-opacity=\".3\"" : "");
		label_place(fp, bx, lab, W - MR + 24, (double)(MT + s * 15 + 9),
		    0, 0, 's', W - MR, W, NULL);
		fputc('\n', fp);
	}
	if (shown < c->nseries) {
		char more[48];

		snprintf(more, sizeof(more), "+%zu more", c->nseries - shown);
		label_place(fp, bx, more, W - MR + 24, (double)(MT + shown * 15 +
		    9), 0, 0, 's', W - MR, W, NULL);
	}
}

void
page_chart(FILE *fp, const struct page_chart *c)
{
	static struct boxes bx;
	struct axis x = { 0 }, y = { 0 };
	double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY,
	    yhi = -INFINITY;
	size_t total = 0;

	W = c->width > 0 ? c->width : 720;
	bx.n = 0;
	x.p0 = ML;
	x.p1 = W - MR;
	y.p0 = H - MB;
	y.p1 = MT;
	for (size_t s = 0; s < c->nseries; s++) {
		const struct page_series *se = &c->series[s];

		for (size_t i = 0; i < se->n; i++) {
			double lo = se->ylo ? se->ylo[i] : se->y[i];
			double hi = se->yhi ? se->yhi[i] : se->y[i];

			if (!isfinite(se->x[i]) || !isfinite(se->y[i]))
				continue;
			if (c->xlog && se->x[i] <= 0)
				continue;
			xlo = fmin(xlo, se->x[i]);
			xhi = fmax(xhi, se->x[i]);
			if (!c->ylog || lo > 0)
				ylo = fmin(ylo, fmin(lo, se->y[i]));
			yhi = fmax(yhi, fmax(hi, se->y[i]));
		}
		total += se->n;
	}
	for (size_t i = 0; i < c->nwindows; i++) {
		xlo = fmin(xlo, c->windows[i].x0);
		xhi = fmax(xhi, c->windows[i].x1);
	}
	for (size_t i = 0; i < c->nmarks; i++)
		if (!c->xlog || c->marks[i].x > 0) {
			xlo = fmin(xlo, c->marks[i].x);
			xhi = fmax(xhi, c->marks[i].x);
		}
	if (c->xcats != NULL) {
		xlo = -0.5;
		xhi = (double)c->ncats - 0.5;
	}
	x.whole = c->xcats == NULL && all_whole(c, false) && xhi - xlo < 50;
	y.whole = c->yunit != NULL && strcmp(c->yunit, "count") == 0 &&
	    all_whole(c, true);
	ax_fit(&x, xlo, xhi, c->xlog, false);
	ax_fit(&y, ylo, yhi, c->ylog, c->yzero);

	fprintf(fp, "<figure class=\"chart\" data-chart=\"");
	page_esc(fp, c->id);
	fprintf(fp, "\" data-points=\"%zu\"><figcaption>", total);
	page_esc(fp, c->title);
	fprintf(fp, "</figcaption>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
	    "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n", W, H, W, H);
	/* the windows' shading first: under everything */
	for (size_t i = 0; i < c->nwindows; i++) {
		const struct page_window *w = &c->windows[i];
		double a = ax_map(&x, w->x0), b = ax_map(&x, w->x1);

		if (b - a < 2)
			b = a + 2;
		fprintf(fp, "<rect class=\"window\" x=\"%.1f\" y=\"%d\" "
		    "width=\"%.1f\" height=\"%d\" data-label=\"", a, MT, b - a,
		    H - MB - MT);
		page_esc(fp, w->label);
		fprintf(fp, "\"><title>");
		page_esc(fp, w->label);
		fputs("</title></rect>\n", fp);
	}
	draw_axes(fp, &bx, c, &x, &y);
	for (size_t s = 0; s < c->nseries; s++) {
		const struct page_series *se = &c->series[s];
		const char *col = colours[(se->hue > 0 ? (size_t)se->hue - 1 :
		    s) % NCOLOURS];
		double py0 = ax_map(&y, y.log ? pow(10, y.lo) : fmax(y.lo, 0));

		if (se->bars) {
			double bw = se->n > 1 ? (W - ML - MR) / (double)se->n *
			    0.8 : 20;

			fprintf(fp, "<g class=\"bars\" data-series=\"");
			page_esc(fp, se->label);
			fprintf(fp, "\" data-n=\"%zu\" fill=\"%s\" "
			    "fill-opacity=\".35\">", se->n, col);
			for (size_t i = 0; i < se->n; i++) {
				double px = ax_map(&x, se->x[i]);
				double py = ax_map(&y, se->y[i]);

				fprintf(fp, "<rect x=\"%.1f\" y=\"%.1f\" width="
				    "\"%.1f\" height=\"%.1f\"/>", px - bw / 2,
				    fmin(py, py0), bw, fabs(py0 - py));
			}
			fputs("</g>\n", fp);
		}
		if (se->band && se->ylo != NULL && se->yhi != NULL) {
			fprintf(fp, "<polygon class=\"band\" data-series=\"");
			page_esc(fp, se->label);
			fprintf(fp, "\" fill=\"%s\" fill-opacity=\".3\" points=\"",
			    col);
			for (size_t i = 0; i < se->n; i++)
				fprintf(fp, "%.1f,%.1f ", ax_map(&x, se->x[i]),
				    ax_map(&y, se->yhi[i]));
			for (size_t i = se->n; i-- > 0;)
				fprintf(fp, "%.1f,%.1f ", ax_map(&x, se->x[i]),
				    ax_map(&y, se->ylo[i]));
			fputs("\"/>\n", fp);
		}
		fprintf(fp, "<polyline class=\"series\" data-series=\"");
		page_esc(fp, se->label);
		fprintf(fp, "\" data-n=\"%zu\"", se->n);
		if (se->role != NULL) {
			fputs(" data-role=\"", fp);
			page_esc(fp, se->role);
			fputc('"', fp);
		}
		/* a band's line is drawn by its median series */
		fprintf(fp, " stroke=\"%s\"%s points=\"", col, se->bars ||
		    se->dots || se->band ? " stroke-opacity=\"0\"" : "");
		for (size_t i = 0; i < se->n; i++) {
			double px = ax_map(&x, se->x[i]), py = ax_map(&y,
			    se->y[i]);

			if (se->steps && i > 0)
				fprintf(fp, "%.1f,%.1f ", px, ax_map(&y,
				    se->y[i - 1]));
			fprintf(fp, "%.1f,%.1f ", px, py);
		}
		fputs("\"/>\n", fp);
		if ((se->n <= 60 || se->dots) && !se->bars && !se->steps &&
		    !se->band) {
			fprintf(fp, "<g fill=\"%s\">", col);
			for (size_t i = 0; i < se->n; i++)
				fprintf(fp, "<circle cx=\"%.1f\" cy=\"%.1f\" "
				    "r=\"%s\"/>", ax_map(&x, se->x[i]),
				    ax_map(&y, se->y[i]), se->dots ? "1.8" :
				    "2.2");
			fputs("</g>\n", fp);
		}
		if (se->ylo != NULL && se->yhi != NULL && !se->band)
			for (size_t i = 0; i < se->n; i++)
				fprintf(fp, "<line class=\"err\" x1=\"%.1f\" "
				    "x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
				    "stroke=\"%s\"/>", ax_map(&x, se->x[i]),
				    ax_map(&x, se->x[i]), ax_map(&y, se->ylo[i]),
				    ax_map(&y, se->yhi[i]), col);
	}
	legend(fp, &bx, c);
	/* the marks' labels beside their line, right of it if they fit */
	for (size_t i = 0; i < c->nmarks; i++) {
		double px = ax_map(&x, c->marks[i].x);
		const char *l = c->marks[i].label;
		bool right = px + 3 + text_w(l) <= W - MR;

		fprintf(fp, "<line class=\"mark\" x1=\"%.1f\" x2=\"%.1f\" "
		    "y1=\"%d\" y2=\"%d\"/>", px, px, MT, H - MB);
		if (!label_place(fp, &bx, l, right ? px + 3 : px - 3, MT + 10,
		    12, H - MB - 4, right ? 's' : 'e', ML, W - MR, NULL))
			fputs("<!-- no room for the label -->", fp);
		fputc('\n', fp);
	}
	/* the windows' labels, each at its window's left edge */
	for (size_t i = 0; i < c->nwindows; i++) {
		const struct page_window *w = &c->windows[i];
		double a = ax_map(&x, w->x0);
		bool right = a + 2 + text_w(w->label) <= W - MR;

		if (label_place(fp, &bx, w->label, right ? a + 2 : a - 2,
		    MT + 10, 11, H - MB - 4, right ? 's' : 'e', ML, W - MR,
		    "wlabel"))
			fputc('\n', fp);
	}
	fputs("</svg></figure>\n", fp);
}
