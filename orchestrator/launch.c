/*
 * launch.c: the table of launchers (see launch.h), the "local" backend's
 * operations, and the check that refuses a scenario asking a backend for
 * what it cannot do, before anything starts.
 */
#include <stdio.h>
#include <string.h>

#include "fleet.h"
#include "launch.h"

static void
local_endpoint(struct fleet *f, const struct peer *p, char *buf, size_t len)
{
	(void)f;
	(void)p;
	snprintf(buf, len, "127.0.0.1:0");
}

static int
local_spawn(struct fleet *f, struct peer *p, char *err, size_t len)
{
	return fleet_exec(f, p, -1, err, len);
}

/* The backends: one row each. */
static const struct launcher launchers[] = {
	{ "local", LAUNCH_KEEP | LAUNCH_WRAP,
	    "fork/exec on 127.0.0.1; faults in peerd's own filter",
	    NULL, local_endpoint, local_spawn, NULL, NULL },
	{ "netns", LAUNCH_NET_PARTITION | LAUNCH_NET_DROP | LAUNCH_WRAP,
	    "root: a network namespace per peer on a bridge; partition and "
	    "drop by nft in the kernel (no delay: no netem)",
	    netns_prepare, netns_endpoint, netns_spawn, netns_fault,
	    netns_teardown },
};

const struct launcher *
launch_find(const char *name)
{
	for (size_t i = 0; i < sizeof(launchers) / sizeof(launchers[0]); i++)
		if (strcmp(launchers[i].name, name) == 0)
			return &launchers[i];
	return NULL;
}

const struct launcher *
launch_default(void)
{
	return &launchers[0];
}

void
launch_list(void *fp)
{
	for (size_t i = 0; i < sizeof(launchers) / sizeof(launchers[0]); i++)
		fprintf(fp, "                       %-6s %s\n", launchers[i].name,
		    launchers[i].about);
}

const char *
launch_fault_layer(const struct launcher *l, const char *layer)
{
	if (layer != NULL)
		return layer;
	return l->net_fault != NULL ? "net" : "peer";
}

/* The want of a fault step at the net layer l lacks, or NULL. */
static const char *
fault_lack(const struct launcher *l, json_t *step)
{
	double drop = json_number_value(json_object_get(step, "drop"));

	if (l->net_fault == NULL)
		return "a network layer";
	if (json_object_get(step, "partition") != NULL)
		return l->caps & LAUNCH_NET_PARTITION ? NULL :
		    "partitions in the kernel";
	if (json_object_get(step, "clear") != NULL)
		return NULL;
	if (json_integer_value(json_object_get(step, "delay_ms")) > 0 ||
	    json_integer_value(json_object_get(step, "jitter_ms")) > 0)
		return l->caps & LAUNCH_NET_DELAY ? NULL :
		    "network delay (netem, which this kernel lacks: never "
		    "faked)";
	if (drop > 0 && !(l->caps & LAUNCH_NET_DROP))
		return "loss in the kernel";
	return NULL;
}

int
launch_check(const struct launcher *l, json_t *scn, bool keep, bool wrap,
    char *err, size_t len)
{
	json_t *step;
	size_t i;

	if (keep && !(l->caps & LAUNCH_KEEP)) {
		snprintf(err, len, "--keep: the %s launcher cannot leave a "
		    "fleet up (it removes what it made at the end)", l->name);
		return -1;
	}
	if (wrap && !(l->caps & LAUNCH_WRAP)) {
		snprintf(err, len, "--wrap/--hold: the %s launcher has no "
		    "command prefix", l->name);
		return -1;
	}
	json_array_foreach(json_object_get(scn, "steps"), i, step) {
		const char *action = json_string_value(json_object_get(step,
		    "action")), *layer, *lack;

		if (action == NULL || strcmp(action, "fault") != 0)
			continue;
		layer = launch_fault_layer(l, json_string_value(
		    json_object_get(step, "layer")));
		if (strcmp(layer, "net") != 0 ||
		    (lack = fault_lack(l, step)) == NULL)
			continue;
		snprintf(err, len, "steps[%zu] (%s): a fault at layer \"net\" "
		    "needs %s, which the %s launcher does not have; use "
		    "\"layer\": \"peer\" for peerd's own filter", i,
		    json_string_value(json_object_get(step, "name")), lack,
		    l->name);
		return -1;
	}
	return 0;
}
