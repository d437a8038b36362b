/*
 * html.h: report.html, the page a person looks at first (docs/report.md).
 * Drawn from the bundle's files alone (bundle.h): report.json, run.json,
 * timeline.ndjson, samples.ndjson and each peer's metrics.json, so it can
 * be drawn again for any bundle on disk.
 */
#ifndef HTML_H
#define HTML_H

/* Write DIR/report.html.  0, or -1 when DIR has no readable report.json
 * (said on stderr). */
int	html_write(const char *dir);

#endif
