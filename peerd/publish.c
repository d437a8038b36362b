/*
 * publish.c: publishing a blob into the content swarm (the publish
 * command): a file, or content generated from a seed, is written to a
 * staging file piece by piece and hashed; the manifest made of the hashes
 * names the blob, the staging file becomes its store, and every linked
 * peer hears our bitfield.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "content.h"
#include "dcbor.h"
#include "fileio.h"
#include "log.h"
#include "manifest.h"
#include "peerd.h"
#include "pstore.h"
#include "publish.h"
#include "rng.h"
#include "sha256.h"
#include "swarm.h"
#include "trace.h"
#include "xmalloc.h"

static uint32_t		 stage_serial;

/* Blob byte k is byte k % 8 of the (k / 8 + 1)-th splitmix64 output. */
static void
gen_fill(uint64_t *st, uint8_t *buf, size_t n)
{
	for (size_t i = 0; i < n; i += 8) {
		uint64_t v = rng_splitmix64(st);

		for (size_t k = 0; k < 8 && i + k < n; k++)
			buf[i + k] = (uint8_t)(v >> (8 * k));
	}
}

/*
 * Write the blob to a staging file piece by piece, hashing each piece and
 * the whole.  From the file at src (fd >= 0) or generated from seed.
 */
static int
publish_stage(const char *stage, int src, uint64_t seed, struct manifest *m,
    uint8_t sha[MANIFEST_HASH_LEN], char *err, size_t errlen)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	uint8_t *buf = xmalloc(m->piece_size);
	unsigned int olen = MANIFEST_HASH_LEN;
	int fd, rc = -1;

	if ((fd = open(stage, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1) {
		snprintf(err, errlen, "%.160s: %s", stage, strerror(errno));
		goto out;
	}
	if (ctx == NULL || EVP_DigestInit_ex(ctx, sha256_md(), NULL) != 1) {
		snprintf(err, errlen, "sha256 init failed");
		goto out;
	}
	for (uint32_t i = 0; i < m->npieces; i++) {
		uint32_t len = manifest_piece_len(m, i);

		if (src >= 0) {
			if (fileio_read_all(src, buf, len) == -1) {
				snprintf(err, errlen, "read: %s", errno ?
				    strerror(errno) : "short file");
				goto out;
			}
		} else
			gen_fill(&seed, buf, len);
		manifest_sha256(buf, len, manifest_hash(m, i));
		if (EVP_DigestUpdate(ctx, buf, len) != 1 ||
		    fileio_write_all(fd, buf, len) == -1) {
			snprintf(err, errlen, "write %.160s: %s", stage,
			    strerror(errno));
			goto out;
		}
	}
	if (EVP_DigestFinal_ex(ctx, sha, &olen) == 1)
		rc = 0;
out:
	if (fd != -1 && close(fd) == -1 && rc == 0) {
		snprintf(err, errlen, "close %.160s: %s", stage,
		    strerror(errno));
		rc = -1;
	}
	if (rc == -1)
		unlink(stage);
	EVP_MD_CTX_free(ctx);
	free(buf);
	return rc;
}

/* Publish a file or generated content: *result the blob, or msg. */
enum swarm_err
publish_blob(const struct publish_req *r, json_t **result, char *msg,
    size_t msglen)
{
	const char *path = r->path;
	int64_t kib = r->piece_kib;
	uint64_t size, seed = r->seed;
	char stage[PATH_MAX + 64], dir[PATH_MAX + 80], err[256];
	enum swarm_err rc = SWARM_OK;
	uint8_t sha[MANIFEST_HASH_LEN], cid[CID_LEN];
	struct manifest m;
	struct dcbor_buf enc;
	struct pstore *ps;
	struct content *c;
	struct stat st;
	int src = -1;

	*result = NULL;
	if ((path == NULL) == !r->have_size)
		return swarm_fail(msg, msglen, SWARM_EARGS, "publish: give "
		    "\"path\", or \"size\" and \"seed\" for generated "
		    "content");
	if (kib < 1 || (uint64_t)kib * 1024 > MANIFEST_PIECE_MAX)
		return swarm_fail(msg, msglen, SWARM_EARGS, "publish: "
		    "\"piece_kib\" %lld is out of range: 1 to %u (4 MiB, so a "
		    "piece fits one frame)", (long long)kib,
		    MANIFEST_PIECE_MAX / 1024);
	if ((uint64_t)kib * 1024 + 1024 > pd->conf.max_frame)
		return swarm_fail(msg, msglen, SWARM_EARGS, "publish: a piece "
		    "of %lld KiB does not fit --max-frame %u", (long long)kib,
		    pd->conf.max_frame);
	if (path != NULL) {
		if ((src = open(path, O_RDONLY | O_CLOEXEC)) == -1 ||
		    fstat(src, &st) == -1 || !S_ISREG(st.st_mode)) {
			rc = swarm_fail(msg, msglen, src == -1 ?
			    SWARM_ENOTFOUND : SWARM_EARGS, "publish: %s: %s",
			    path, src == -1 ? strerror(errno) :
			    "not a regular file");
			if (src != -1)
				close(src);
			return rc;
		}
		size = (uint64_t)st.st_size;
	} else {
		if (r->size < 1)
			return swarm_fail(msg, msglen, SWARM_EARGS, "publish: "
			    "\"size\" must be >= 1");
		size = (uint64_t)r->size;
	}
	if (manifest_init(&m, size, (uint32_t)kib * 1024) == -1) {
		rc = swarm_fail(msg, msglen, SWARM_EARGS, "publish: %llu bytes "
		    "in pieces of %lld KiB: empty, or more than %u pieces",
		    (unsigned long long)size, (long long)kib,
		    MANIFEST_PIECES_MAX);
		if (src != -1)
			close(src);
		return rc;
	}
	snprintf(stage, sizeof(stage), "%s/.stage-%d-%u", content_root(),
	    (int)getpid(), ++stage_serial);
	if (publish_stage(stage, src, seed, &m, sha, err, sizeof(err)) == -1) {
		rc = swarm_fail(msg, msglen, SWARM_EINTERNAL, "publish: %s",
		    err);
		goto out;
	}
	dcbor_buf_init(&enc);
	manifest_encode(&m, &enc);
	manifest_cid(enc.data, enc.len, cid);
	if ((c = content_find(cid)) != NULL) {
		unlink(stage);
		dcbor_buf_free(&enc);
		if (c->state != CS_COMPLETE) {
			rc = swarm_fail(msg, msglen, SWARM_EBUSY, "publish: "
			    "%s is being fetched", c->hex);
			goto out;
		}
		*result = content_json(c, true);
		goto out;
	}
	c = content_new(cid);
	swarm_wake();
	content_dir_of(c, dir, sizeof(dir));
	ps = pstore_adopt(dir, enc.data, enc.len, stage, err, sizeof(err));
	dcbor_buf_free(&enc);
	if (ps == NULL) {
		unlink(stage);
		content_free(c);
		rc = swarm_fail(msg, msglen, SWARM_EINTERNAL, "publish: %s",
		    err);
		goto out;
	}
	content_attach(c, ps);
	c->publisher = true;
	memcpy(c->sha, sha, sizeof(sha));
	c->have_sha = true;
	c->end_us = c->start_us;
	log_info("swarm %.12s: published %llu bytes in %u pieces of %u",
	    c->hex, (unsigned long long)m.size, m.npieces, m.piece_size);
	trace_add("swarm", "%.12s published, %u pieces", c->hex, m.npieces);
	swarm_announce(c, false);
	*result = content_json(c, true);
out:
	if (src != -1)
		close(src);
	manifest_free(&m);
	return rc;
}
