/*
 * num.h: numbers as the report files print them.  Exact forms (report.csv,
 * report.json through jdump.c): an integral value as an integer, any other
 * the shortest decimal that reads back to the same double.  Human forms
 * (report.md, the HTML pages): microseconds as ms or s, bytes as MiB.
 * And the strict parsing of the programs' numeric flags.
 */
#ifndef NUM_H
#define NUM_H

#include <stddef.h>

#include <jansson.h>

/* Enough for any number num_exact or num_human writes. */
#define NUM_BUF	64

/* d exactly: "2145960", "0.039161", "1e-300"; "nan"/"inf" never occur in
 * JSON, they print as "null".  Returns buf. */
char	*num_exact(double d, char *buf, size_t len);
/* A JSON number exactly (integers as they are); "" for anything else. */
char	*num_exact_json(const json_t *v, char *buf, size_t len);
/* d in unit, for people: "517.1 ms", "2.05 MiB", "57.97 ops/s", "3". */
char	*num_human(double d, const char *unit, char *buf, size_t len);

/*
 * Strict parsing of a flag's number: the whole string, decimal, within
 * lo..hi ("5x", "", "-1" for an unsigned, "1e3" for an integer, "nan" are
 * refused).  0, or -1 with *out untouched.
 */
int	num_parse_int(const char *s, long long lo, long long hi,
	    long long *out);
int	num_parse_u64(const char *s, unsigned long long *out);
int	num_parse_double(const char *s, double lo, double hi, double *out);
/* The error line for a refused flag: "expected an integer from LO to HI,
 * got \"S\"" into buf. */
char	*num_expected_int(const char *s, long long lo, long long hi, char *buf,
	    size_t len);

#endif
