/*
 * catalog.c: the scenarios by name (see catalog.h).  A bare name is looked
 * for beside the binary: PREFIX/share/fleet-lab/scenarios/ for an
 * installed orchestrate, scenarios/ beside a build/ tree (two depths, for
 * build/ and build/san/).  `list` and `describe` read the same places, so
 * what they show is what a bare name runs.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "catalog.h"
#include "hint.h"
#include "scenario.h"
#include "xmalloc.h"

static const char *const places[] = {
	"%s/../share/fleet-lab/scenarios",
	"%s/../scenarios",
	"%s/../../scenarios",
};
#define NPLACES	(sizeof(places) / sizeof(places[0]))

/* The scenario directories that exist, in order of preference. */
static size_t
catalog_dirs(char dirs[][PATH_MAX])
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	struct stat st;
	size_t k = 0;

	if (n <= 0)
		return 0;
	self[n] = '\0';
	dirname(self);
	for (size_t i = 0; i < NPLACES; i++) {
		char raw[PATH_MAX + 64];

		snprintf(raw, sizeof(raw), places[i], self);
		if (realpath(raw, dirs[k]) != NULL && stat(dirs[k], &st) == 0 &&
		    S_ISDIR(st.st_mode))
			k++;
	}
	return k;
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names (without .json) found, the first directory's winning, sorted;
 * paths[i] is where names[i] is.  Free both with names_free. */
static size_t
names_all(char ***names, char ***paths)
{
	char dirs[NPLACES][PATH_MAX];
	size_t nd = catalog_dirs(dirs), n = 0;

	*names = NULL;
	*paths = NULL;
	for (size_t d = 0; d < nd; d++) {
		DIR *dp = opendir(dirs[d]);
		struct dirent *de;

		while (dp != NULL && (de = readdir(dp)) != NULL) {
			size_t l = strlen(de->d_name);
			bool dup = false;
			char *nm;

			if (l <= 5 || strcmp(de->d_name + l - 5, ".json") != 0)
				continue;
			nm = xstrndup(de->d_name, l - 5);
			for (size_t i = 0; i < n; i++)
				dup |= strcmp((*names)[i], nm) == 0;
			if (dup) {
				free(nm);
				continue;
			}
			*names = xreallocarray(*names, n + 1, sizeof(**names));
			*paths = xreallocarray(*paths, n + 1, sizeof(**paths));
			(*names)[n] = nm;
			xasprintf(&(*paths)[n], "%s/%s", dirs[d], de->d_name);
			n++;
		}
		if (dp != NULL)
			closedir(dp);
	}
	/* sort both by name: pair them up through an index */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && by_name(&(*names)[j - 1],
		    &(*names)[j]) > 0; j--) {
			char *t = (*names)[j];

			(*names)[j] = (*names)[j - 1];
			(*names)[j - 1] = t;
			t = (*paths)[j];
			(*paths)[j] = (*paths)[j - 1];
			(*paths)[j - 1] = t;
		}
	return n;
}

static void
names_free(char **names, char **paths, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(names[i]);
		free(paths[i]);
	}
	free(names);
	free(paths);
}

const char *
catalog_find(const char *arg, char *out, size_t len, char *err,
    size_t errlen)
{
	char **names, **paths, base[NAME_MAX + 1];
	const char *near;
	struct stat st;
	size_t n, l;

	if (stat(arg, &st) == 0 || strchr(arg, '/') != NULL)
		return arg;	/* a file (or a path: its error is the open's) */
	snprintf(base, sizeof(base), "%s", arg);
	l = strlen(base);
	if (l > 5 && strcmp(base + l - 5, ".json") == 0)
		base[l - 5] = '\0';
	n = names_all(&names, &paths);
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], base) == 0) {
			snprintf(out, len, "%s", paths[i]);
			names_free(names, paths, n);
			return out;
		}
	near = hint_closest(base, (const char *const *)names, n);
	if (near != NULL)
		snprintf(err, errlen, "no scenario \"%s\": did you mean \"%s\"? "
		    "(`orchestrate list` shows them all)", arg, near);
	else
		snprintf(err, errlen, "no scenario \"%s\": not a file, nor the "
		    "name of one of the %zu scenarios `orchestrate list` shows",
		    arg, n);
	names_free(names, paths, n);
	return NULL;
}

/* The first sentence of s (to ". " or the end), at most max bytes. */
static void
first_sentence(const char *s, char *buf, size_t max)
{
	const char *end = strstr(s, ". ");
	size_t n = end != NULL ? (size_t)(end - s) : strlen(s);

	if (n >= max) {
		n = max - 4;
		while (n > 0 && s[n] != ' ')
			n--;
		snprintf(buf, max, "%.*s...", (int)n, s);
		return;
	}
	snprintf(buf, max, "%.*s", (int)n, s);
}

