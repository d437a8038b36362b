/*
 * load.h: workloads that run inside the peer (docs/control.md, load), so a measurement
 * never includes a control-socket round trip per operation.  A write load
 * writes N entries at a rate; a take load runs K workers, each looping
 * take then complete.  The orchestrator starts, polls, stops and collects
 * them through the control command "load".
 */
#ifndef LOAD_H
#define LOAD_H

#include <jansson.h>

/* Handle a "load" request's checked args; the result, or NULL with err. */
json_t	*load_command(json_t *args, char *err, size_t errlen);
/* Stop and free every load. */
void	 load_free_all(void);

#endif
