/*
 * compare.h: `orchestrate compare RUN_A RUN_B` (docs/report.md).  Each
 * side is a run bundle (a directory with report.json) or a directory of
 * them (the repeats of one sweep value): a side's figure is then the
 * median of its runs and its min-max is its own spread.  Per measure and
 * statistic: A, B, B/A and delta %; with repeats on both sides a Welch
 * t-test per row, Holm-corrected over the comparison, decides the flag;
 * single runs are flagged beyond the threshold (20%) and the summary says
 * they cannot tell noise; either way a difference below the unit's floor
 * never flags.  Checks that flipped; the geometric mean of B/A over the
 * measures where lower is better and over those where higher is better
 * (measures.h says which).  A different scenario is refused, different
 * parameters are warned of.
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
/* Two-sided p of Welch's t-test between samples a and b; NaN when either
 * has fewer than 2 values. */
double	 compare_welch_p(const double *a, size_t na, const double *b,
	    size_t nb);
/* The least difference that may flag, in unit (0: any). */
double	 compare_floor(const char *unit);
/* How the sides' runs differ: [{"what": "scenario"|"param", "name", "a",
 * "b"}], empty when every run has side a's first scenario and params. */
json_t	*compare_mismatch(const json_t *a, const json_t *b);
/* Write compare.json, compare.md and compare.html into dir.  0 or -1. */
int	 compare_write(const json_t *cmp, const char *dir);
/* The subcommand: argv[0] is "compare".  Exit status: 0, 1 when a
 * regression exceeds --fail-above, 2 on a usage or input error. */
int	 compare_main(int argc, char **argv);

#endif
