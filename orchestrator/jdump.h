/*
 * jdump.h: JSON files without float noise.  jansson prints a real with a
 * fixed precision (17 digits: "0.039161000000000001"); jdump writes the
 * same document with every real in its shortest round-trip form (num.h),
 * integral reals as integers, objects' keys sorted, two-space indent.
 */
#ifndef JDUMP_H
#define JDUMP_H

#include <stdio.h>

#include <jansson.h>

/* Write j to fp as above, then a newline.  0, or -1 on a write error. */
int	jdump_fp(const json_t *j, FILE *fp);
/* The same into path (replaced whole).  0 or -1. */
int	jdump_file(const json_t *j, const char *path);

#endif