int
catalog_list(void)
{
	char **names, **paths, err[512], line[100];
	size_t n = names_all(&names, &paths), w = 4;

	if (n == 0) {
		fprintf(stderr, "orchestrate list: no scenario directory beside "
		    "this binary (share/fleet-lab/scenarios or scenarios/)\n");
		names_free(names, paths, n);
		return 2;
	}
	for (size_t i = 0; i < n; i++)
		if (strlen(names[i]) > w)
			w = strlen(names[i]);
	for (size_t i = 0; i < n; i++) {
		json_t *s = scenario_load(paths[i], NULL, 0, err, sizeof(err));

		if (s == NULL)
			snprintf(line, sizeof(line), "(does not load: %.70s)",
			    err);
		else
			first_sentence(json_string_value(json_object_get(s,
			    "description")), line, sizeof(line));
		printf("%-*s  %s\n", (int)w, names[i], line);
		json_decref(s);
	}
	printf("\n`orchestrate describe NAME` gives a scenario's parameters, "
	    "steps and checks.\n");
	names_free(names, paths, n);
	return 0;
}

/* s wrapped at 78 columns, each line indented by ind spaces. */
static void
wrap(const char *s, int ind)
{
	int col = 0;

	while (*s != '\0') {
		size_t w = strcspn(s, " ");

		if (col > 0 && col + 1 + (int)w > 78) {
			putchar('\n');
			col = 0;
		}
		if (col == 0)
			col = printf("%*s", ind, "");
		else
			col += printf(" ");
		col += printf("%.*s", (int)w, s);
		s += w;
		while (*s == ' ')
			s++;
	}
	if (col > 0)
		putchar('\n');
}

/* A declared parameter's type and range: "int 2..256", "one of a, b". */
static void
param_range(const json_t *d, char *buf, size_t len)
{
	const char *type = json_string_value(json_object_get(d, "type"));
	json_t *lo = json_object_get(d, "min"), *hi = json_object_get(d, "max"),
	    *ch = json_object_get(d, "choices"), *v;
	size_t n, i;

	n = (size_t)snprintf(buf, len, "%s", type != NULL ? type : "?");
	if (json_is_array(ch)) {
		json_array_foreach(ch, i, v)
			if (n < len)
				n += (size_t)snprintf(buf + n, len - n, "%s%s",
				    i ? "|" : " ", json_string_value(v));
		return;
	}
	if (lo != NULL || hi != NULL) {
		char *a = lo ? json_dumps(lo, JSON_ENCODE_ANY) : NULL;
		char *b = hi ? json_dumps(hi, JSON_ENCODE_ANY) : NULL;

		if (n < len)
			snprintf(buf + n, len - n, " %s..%s", a ? a : "",
			    b ? b : "");
		free(a);
		free(b);
	}
}

int
catalog_describe(const char *arg)
{
	char path[PATH_MAX], err[1024], range[200];
	const char *p = catalog_find(arg, path, sizeof(path), err, sizeof(err)),
	    *k;
	json_t *raw, *s, *v, *st;
	size_t i, w = 4;

	if (p == NULL) {
		fprintf(stderr, "orchestrate describe: %s\n", err);
		return 2;
	}
	if ((s = scenario_load(p, NULL, 0, err, sizeof(err))) == NULL) {
		fprintf(stderr, "orchestrate describe: %s\n", err);
		return 2;
	}
	raw = json_load_file(p, 0, NULL);
	printf("%s  (%s)\n", json_string_value(json_object_get(s, "name")), p);
	wrap(json_string_value(json_object_get(s, "description")), 2);
	printf("\nparameters (--set NAME=VALUE):\n");
	json_object_foreach(json_object_get(raw, "params"), k, v)
		if (strlen(k) > w)
			w = strlen(k);
	if (json_object_size(json_object_get(raw, "params")) == 0)
		printf("  none\n");
	json_object_foreach(json_object_get(raw, "params"), k, v) {
		char *def = json_dumps(json_object_get(v, "default"),
		    JSON_ENCODE_ANY);

		param_range(v, range, sizeof(range));
		printf("  %-*s  %-22s default %s\n", (int)w, k, range,
		    def ? def : "(none)");
		if (json_is_string(json_object_get(v, "help")))
			wrap(json_string_value(json_object_get(v, "help")),
			    (int)w + 4);
		free(def);
	}
	printf("\nsteps (with the defaults):\n");
	json_array_foreach(json_object_get(s, "steps"), i, st) {
		json_t *rest = json_deep_copy(st), *x;
		const char *key;
		void *tmp;
		char *txt;

		json_object_del(rest, "name");
		json_object_del(rest, "action");
		json_object_foreach_safe(rest, tmp, key, x)
			if (json_is_null(x))
				json_object_del(rest, key);
		txt = json_dumps(rest, JSON_COMPACT);
		printf("  %2zu %-18s %-9s %s\n", i, json_string_value(
		    json_object_get(st, "name")), json_string_value(
		    json_object_get(st, "action")), txt ? txt : "");
		free(txt);
		json_decref(rest);
	}
	printf("\nchecks:\n");
	if (json_array_size(json_object_get(s, "checks")) == 0)
		printf("  none\n");
	json_array_foreach(json_object_get(s, "checks"), i, st) {
		char *b = json_dumps(json_object_get(st, "bound"),
		    JSON_ENCODE_ANY);
		const char *stat = json_string_value(json_object_get(st,
		    "stat"));

		printf("  %s: %s%s%s %s %s\n", json_string_value(
		    json_object_get(st, "name")), json_string_value(
		    json_object_get(st, "metric")), stat ? " " : "",
		    stat ? stat : "", json_string_value(json_object_get(st,
		    "op")), b ? b : "");
		free(b);
	}
	json_decref(raw);
	json_decref(s);
	return 0;
}
