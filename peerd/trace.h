/*
 * trace.h: a ring of recent events (links, frames by kind, claims, faults,
 * errors) kept in memory, dumped by the control command "trace", by
 * SIGUSR1 and at shutdown to DIR/trace.ndjson.  Cheap enough to stay on.
 */
#ifndef TRACE_H
#define TRACE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define TRACE_DETAIL_MAX	192

/* Make the ring with room for n events (older ones are overwritten). */
void	 trace_init(size_t n);
void	 trace_free(void);
/* Record one event of a static category ("link", "frame", ...). */
void	 trace_add(const char *cat, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* The newest n events, oldest first, as a JSON array. */
json_t	*trace_json(size_t n);
/* Write every event as NDJSON to path. 0 or -1. */
int	 trace_write(const char *path);
/* Events recorded since start (including overwritten ones). */
uint64_t trace_total(void);

#endif
