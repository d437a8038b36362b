/*
 * bundle.h: reading a finished run's bundle back (docs/report.md): the
 * report, the timeline and the samples, for report.md's step table,
 * report.html, compare and sweep.  Only the files are read, never the
 * engine's structures, so these work on any bundle on disk.
 */
#ifndef BUNDLE_H
#define BUNDLE_H

#include <jansson.h>

/* Every line of DIR/NAME (NDJSON) that parses as an object, in order; an
 * empty array when the file is missing.  A new reference. */
json_t	*bundle_ndjson(const char *dir, const char *name);
/* DIR/report.json, or NULL with why in err. */
json_t	*bundle_report(const char *dir, char *err, size_t errlen);
/*
 * The steps of a timeline: [{"step", "name", "action", "start_ms",
 * "end_ms" (null if it never ended), "ok"}] in order.  A new reference.
 */
json_t	*bundle_steps(const json_t *timeline);
/*
 * The fault windows of a timeline, for shading charts: [{"label",
 * "start_ms", "end_ms", "peer" (-1: every peer)}].  A kill lasts until
 * the peer is started again, a pause until it is continued, a partition or
 * network fault until it is healed; one still open ends at end_ms.
 */
json_t	*bundle_windows(const json_t *timeline, double end_ms);

#endif
