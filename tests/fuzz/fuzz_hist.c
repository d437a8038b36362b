/*
 * fuzz_hist.c: libFuzzer target for hist_from_json, which reads the
 * histograms peers send the orchestrator over their control sockets.
 *
 * Any bytes: parse as JSON, feed hist_from_json; it must not crash.  When
 * it accepts, the histogram must be self-consistent: written out and read
 * again it gives the same JSON, and every percentile lies in [min, max].
 */
#include <stdint.h>
#include <stdlib.h>

#include <jansson.h>

#include "hist.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REQUIRE(c) do { if (!(c)) abort(); } while (0)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct hist h, again;
	static const double pcts[] = { 0, 1, 50, 90, 99, 99.9, 100 };
	json_t *j, *out, *out2;

	j = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
	if (j == NULL)
		return 0;
	if (hist_from_json(&h, j) == 0) {
		out = hist_to_json(&h);
		REQUIRE(hist_from_json(&again, out) == 0);
		out2 = hist_to_json(&again);
		REQUIRE(json_equal(out, out2));
		for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++) {
			uint64_t v = hist_percentile(&h, pcts[i]);

			REQUIRE(v >= hist_min(&h) && v <= hist_max(&h));
		}
		json_decref(out);
		json_decref(out2);
	}
	json_decref(j);
	return 0;
}
