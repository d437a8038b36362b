/*
 * measures.c: look-ups in the one measure table (measures.h).  The engine
 * stores a measure by its row (its unit comes from there); the report,
 * compare and sweep ask it for a measure's unit, which direction is better
 * and what it means, so a new measure is one row there.
 */
#include <string.h>

#include <jansson.h>

#include "measures.h"

static const struct measure_info table[] = {
#define MEASURE_INFO(id, n, lat, unit, better, meaning) \
	{ n, lat, unit, better, meaning },
	MEASURES(MEASURE_INFO)
#undef MEASURE_INFO
};

/* A wait step's measure ("churn.catch_up_ms"): how long that wait took. */
static const struct measure_info wait_row = { NULL, 0, "ms", MEASURE_LOWER,
    "how long a wait step of the scenario took" };
/* counters.NAME: a check's peerd counter, summed over the live peers. */
static const struct measure_info counter_row = { NULL, 0, "count",
    MEASURE_NONE, "a peerd counter summed over the live peers" };

const struct measure_info *
measures_find(const char *name)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (strcmp(table[i].name, name) == 0)
			return &table[i];
	return NULL;
}

const struct measure_info *
measures_row(enum measure_id id)
{
	return &table[id];
}

const struct measure_info *
measures_wait(void)
{
	return &wait_row;
}

const struct measure_info *
measures_counter(void)
{
	return &counter_row;
}

const struct measure_info *
measures_shown(const char *name)
{
	const struct measure_info *mi = measures_find(name);

	return mi != NULL ? mi : &wait_row;
}

const char *
measures_check_unit(const json_t *measures, const json_t *check)
{
	const char *metric = json_string_value(json_object_get(check,
	    "metric"));
	const char *stat = json_string_value(json_object_get(check, "stat"));
	const char *unit;

	if (metric == NULL)
		return "";
	if (stat != NULL && strcmp(stat, "count") == 0)
		return "count";
	unit = json_string_value(json_object_get(json_object_get(measures,
	    metric), "unit"));
	return unit != NULL ? unit : measures_shown(metric)->unit;
}
