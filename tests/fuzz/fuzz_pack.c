/*
 * fuzz_pack.c: libFuzzer target for the node store's pack and index
 * readers (common/nodestore.c, run on open).
 *
 * Input: a u16 (big-endian) n, then n bytes of index file (0: no index),
 * then the pack file after its 8-byte header.  They are written into a
 * private directory and the store is opened.  Whatever opens must hold
 * only nodes that read back: with no index every node was found by the
 * scan, which checks each against its id, so every get succeeds; with an
 * index, a get may fail (the index is believed until a read) but never
 * crash.  The store must then take a new node and reopen with it.
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dcbor.h"
#include "nodestore.h"
#include "pnode.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REQUIRE(c) do { if (!(c)) abort(); } while (0)

static char dir[64];

static void
put_file(const char *name, const void *a, size_t an, const void *b,
    size_t bn)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	REQUIRE(fd != -1);
	REQUIRE(write(fd, a, an) == (ssize_t)an);
	REQUIRE(bn == 0 || write(fd, b, bn) == (ssize_t)bn);
	close(fd);
}

/* Leave nothing behind when the fuzzer exits. */
static void
cleanup(void)
{
	static const char *const names[] = { "pack-00000000",
	    "pack-00000001", "index" };
	char path[128];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

static void
on_bad(void *arg, const uint8_t *id, int kind, const char *why)
{
	(void)id;
	(void)kind;
	/* Without an index, no node may fail its id. */
	REQUIRE(*(int *)arg || strcmp(why, "bytes do not hash to the id") != 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nodestore *s;
	struct nodestore_counts c;
	uint8_t id[PNODE_ID_LEN];
	char err[256], path[128];
	size_t in;
	int indexed;

	if (size < 2)
		return 0;
	in = (size_t)data[0] << 8 | data[1];
	if (in > size - 2)
		return 0;
	indexed = in > 0;
	if (dir[0] == '\0') {
		struct stat st;

		/* In memory where there is a tmpfs: each input is a store. */
		snprintf(dir, sizeof(dir), "%s/fuzz_pack.%d",
		    stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ?
		    "/dev/shm" : "/tmp", (int)getpid());
		mkdir(dir, 0755);
		atexit(cleanup);
	}
	put_file("pack-00000000", "PDTPACK1", 8, data + 2 + in,
	    size - 2 - in);
	snprintf(path, sizeof(path), "%s/index", dir);
	if (indexed)
		put_file("index", data + 2, in, NULL, 0);
	else
		unlink(path);
	snprintf(path, sizeof(path), "%s/pack-00000001", dir);
	unlink(path);
	if ((s = nodestore_open(dir, err, sizeof(err))) == NULL)
		return 0;
	nodestore_counts(s, &c);
	(void)nodestore_verify(s, on_bad, &indexed);
	REQUIRE(nodestore_put(s, PNODE_C, (const uint8_t *)"fuzz", 4, id) >= 0);
	nodestore_close(s);
	s = nodestore_open(dir, err, sizeof(err));
	REQUIRE(s != NULL && nodestore_has(s, id));
	nodestore_close(s);
	return 0;
}
