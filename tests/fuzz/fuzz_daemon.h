/*
 * fuzz_daemon.h: what a libFuzzer target that drives the daemon's modules
 * needs of peerd/main.c, and the seed writer the targets share.  Include
 * it from the one source file of a target (it defines functions).
 */
#ifndef FUZZ_DAEMON_H
#define FUZZ_DAEMON_H

#include <stdint.h>
#include <stdio.h>

#include "clock.h"
#include "dcbor.h"
#include "log.h"
#include "peerd.h"
#include "trace.h"

/* peerd_shutdown only marks the daemon stopping: the input goes on. */
void
peerd_shutdown(const char *why)
{
	if (pd->stopping)
		return;
	pd->stopping = true;
	trace_add("peer", "shutdown: %s", why);
}

uint64_t
peerd_uptime_us(void)
{
	return clock_mono_us() - pd->start_us;
}

/* Write a seed file DIR/NAME: the byte b0, then body. */
static void
fuzz_seed_write(const char *dir, const char *name, uint8_t b0,
    const struct dcbor_buf *body)
{
	char path[4096];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((fp = fopen(path, "wb")) == NULL)
		fatal("seed %s", path);
	fputc(b0, fp);
	fwrite(body->data, 1, body->len, fp);
	if (fclose(fp) != 0)
		fatal("seed %s", path);
}

#endif
