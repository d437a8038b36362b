/*
 * replay.c: run a bundle again and compare outcomes (see replay.h).
 *
 * The outcome of a step is whether it ended ok, in timeline.ndjson's
 * step_end events; then each check's result.  Timing is not compared: the
 * question is whether the same scenario, seed and faults lead to the same
 * behaviour, step by step.
 */
#include <stdio.h>
#include <string.h>

#include "replay.h"
#include "run.h"

json_t *
replay_load(const char *run_dir, uint64_t *seed, char *err, size_t errlen)
{
	char path[700];
	json_error_t jerr;
	json_t *scn;

	snprintf(path, sizeof(path), "%s/scenario.json", run_dir);
	if ((scn = json_load_file(path, 0, &jerr)) == NULL) {
		snprintf(err, errlen, "%s:%d: %s", path, jerr.line, jerr.text);
		return NULL;
	}
	if (!json_is_object(scn) || !json_is_array(json_object_get(scn,
	    "steps")) || !json_is_integer(json_object_get(scn, "seed"))) {
		snprintf(err, errlen, "%s: not a resolved scenario with a seed",
		    path);
		json_decref(scn);
		return NULL;
	}
	*seed = (uint64_t)json_integer_value(json_object_get(scn, "seed"));
	return scn;
}

/* step index -> ok, from a timeline; entries absent for steps never run. */
static json_t *
step_outcomes(const char *dir)
{
	char path[700], line[65536];
	json_t *out = json_object();
	FILE *fp;

	snprintf(path, sizeof(path), "%s/timeline.ndjson", dir);
	if ((fp = fopen(path, "r")) == NULL)
		return out;
	while (fgets(line, sizeof(line), fp) != NULL) {
		json_t *ev = json_loads(line, 0, NULL);
		char key[32];

		if (ev != NULL && strcmp(json_string_value(json_object_get(ev,
		    "event")) ?: "", "step_end") == 0) {
			snprintf(key, sizeof(key), "%lld", (long long)
			    json_integer_value(json_object_get(ev, "step")));
			json_object_set(out, key, json_object_get(ev, "ok"));
		}
		json_decref(ev);
	}
	fclose(fp);
	return out;
}

int
replay_compare(const char *old_dir, const struct run *r)
{
	json_t *was = step_outcomes(old_dir), *now = step_outcomes(r->dir);
	json_t *steps = json_object_get(r->scn, "steps"), *old_rep, *c;
	char path[700], key[32];
	int diverged = 0;
	size_t i;

	json_array_foreach(steps, i, c) {
		json_t *a, *b;

		snprintf(key, sizeof(key), "%zu", i);
		a = json_object_get(was, key);
		b = json_object_get(now, key);
		if ((a == NULL) != (b == NULL) || (a && !json_equal(a, b))) {
			printf("replay: first divergence at step %zu (%s): was %s, "
			    "now %s\n", i, json_string_value(json_object_get(c,
			    "name")), a == NULL ? "not run" : json_is_true(a) ?
			    "ok" : "failed", b == NULL ? "not run" :
			    json_is_true(b) ? "ok" : "failed");
			diverged = 1;
			break;
		}
	}
	snprintf(path, sizeof(path), "%s/report.json", old_dir);
	if (!diverged && (old_rep = json_load_file(path, 0, NULL)) != NULL) {
		json_t *oc = json_object_get(old_rep, "checks");
		size_t j;

		json_array_foreach(r->checks, i, c) {
			json_t *o;

			json_array_foreach(oc, j, o)
				if (json_equal(json_object_get(o, "name"),
				    json_object_get(c, "name")) &&
				    !json_equal(json_object_get(o, "result"),
				    json_object_get(c, "result"))) {
					printf("replay: check \"%s\" was %s, now %s\n",
					    json_string_value(json_object_get(c,
					    "name")), json_string_value(
					    json_object_get(o, "result")),
					    json_string_value(json_object_get(c,
					    "result")));
					diverged = 1;
				}
		}
		json_decref(old_rep);
	}
	if (!diverged)
		printf("replay: no divergence: every step and check as in %s\n",
		    old_dir);
	printf("replay: new run in %s\n", r->dir);
	json_decref(was);
	json_decref(now);
	return diverged;
}
