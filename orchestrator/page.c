/*
 * page.c: the HTML and SVG of the report pages (see page.h).  Charts are
 * plain SVG with computed coordinates: axes with "nice" ticks (1, 2, 5 x
 * 10^k, or powers of ten on a log axis), shaded windows with their labels,
 * dashed marks, one colour per series and a legend.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "num.h"
#include "page.h"

#define W	720		/* the chart's size in CSS pixels */
#define H	260
#define ML	70		/* margins: left, right, top, bottom */
#define MR	150
#define MT	28
#define MB	40

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
	    "figure.chart{margin:.8em 0;display:inline-block}"
	    "figcaption{font-weight:600;margin-bottom:2px}\n"
	    "svg text{font:11px system-ui,sans-serif;fill:#333}"
	    "svg .grid{stroke:#eee}svg .axis{stroke:#888}"
	    "svg .window{fill:#f4a261;fill-opacity:.18;stroke:#f4a261;"
	    "stroke-opacity:.5}svg .wlabel{fill:#b5651d}"
	    "svg .mark{stroke:#555;stroke-dasharray:4 3}"
	    "svg .series{fill:none;stroke-width:1.6}\n"
	    ".muted{color:#777}\n"
	    "</style></head><body>\n", fp);
}

void
page_end(FILE *fp)
{
	fputs("</body></html>\n", fp);
}

struct axis {
	double	 lo, hi;
	bool	 log;
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
	a->lo = lo;
	a->hi = hi;
}

/* The tick step of a linear axis, about 5 ticks: 1, 2 or 5 x 10^k; for
 * bytes 1, 2 or 5 x 10^k x 1024^j, so the labels read 256 KiB, 2 MiB. */
static double
ax_step(const struct axis *a, const char *unit)
{
	double raw = (a->hi - a->lo) / 5, base = 1, m;

	if (unit != NULL && strcmp(unit, "bytes") == 0)
		while (raw / base >= 1024)
			base *= 1024;
	m = pow(10, floor(log10(raw / base))) * base;
	return raw / m >= 5 ? 5 * m : raw / m >= 2 ? 2 * m : m;
}

static void
tick_label(FILE *fp, double v, const char *unit)
{
	char buf[NUM_BUF];

	page_esc(fp, num_human(v, unit, buf, sizeof(buf)));
}

static void
draw_axes(FILE *fp, const struct page_chart *c, const struct axis *x,
    const struct axis *y)
{
	double v, step;

	/* y ticks and grid */
	if (y->log) {
		for (double e = y->lo; e <= y->hi + 1e-9; e++) {
			double py = ax_map(y, pow(10, e));

			fprintf(fp, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" "
			    "y1=\"%.1f\" y2=\"%.1f\"/><text x=\"%d\" y=\"%.1f\" "
			    "text-anchor=\"end\">", ML, W - MR, py, py, ML - 4,
			    py + 4);
			tick_label(fp, pow(10, e), c->yunit);
			fputs("</text>\n", fp);
		}
	} else {
		step = ax_step(y, c->yunit);
		for (v = ceil(y->lo / step) * step; v <= y->hi + step * 1e-9;
		    v += step) {
			double py = ax_map(y, v);

			fprintf(fp, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" "
			    "y1=\"%.1f\" y2=\"%.1f\"/><text x=\"%d\" y=\"%.1f\" "
			    "text-anchor=\"end\">", ML, W - MR, py, py, ML - 4,
			    py + 4);
			tick_label(fp, fabs(v) < step * 1e-9 ? 0 : v, c->yunit);
			fputs("</text>\n", fp);
		}
	}
	/* x ticks */
	if (c->xcats != NULL) {
		for (size_t i = 0; i < c->ncats; i++) {
			double px = ax_map(x, (double)i);

			fprintf(fp, "<text x=\"%.1f\" y=\"%d\" text-anchor=\""
			    "middle\">", px, H - MB + 14);
			page_esc(fp, c->xcats[i]);
			fputs("</text>\n", fp);
		}
	} else if (x->log) {
		for (double e = x->lo; e <= x->hi + 1e-9; e++) {
			double px = ax_map(x, pow(10, e));

			fprintf(fp, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" "
			    "y1=\"%d\" y2=\"%d\"/><text x=\"%.1f\" y=\"%d\" "
			    "text-anchor=\"middle\">", px, px, MT, H - MB, px,
			    H - MB + 14);
			tick_label(fp, pow(10, e), c->xunit);
			fputs("</text>\n", fp);
		}
	} else {
		step = ax_step(x, c->xunit);
		for (v = ceil(x->lo / step) * step; v <= x->hi + step * 1e-9;
		    v += step) {
			double px = ax_map(x, v);

			fprintf(fp, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" "
			    "y1=\"%d\" y2=\"%d\"/><text x=\"%.1f\" y=\"%d\" "
			    "text-anchor=\"middle\">", px, px, MT, H - MB, px,
			    H - MB + 14);
			tick_label(fp, fabs(v) < step * 1e-9 ? 0 : v, c->xunit);
			fputs("</text>\n", fp);
		}
	}
	fprintf(fp, "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%d\" "
	    "y2=\"%d\"/><line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%d\" "
	    "y2=\"%d\"/>\n", ML, W - MR, H - MB, H - MB, ML, ML, MT, H - MB);
	if (c->xlabel != NULL) {
		fprintf(fp, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">",
		    (ML + W - MR) / 2, H - 6);
		page_esc(fp, c->xlabel);
		fputs("</text>\n", fp);
	}
	if (c->ylabel != NULL) {
		fprintf(fp, "<text x=\"%d\" y=\"%d\">", 4, MT - 12);
		page_esc(fp, c->ylabel);
		fputs("</text>\n", fp);
	}
}

