/*
 * jcbor.h: JSON (jansson) <-> canonical CBOR values.
 *
 * The control socket speaks JSON and the space stores CBOR: entry fields
 * and template operands cross here.  JSON -> CBOR: objects become maps in
 * RFC 8949 canonical key order, integers stay integers, reals take the
 * shortest float form that is exact, strings are text.  An object of
 * exactly one member {"$bytes": "<base64>"} (RFC 4648, padded) becomes a
 * byte string, and CBOR byte strings come back as that same object, so
 * bytes survive a round trip.  Nesting is limited to 64 levels either way.
 *
 * CBOR -> JSON refuses what JSON cannot say: tags, undefined, NaN and the
 * infinities, map keys that are not text, and text that is not UTF-8.
 * Integers outside int64 become JSON reals (the nearest double).
 */
#ifndef JCBOR_H
#define JCBOR_H

#include <stddef.h>

#include <jansson.h>

struct dcbor_buf;
struct dcbor_rd;

#define JCBOR_MAX_DEPTH	64

/*
 * Append v as canonical CBOR.  0, or -1 with a message in err (the buffer
 * is left as it was).
 */
int	 jcbor_from_json(struct dcbor_buf *b, const json_t *v, char *err,
	    size_t errlen);
/*
 * Read one CBOR item as a new JSON value; NULL on error with rd->err set
 * (DCBOR_ETYPE for what JSON cannot hold, DCBOR_EDEPTH, DCBOR_EDUPKEY).
 */
json_t	*jcbor_to_json(struct dcbor_rd *rd);

#endif
