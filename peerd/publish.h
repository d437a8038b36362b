/*
 * publish.h: publishing a blob into the content swarm (publish.c).
 */
#ifndef PUBLISH_H
#define PUBLISH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "swarm.h"

struct publish_req {
	const char	*path;		/* a file, or NULL: generated content */
	bool		 have_size;	/* generated: size bytes from seed */
	int64_t		 size;
	uint64_t	 seed;
	int64_t		 piece_kib;
};

/* Publish a file or generated content: *result the blob, or msg. */
enum swarm_err	 publish_blob(const struct publish_req *r, json_t **result,
		    char *msg, size_t msglen);

#endif
