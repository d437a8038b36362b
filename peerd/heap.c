/*
 * heap.c: the heap's trim, run from the daemon's tick (main.c).
 *
 * A burst of short-lived blocks (the rumor cache's larger rumors, records
 * awaiting compaction, a reconciliation's snapshot) leaves free chunks
 * scattered among long-lived ones; glibc returns only the top of the heap
 * by itself, so without a trim the peer keeps its high-water mark as
 * resident memory (BENCHMARKS.md, issue 13).  A trim (malloc_trim) walks
 * the free chunks and madvises their pages away; the chunks stay counted
 * free, and their pages fault in again when reused.  So it runs only when
 * it can pay:
 *
 * - at most every --trim-ms, at a tick that runs for other work (the heap
 *   wakes nobody), and only at one with no frame received
 *   since the previous tick (the input has stopped: in a burst the pages
 *   given back are faulted in again on the next turn), put off
 *   HEAP_PUT_OFF periods at most (a load that never stops still gets a
 *   trim every HEAP_PUT_OFF periods);
 * - and only when the free bytes inside the heap rose HEAP_TRIM_MIN above
 *   the least seen since the last trim: freed since, so likely still
 *   resident.  Without this an idle peer whose heap held over
 *   HEAP_TRIM_MIN free trimmed every period, for nothing (each trim also
 *   shrank the heap's top, which the next allocation grew again).
 */
#include <string.h>

#include "clock.h"
#include "heap.h"
#include "peerd.h"
#include "stats.h"
#include "xmalloc.h"

static struct heap_trim	 heap;

bool
heap_look_due(struct heap_trim *h, uint64_t now_ms, uint32_t period_ms,
    uint64_t frames_in)
{
	h->quiet = frames_in == h->frames_seen;
	h->frames_seen = frames_in;
	if (period_ms == 0 || now_ms - h->last_ms < period_ms)
		return false;
	if (!h->quiet && now_ms - h->last_ms < (uint64_t)HEAP_PUT_OFF *
	    period_ms)
		return false;
	h->last_ms = now_ms;
	return true;
}

bool
heap_trim_pays(struct heap_trim *h, size_t free_bytes)
{
	if (!h->have_low || free_bytes < h->low) {
		h->low = free_bytes;
		h->have_low = true;
	}
	if (free_bytes - h->low < HEAP_TRIM_MIN)
		return false;
	h->low = free_bytes;	/* still counted free once trimmed */
	return true;
}

/* heap.in_use and heap.free: mallinfo walks the heap, so only when asked. */
static uint64_t
gauge_in_use(void)
{
	size_t in_use, free_bytes;

	xmalloc_heap(&in_use, &free_bytes);
	return in_use;
}

static uint64_t
gauge_free(void)
{
	size_t in_use, free_bytes;

	xmalloc_heap(&in_use, &free_bytes);
	return free_bytes;
}

void
heap_init(void)
{
	memset(&heap, 0, sizeof(heap));
	stats_gauge("heap.in_use", gauge_in_use);
	stats_gauge("heap.free", gauge_free);
}

uint64_t
heap_tick(void)
{
	uint64_t now = clock_mono_ms(), t0;
	size_t in_use, free_bytes;

	if (pd->conf.trim_ms == 0)
		return UINT64_MAX;
	if (!heap_look_due(&heap, now, pd->conf.trim_ms, pd_metrics.frames_in))
		return UINT64_MAX;
	xmalloc_heap(&in_use, &free_bytes);
	if (heap_trim_pays(&heap, free_bytes)) {
		t0 = clock_mono_us();
		xmalloc_trim();
		pd_count(heap_trims);
		pd_count_add(heap_trim_us, clock_mono_us() - t0);
	}
	return UINT64_MAX;
}
