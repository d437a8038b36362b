/*
 * report.h: the report bundle of a finished run (docs/report.md): run.json,
 * report.json (the machine-readable contract, docs/report.md),
 * report.md (for people), report.csv (one row per measure and statistic,
 * exact values, runs concatenate) and report.html (html.h).
 */
#ifndef REPORT_H
#define REPORT_H

#include <jansson.h>

struct run;

/* The report.json object of a finished run (a new reference). */
json_t	*report_json(const struct run *r);
/* {"version", "git", "libraries": {name: version read at run time}}. */
json_t	*report_build_json(void);
/* Write run.json, report.json, report.md, report.csv, report.html.
 * 0 or -1. */
int	 report_write(const struct run *r);

#endif
