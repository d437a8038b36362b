/*
 * num.c: exact and human forms of the report's numbers (see num.h).  The
 * exact form tries 1 to 17 significant digits and keeps the first that
 * strtod reads back to the same double, so report.csv and report.json
 * carry every digit and no float noise ("0.039161", never
 * "0.039161000000000001").
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jtext.h"
#include "num.h"

char *
num_exact(double d, char *buf, size_t len)
{
	if (!isfinite(d)) {
		snprintf(buf, len, "null");
		return buf;
	}
	if (d == floor(d) && fabs(d) < 9007199254740992.0) {
		snprintf(buf, len, "%.0f", d == 0 ? 0.0 : d);
		return buf;
	}
	jtext_real(d, buf, len);
	return buf;
}

char *
num_exact_json(const json_t *v, char *buf, size_t len)
{
	if (json_is_integer(v))
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		num_exact(json_real_value(v), buf, len);
	else if (len > 0)
		buf[0] = '\0';
	return buf;
}

/* Three significant digits at most, no trailing zeros: 517, 51.7, 5.17. */
static void
short_num(double d, char *buf, size_t len)
{
	double a = fabs(d);

	if (a == floor(a) && a < 1e15)
		snprintf(buf, len, "%.0f", d);
	else if (a >= 100)
		snprintf(buf, len, "%.0f", d);
	else if (a >= 10)
		snprintf(buf, len, "%.1f", d);
	else if (a >= 0.01)
		snprintf(buf, len, "%.3g", d);
	else
		snprintf(buf, len, "%.2g", d);
}

char *
num_human(double d, const char *unit, char *buf, size_t len)
{
	char n[NUM_BUF];
	const char *u = unit != NULL ? unit : "";
	double a = fabs(d);

	if (!isfinite(d)) {
		snprintf(buf, len, "—");
		return buf;
	}
	if (strcmp(u, "us") == 0) {
		if (a >= 1e6) {
			short_num(d / 1e6, n, sizeof(n));
			snprintf(buf, len, "%s s", n);
		} else if (a >= 1000) {
			short_num(d / 1000, n, sizeof(n));
			snprintf(buf, len, "%s ms", n);
		} else
			snprintf(buf, len, "%.0f us", d);
	} else if (strcmp(u, "ms") == 0) {
		short_num(a >= 1000 ? d / 1000 : d, n, sizeof(n));
		snprintf(buf, len, "%s %s", n, a >= 1000 ? "s" : "ms");
	} else if (strcmp(u, "bytes") == 0 || strcmp(u, "KiB") == 0) {
		double b = strcmp(u, "KiB") == 0 ? d * 1024 : d;

		if (fabs(b) >= 1048576) {
			short_num(b / 1048576, n, sizeof(n));
			snprintf(buf, len, "%s MiB", n);
		} else if (fabs(b) >= 1024) {
			short_num(b / 1024, n, sizeof(n));
			snprintf(buf, len, "%s KiB", n);
		} else
			snprintf(buf, len, "%.0f B", b);
	} else if (strcmp(u, "count") == 0 || strcmp(u, "ratio") == 0 ||
	    u[0] == '\0') {
		if (a == floor(a) && a < 1e15)
			snprintf(buf, len, "%.0f", d);
		else {
			short_num(d, n, sizeof(n));
			snprintf(buf, len, "%s", n);
		}
	} else {
		short_num(d, n, sizeof(n));
		snprintf(buf, len, "%s %s", n, u);
	}
	return buf;
}

int
num_parse_int(const char *s, long long lo, long long hi, long long *out)
{
	char *end;
	long long v;

	if (s == NULL || *s == '\0' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int
num_parse_u64(const char *s, unsigned long long *out)
{
	char *end;
	unsigned long long v;

	if (s == NULL || !isdigit((unsigned char)*s))
		return -1;	/* strtoull would take "-1" as 2^64 - 1 */
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	*out = v;
	return 0;
}

int
num_parse_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	if (s == NULL || *s == '\0' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || *end != '\0' || !isfinite(v) || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

char *
num_expected_int(const char *s, long long lo, long long hi, char *buf,
    size_t len)
{
	snprintf(buf, len, "expected an integer from %lld to %lld, got \"%s\"",
	    lo, hi, s);
	return buf;
}