void
page_chart(FILE *fp, const struct page_chart *c)
{
	struct axis x = { .p0 = ML, .p1 = W - MR }, y = { .p0 = H - MB,
	    .p1 = MT };
	double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY,
	    yhi = -INFINITY;
	size_t total = 0;

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
	ax_fit(&x, xlo, xhi, c->xlog, false);
	ax_fit(&y, ylo, yhi, c->ylog, c->yzero);

	fprintf(fp, "<figure class=\"chart\" data-chart=\"");
	page_esc(fp, c->id);
	fprintf(fp, "\" data-points=\"%zu\"><figcaption>", total);
	page_esc(fp, c->title);
	fprintf(fp, "</figcaption>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
	    "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n", W, H, W, H);
	for (size_t i = 0; i < c->nwindows; i++) {
		const struct page_window *w = &c->windows[i];
		double a = ax_map(&x, w->x0), b = ax_map(&x, w->x1);

		if (b - a < 2)
			b = a + 2;
		fprintf(fp, "<g class=\"win\"><rect class=\"window\" x=\"%.1f\" "
		    "y=\"%d\" width=\"%.1f\" height=\"%d\" data-label=\"", a, MT,
		    b - a, H - MB - MT);
		page_esc(fp, w->label);
		fprintf(fp, "\"><title>");
		page_esc(fp, w->label);
		fprintf(fp, "</title></rect><text class=\"wlabel\" x=\"%.1f\" "
		    "y=\"%zu\">", a + 2, (size_t)MT + 10 + (i % 4) * 11);
		page_esc(fp, w->label);
		fputs("</text></g>\n", fp);
	}
	draw_axes(fp, c, &x, &y);
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
		fprintf(fp, "<polyline class=\"series\" data-series=\"");
		page_esc(fp, se->label);
		fprintf(fp, "\" data-n=\"%zu\" stroke=\"%s\"%s points=\"",
		    se->n, col, se->bars ? " stroke-opacity=\"0\"" : "");
		for (size_t i = 0; i < se->n; i++) {
			double px = ax_map(&x, se->x[i]), py = ax_map(&y,
			    se->y[i]);

			if (se->steps && i > 0)
				fprintf(fp, "%.1f,%.1f ", px, ax_map(&y,
				    se->y[i - 1]));
			fprintf(fp, "%.1f,%.1f ", px, py);
		}
		fputs("\"/>\n", fp);
		if (se->n <= 60 && !se->bars && !se->steps)
			for (size_t i = 0; i < se->n; i++)
				fprintf(fp, "<circle cx=\"%.1f\" cy=\"%.1f\" "
				    "r=\"2.2\" fill=\"%s\"/>", ax_map(&x,
				    se->x[i]), ax_map(&y, se->y[i]), col);
		if (se->ylo != NULL && se->yhi != NULL)
			for (size_t i = 0; i < se->n; i++)
				fprintf(fp, "<line class=\"err\" x1=\"%.1f\" "
				    "x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
				    "stroke=\"%s\"/>", ax_map(&x, se->x[i]),
				    ax_map(&x, se->x[i]), ax_map(&y, se->ylo[i]),
				    ax_map(&y, se->yhi[i]), col);
		/* the legend */
		fprintf(fp, "\n<rect x=\"%d\" y=\"%zu\" width=\"10\" height="
		    "\"10\" fill=\"%s\"/><text x=\"%d\" y=\"%zu\">", W - MR + 10,
		    MT + s * 15, col, W - MR + 24, MT + s * 15 + 9);
		page_esc(fp, se->label);
		fputs("</text>\n", fp);
	}
	for (size_t i = 0; i < c->nmarks; i++) {
		double px = ax_map(&x, c->marks[i].x);

		fprintf(fp, "<line class=\"mark\" x1=\"%.1f\" x2=\"%.1f\" "
		    "y1=\"%d\" y2=\"%d\"/><text x=\"%.1f\" y=\"%d\">", px, px,
		    MT, H - MB, px + 3, MT + 10 + (int)i * 12);
		page_esc(fp, c->marks[i].label);
		fputs("</text>\n", fp);
	}
	fputs("</svg></figure>\n", fp);
}
