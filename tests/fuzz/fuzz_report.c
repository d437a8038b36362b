/*
 * fuzz_report.c: libFuzzer target for everything that reads a bundle back
 * (orchestrator/bundle.c, html.c, compare.c, sweep.c, jdump.c): a bundle
 * on disk may be cut short, edited by hand or come from another version.
 *
 * The input is up to four parts split by a line "---": report.json,
 * timeline.ndjson, samples.ndjson and peers/0/metrics.json, written into a
 * scratch bundle.  report.html is drawn from it; the report is compared
 * with itself (every row's ratio must then be 1 or null) and swept; and
 * jdump's output must parse back.  Nothing may crash.
 */
#include <sys/stat.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "bundle.h"
#include "compare.h"
#include "html.h"
#include "jdump.h"
#include "sweep.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REQUIRE(c) do { if (!(c)) abort(); } while (0)

static char dir[64];

static void
put(const char *name, const uint8_t *p, size_t n)
{
	char path[256];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((fp = fopen(path, "w")) == NULL)
		abort();
	fwrite(p, 1, n, fp);
	fclose(fp);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const files[] = { "report.json", "timeline.ndjson",
	    "samples.ndjson", "peers/0/metrics.json" };
	const uint8_t *p = data, *end = data + size;
	json_t *rep, *reps, *cmp, *runs, *sw, *r;
	char err[256], path[256];
	size_t i;

	if (dir[0] == '\0') {
		snprintf(dir, sizeof(dir), "/tmp/fuzz_report.XXXXXX");
		if (mkdtemp(dir) == NULL)
			abort();
		snprintf(path, sizeof(path), "%s/peers", dir);
		mkdir(path, 0700);
		snprintf(path, sizeof(path), "%s/peers/0", dir);
		mkdir(path, 0700);
	}
	for (i = 0; i < 4; i++) {
		const uint8_t *cut = p;

		while (cut + 4 <= end && memcmp(cut, "\n---", 4) != 0)
			cut++;
		if (cut + 4 > end)
			cut = end;
		put(files[i], p, (size_t)(cut - p));
		p = cut + 4 <= end ? cut + 4 : end;
	}
	(void)html_write(dir);
	if ((rep = bundle_report(dir, err, sizeof(err))) == NULL)
		return 0;
	reps = json_pack("[O]", rep);
	cmp = compare_build(reps, reps, 20);
	json_array_foreach(json_object_get(cmp, "rows"), i, r) {
		json_t *ratio = json_object_get(r, "ratio");

		REQUIRE(json_is_null(ratio) || json_number_value(ratio) == 1);
		REQUIRE(strcmp(json_string_value(json_object_get(r, "flag")),
		    "") == 0);
	}
	(void)compare_write(cmp, dir);
	runs = json_pack("[{s:i, s:O, s:[]}]", "value", 4, "reports", reps,
	    "runs");
	sw = sweep_build("fuzz", "peers", runs, 1);
	(void)sweep_write(sw, dir);
	{
		char *buf = NULL;
		size_t len = 0;
		FILE *fp = open_memstream(&buf, &len);
		json_t *back;

		REQUIRE(fp != NULL);
		REQUIRE(jdump_fp(rep, fp) == 0);
		fclose(fp);
		back = json_loadb(buf, len, 0, NULL);
		REQUIRE(back != NULL);
		json_decref(back);
		free(buf);
	}
	json_decref(sw);
	json_decref(runs);
	json_decref(cmp);
	json_decref(reps);
	json_decref(rep);
	return 0;
}
