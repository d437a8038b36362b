/*
 * report.h: the report bundle of a finished run (DESIGN 8): run.json,
 * report.json (the machine-readable contract, docs/report.md),
 * report.md (for people) and report.csv (one row per measure and check).
 */
#ifndef REPORT_H
#define REPORT_H

#include <jansson.h>

struct run;

/* The report.json object of a finished run (a new reference). */
json_t	*report_json(const struct run *r);
/* Write run.json, report.json, report.md and report.csv. 0 or -1. */
int	 report_write(const struct run *r);

#endif
