/*
 * jtext.h: JSON text with every real in its shortest round-trip form.
 * jansson prints a real with 17 significant digits, so 0.020531 goes out
 * as "0.020531000000000001"; this writer prints the fewest digits that
 * read back to the same double ("0.020531"), and an integral real with
 * ".0" so it stays a real ("60.0").  Strings are UTF-8 as they are, with
 * '"', '\' and control characters escaped.  The control socket's replies
 * (peerd) and peerctl's output go through it.
 */
#ifndef JTEXT_H
#define JTEXT_H

#include <stddef.h>

#include <jansson.h>

/* d's shortest round-trip decimal ("%.Ng", N from 1 to 17, without an
 * exponent from 1e-4 to 1e16, as Python's repr) into buf; "null" for a
 * NaN or an infinity.  Returns buf. */
char	*jtext_real(double d, char *buf, size_t len);
/* j as JSON text: compact when indent is 0, else indent spaces a level
 * with objects' keys in their order.  A NUL-terminated string to free(). */
char	*jtext_dumps(const json_t *j, int indent);

#endif
