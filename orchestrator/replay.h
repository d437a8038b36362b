/*
 * replay.h: orchestrate replay RUN_DIR — the same resolved scenario and
 * seed again (so the same fault timeline), then the first step whose
 * outcome differs from the recorded run.
 */
#ifndef REPLAY_H
#define REPLAY_H

#include <stdint.h>

#include <jansson.h>

struct run;

/* The resolved scenario of a bundle and its seed; NULL with err. */
json_t	*replay_load(const char *run_dir, uint64_t *seed, char *err,
	    size_t errlen);
/* Compare a new run with the bundle's; print the verdict; 0 same, 1 not. */
int	 replay_compare(const char *old_dir, const struct run *r);

#endif
