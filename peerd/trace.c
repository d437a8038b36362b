/*
 * trace.c: the event ring (see trace.h).  Each event keeps the monotonic
 * and wall time, a static category and a short formatted detail.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "hlc.h"
#include "trace.h"
#include "utf8.h"
#include "xmalloc.h"

struct trace_ev {
	uint64_t	 mono_us;
	uint64_t	 wall_ms;
	const char	*cat;
	char		 detail[TRACE_DETAIL_MAX];
};

static struct trace_ev	*trace_ring;
static size_t		 trace_cap;
static uint64_t		 trace_count;	/* events ever added */

void
trace_init(size_t n)
{
	free(trace_ring);
	trace_cap = n ? n : 1;
	trace_ring = xcalloc(trace_cap, sizeof(*trace_ring));
	trace_count = 0;
}

void
trace_free(void)
{
	free(trace_ring);
	trace_ring = NULL;
	trace_cap = 0;
}

void
trace_add(const char *cat, const char *fmt, ...)
{
	struct trace_ev *ev;
	va_list ap;

	if (trace_ring == NULL)
		return;
	ev = &trace_ring[trace_count % trace_cap];
	ev->mono_us = clock_mono_us();
	ev->wall_ms = hlc_wall_ms();
	ev->cat = cat;
	va_start(ap, fmt);
	vsnprintf(ev->detail, sizeof(ev->detail), fmt, ap);
	va_end(ap);
	/* A detail cut short, or a peer's name, must still be JSON text. */
	utf8_scrub(ev->detail);
	trace_count++;
}

uint64_t
trace_total(void)
{
	return trace_count;
}

static json_t *
trace_ev_json(const struct trace_ev *ev, uint64_t seq)
{
	return json_pack("{s:I, s:I, s:I, s:s, s:s}", "seq", (json_int_t)seq,
	    "mono_us", (json_int_t)ev->mono_us, "wall_ms",
	    (json_int_t)ev->wall_ms, "cat", ev->cat, "detail", ev->detail);
}

json_t *
trace_json(size_t n)
{
	json_t *arr = json_array();
	uint64_t have = trace_count < trace_cap ? trace_count : trace_cap;
	uint64_t first;

	if (n > have)
		n = (size_t)have;
	first = trace_count - n;
	for (uint64_t i = first; i < trace_count; i++)
		json_array_append_new(arr,
		    trace_ev_json(&trace_ring[i % trace_cap], i));
	return arr;
}

int
trace_write(const char *path)
{
	uint64_t have = trace_count < trace_cap ? trace_count : trace_cap;
	char tmp[4096];
	FILE *fp;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((fp = fopen(tmp, "w")) == NULL)
		return -1;
	for (uint64_t i = trace_count - have; i < trace_count; i++) {
		json_t *j = trace_ev_json(&trace_ring[i % trace_cap], i);

		json_dumpf(j, fp, JSON_COMPACT);
		fputc('\n', fp);
		json_decref(j);
	}
	if (fclose(fp) != 0 || rename(tmp, path) != 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}
