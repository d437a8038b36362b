/*
 * sweep.h: `orchestrate sweep SCENARIO --set KEY=V1,V2,... [--repeat K]`
 * (docs/report.md).  One run per value and repeat, each a child
 * orchestrate (this same binary, /proc/self/exe) whose report.json is
 * read back, so a sweep depends on the bundle format alone.  The sweep
 * bundle holds per value the success rate (runs that passed / K), the
 * median and min-max of each measure, and charts of each measure against
 * the parameter: sweep.json, sweep.md, sweep.csv, sweep.html.
 */
#ifndef SWEEP_H
#define SWEEP_H

#include <jansson.h>

/*
 * The summary of the runs of a sweep: runs is [{"value": V, "reports":
 * [report.json, ...], "runs": [{"dir", "exit", "status"}]}] in value order.
 * A new reference.
 */
json_t	*sweep_build(const char *scenario, const char *key, const json_t *runs,
	    int repeat);
/* Write sweep.json, sweep.md, sweep.csv and sweep.html into dir. 0 or -1. */
int	 sweep_write(const json_t *sw, const char *dir);
/* The subcommand: argv[0] is "sweep".  Exit status: 0 every run passed,
 * 1 one failed, 2 one could not complete or a usage error. */
int	 sweep_main(int argc, char **argv);

#endif
