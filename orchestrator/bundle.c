/*
 * bundle.c: a finished bundle read back from its files (see bundle.h).
 * A line that does not parse is skipped: a bundle cut short by a crash
 * still gives what it has.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"

json_t *
bundle_ndjson(const char *dir, const char *name)
{
	char path[1100], *line = NULL;
	size_t cap = 0;
	json_t *a = json_array(), *j;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((fp = fopen(path, "r")) == NULL)
		return a;
	while (getline(&line, &cap, fp) != -1) {
		if ((j = json_loads(line, JSON_DECODE_ANY, NULL)) == NULL)
			continue;
		if (json_is_object(j))
			json_array_append(a, j);
		json_decref(j);
	}
	free(line);
	fclose(fp);
	return a;
}

json_t *
bundle_report(const char *dir, char *err, size_t errlen)
{
	char path[1100];
	json_error_t je;
	json_t *j;

	snprintf(path, sizeof(path), "%s/report.json", dir);
	if ((j = json_load_file(path, 0, &je)) == NULL) {
		snprintf(err, errlen, "%s: %s", path, je.text);
		return NULL;
	}
	if (!json_is_object(j) || !json_is_object(json_object_get(j,
	    "measures"))) {
		snprintf(err, errlen, "%s: not a report (no \"measures\" "
		    "object)", path);
		json_decref(j);
		return NULL;
	}
	return j;
}

static const char *
str(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s != NULL ? s : "";
}

json_t *
bundle_steps(const json_t *timeline)
{
	json_t *steps = json_array(), *ev, *st;
	size_t i;

	json_array_foreach(timeline, i, ev) {
		const char *e = str(ev, "event");
		json_t *t = json_object_get(ev, "t_ms");

		if (strcmp(e, "step_start") == 0)
			json_array_append_new(steps, json_pack("{s:O*, s:s, s:s, "
			    "s:O*, s:n, s:n}", "step", json_object_get(ev,
			    "step"), "name", str(ev, "name"), "action", str(ev,
			    "action"), "start_ms", t, "end_ms", "ok"));
		else if (strcmp(e, "step_end") == 0 &&
		    json_array_size(steps) > 0) {
			st = json_array_get(steps, json_array_size(steps) - 1);
			json_object_set(st, "end_ms", t);
			json_object_set(st, "ok", json_object_get(ev, "ok"));
		}
	}
	return steps;
}

/* The open window of peer (or of the partition peer is in) of kind. */
static json_t *
open_window(json_t *open, const char *kind, json_int_t peer)
{
	json_t *w;
	size_t i;

	json_array_foreach(open, i, w) {
		json_t *ps = json_object_get(w, "peers"), *p;
		size_t k;

		if (strcmp(str(w, "kind"), kind) != 0)
			continue;
		json_array_foreach(ps, k, p)
			if (json_integer_value(p) == peer)
				return w;
	}
	return NULL;
}

static void
close_window(json_t *open, json_t *done, json_t *w, double t)
{
	json_t *ps = json_object_get(w, "peers"), *p;
	char label[512];
	size_t i, k;

	snprintf(label, sizeof(label), "%s", str(w, "kind"));
	json_array_foreach(ps, k, p) {
		size_t n = strlen(label);

		snprintf(label + n, sizeof(label) - n, "%sp%lld", k ? "," : " ",
		    (long long)json_integer_value(p));
	}
	json_array_append_new(done, json_pack("{s:s, s:O, s:f, s:I}", "label",
	    label, "start_ms", json_object_get(w, "start_ms"), "end_ms", t,
	    "peer", json_array_size(ps) == 1 ? json_integer_value(
	    json_array_get(ps, 0)) : (json_int_t)-1));
	json_array_foreach(open, i, p)
		if (p == w) {
			json_array_remove(open, i);
			break;
		}
}

/* Open a window of kind for peer at t, joining one of the same kind the
 * same step opened (a partition is one fault event per peer). */
static void
open_add(json_t *open, const char *kind, json_int_t peer, json_t *t,
    json_int_t step)
{
	json_t *w;
	size_t i;

	json_array_foreach(open, i, w)
		if (strcmp(str(w, "kind"), kind) == 0 && json_integer_value(
		    json_object_get(w, "step")) == step) {
			json_array_append_new(json_object_get(w, "peers"),
			    json_integer(peer));
			return;
		}
	json_array_append_new(open, json_pack("{s:s, s:O, s:I, s:[I]}", "kind",
	    kind, "start_ms", t, "step", step, "peers", peer));
}

json_t *
bundle_windows(const json_t *timeline, double end_ms)
{
	json_t *open = json_array(), *done = json_array(), *ev, *w;
	json_int_t step = -1;
	size_t i;

	json_array_foreach(timeline, i, ev) {
		const char *e = str(ev, "event");

		if (strcmp(e, "step_start") == 0)
			step = json_integer_value(json_object_get(ev, "step"));
		json_int_t peer = json_integer_value(json_object_get(ev, "peer"));
		json_t *t = json_object_get(ev, "t_ms");
		double tm = json_number_value(t);

		if (!json_is_number(t) || !json_is_integer(json_object_get(ev,
		    "peer")))
			continue;
		if (strcmp(e, "signal") == 0) {
			const char *sig = str(ev, "signal");

			if (strcmp(sig, "CONT") == 0) {
				if ((w = open_window(open, "pause", peer)) != NULL)
					close_window(open, done, w, tm);
			} else if (strcmp(sig, "STOP") == 0)
				open_add(open, "pause", peer, t, step);
			else if (strcmp(sig, "KILL") == 0)
				open_add(open, "kill", peer, t, step);
			else if (strcmp(sig, "TERM") == 0)
				open_add(open, "stop", peer, t, step);
		} else if (strcmp(e, "peer_started") == 0 || strcmp(e,
		    "crash") == 0) {
			if ((w = open_window(open, "kill", peer)) != NULL ||
			    (w = open_window(open, "stop", peer)) != NULL)
				close_window(open, done, w, tm);
			if (strcmp(e, "crash") == 0)
				open_add(open, "crash", peer, t, step);
		} else if (strcmp(e, "fault") == 0) {
			json_t *args = json_object_get(ev, "args");
			json_t *part = json_object_get(args, "partition");

			if ((w = open_window(open, "partition", peer)) != NULL ||
			    (w = open_window(open, "fault", peer)) != NULL)
				close_window(open, done, w, tm);
			if (json_is_true(json_object_get(args, "clear")))
				continue;
			if (json_is_array(part))
				open_add(open, "partition", peer, t, step);
			else
				open_add(open, "fault", peer, t, step);
		}
	}
	while (json_array_size(open) > 0)
		close_window(open, done, json_array_get(open, 0), end_ms);
	json_decref(open);
	return done;
}
