/*
 * compare.h: `orchestrate compare RUN_A RUN_B` (docs/report.md).  Each
 * side is a run bundle (a directory with report.json) or a directory of
 * them (the repeats of one sweep value): a side's figure is then the
 * median of its runs and its min-max is its own spread.  Per measure and
 * statistic: A, B, B/A and delta %, flagged beyond the threshold (20%)
 * or beyond the runs' own spread, whichever is larger; checks that
 * flipped; the geometric mean of B/A over the measures where lower is
 * better and over those where higher is better (measures.h says which).
 */
#ifndef COMPARE_H
#define COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#define COMPARE_THRESHOLD_PCT	20.0

/*
 * The comparison of side a and side b, each an array of report.json
 * objects (at least one): {"threshold_pct", "a", "b", "rows", "only_a",
 * "only_b", "checks_flipped", "geomean", "worst_regression_pct"}.  A new
 * reference; never NULL.
 */
json_t	*compare_build(const json_t *a, const json_t *b, double threshold_pct);
/* The reports of one side: PATH/report.json, or every PATH/NAME/report.json in
 * name order.  NULL with why in err. */
json_t	*compare_load(const char *path, char *err, size_t errlen);
/* Median, min and max of measure's stat over an array of report.json
 * objects, and how many had it; false when none had it. */
bool	 compare_stat(const json_t *reps, const char *measure, const char *stat,
	    double *med, double *lo, double *hi, size_t *n);
/* Write compare.json, compare.md and compare.html into dir.  0 or -1. */
int	 compare_write(const json_t *cmp, const char *dir);
/* The subcommand: argv[0] is "compare".  Exit status: 0, 1 when a
 * regression exceeds --fail-above, 2 on a usage or input error. */
int	 compare_main(int argc, char **argv);

#endif
