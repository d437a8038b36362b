/*
 * pstore.c: the file-backed piece store (see pstore.h).  Plain POSIX file
 * calls; the caller (peerd's swarm) runs them inside its event loop, which
 * is acceptable for pread/pwrite on a local file.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <xxhash.h>

#include "be.h"
#include "bit.h"
#include "dcbor.h"
#include "manifest.h"
#include "fileio.h"
#include "pstore.h"
#include "sha256.h"
#include "xmalloc.h"

#define PSTORE_MAGIC		"PSTM"
#define PSTORE_MAP_VERSION	1
#define PSTORE_MAP_HEAD		16	/* magic, version, pad, n, count */

struct pslot {
	uint8_t		*buf;		/* PSTORE_DIRECT_ALIGN-aligned */
	uint32_t	 piece;
	bool		 used;
	bool		 orphan;	/* its store is closed: free on release */
	uint32_t	 refs;		/* holds not yet released */
	uint64_t	 last;		/* tick of the last put or hit */
};

struct pstore {
	char		*dir;
	struct manifest	 m;
	uint8_t		*menc;
	size_t		 mlen;
	int		 fd;		/* the data file */
	int		 dfd;		/* the same, O_DIRECT; -1: buffered */
	struct pslot	**slots;	/* the write cache (direct only) */
	size_t		 nslots;
	uint64_t	 tick;		/* LRU clock */
	uint8_t		*bits;
	size_t		 nbytes;
	uint32_t	 count;
	bool		 dirty;
	bool		 rebuilt;
};

static void
seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static void
path_in(char *out, size_t len, const char *dir, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
}

static int
pread_all(int fd, uint8_t *p, size_t n, uint64_t off)
{
	while (n > 0) {
		ssize_t r = pread(fd, p, n, (off_t)off);

		if (r == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0) {
			memset(p, 0, n);	/* past the end reads as a hole */
			return 0;
		}
		p += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

/* Write a whole file atomically: a temporary beside it, then rename. */
static int
write_atomic(const char *path, const uint8_t *p, size_t n)
{
	char tmp[PATH_MAX];
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1)
		return -1;
	if (fileio_write_all(fd, p, n) == -1) {
		close(fd);
		unlink(tmp);
		return -1;
	}
	if (close(fd) == -1 || rename(tmp, path) == -1) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* Read a whole small file (at most max bytes). NULL on error. */
static uint8_t *
read_file(const char *path, size_t max, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return NULL;
	if (fstat(fd, &st) == -1 || st.st_size < 0 ||
	    (uint64_t)st.st_size > max) {
		close(fd);
		errno = EFBIG;
		return NULL;
	}
	buf = xmalloc((size_t)st.st_size + 1);
	if (pread_all(fd, buf, (size_t)st.st_size, 0) == -1) {
		free(buf);
		close(fd);
		return NULL;
	}
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

/* Read the map file; true if it is whole and for this manifest. */
static bool
map_load(struct pstore *ps)
{
	char path[PATH_MAX];
	uint8_t *buf;
	size_t len, want = PSTORE_MAP_HEAD + ps->nbytes + 8;
	uint32_t count = 0;
	bool ok = false;

	path_in(path, sizeof(path), ps->dir, PSTORE_HAVE);
	if ((buf = read_file(path, want, &len)) == NULL)
		return false;
	if (len == want && memcmp(buf, PSTORE_MAGIC, 4) == 0 &&
	    buf[4] == PSTORE_MAP_VERSION &&
	    be_get32(buf + 8) == ps->m.npieces &&
	    be_get64(buf + want - 8) == XXH64(buf, want - 8, 0)) {
		const uint8_t *bits = buf + PSTORE_MAP_HEAD;

		for (uint32_t i = 0; i < ps->m.npieces; i++)
			count += bit_get(bits, i);
		/* Bits past the last piece must be clear. */
		ok = count == be_get32(buf + 12) && (ps->m.npieces % 8 == 0 ||
		    (bits[ps->nbytes - 1] & (0xffu >> (ps->m.npieces % 8))) == 0);
		if (ok) {
			memcpy(ps->bits, bits, ps->nbytes);
			ps->count = count;
		}
	}
	free(buf);
	return ok;
}

/* True if [off, off + len) of the data file is entirely a hole. */
static bool
is_hole(int fd, uint64_t off, uint32_t len)
{
	off_t d = lseek(fd, (off_t)off, SEEK_DATA);

	if (d == -1)
		return errno == ENXIO;	/* no data at or after off */
	return (uint64_t)d >= off + len;
}

/* Rebuild the map by hashing every piece that is not a hole. */
static int
map_rebuild(struct pstore *ps)
{
	uint8_t *buf = xmalloc(ps->m.piece_size);

	memset(ps->bits, 0, ps->nbytes);
	ps->count = 0;
	for (uint32_t i = 0; i < ps->m.npieces; i++) {
		uint32_t len = manifest_piece_len(&ps->m, i);
		uint64_t off = manifest_piece_off(&ps->m, i);

		if (is_hole(ps->fd, off, len))
			continue;
		if (pread_all(ps->fd, buf, len, off) == -1) {
			free(buf);
			return -1;
		}
		if (manifest_piece_ok(&ps->m, i, buf, len)) {
			bit_set(ps->bits, i);
			ps->count++;
		}
	}
	free(buf);
	ps->rebuilt = true;
	ps->dirty = true;
	return 0;
}

static void
pstore_free(struct pstore *ps)
{
	if (ps->fd != -1)
		close(ps->fd);
	if (ps->dfd != -1)
		close(ps->dfd);
	for (size_t i = 0; i < ps->nslots; i++) {
		struct pslot *s = ps->slots[i];

		if (s->refs > 0) {
			s->orphan = true;	/* the last release frees it */
			continue;
		}
		free(s->buf);
		free(s);
	}
	free(ps->slots);
	manifest_free(&ps->m);
	free(ps->menc);
	free(ps->bits);
	free(ps->dir);
	free(ps);
}

struct pstore *
pstore_open(const char *dir, const uint8_t *menc, size_t mlen, char *err,
    size_t errlen)
{
	char path[PATH_MAX];
	struct pstore *ps;
	struct stat st;
	uint8_t *have;
	size_t hlen;
	bool fresh = false;

	ps = xcalloc(1, sizeof(*ps));
	ps->fd = ps->dfd = -1;
	ps->dir = xstrdup(dir);
	path_in(path, sizeof(path), dir, PSTORE_MANIFEST);
	have = read_file(path, 16u << 20, &hlen);
	if (menc == NULL) {
		if (have == NULL) {
			seterr(err, errlen, "%s: %s", path, strerror(errno));
			goto fail;
		}
		ps->menc = have;
		ps->mlen = hlen;
	} else {
		if (have != NULL && (hlen != mlen ||
		    memcmp(have, menc, mlen) != 0)) {
			free(have);
			seterr(err, errlen, "%s holds another manifest", dir);
			goto fail;
		}
		if (have == NULL) {
			if (mkdir(dir, 0700) == -1 && errno != EEXIST) {
				seterr(err, errlen, "mkdir %s: %s", dir,
				    strerror(errno));
				goto fail;
			}
			if (write_atomic(path, menc, mlen) == -1) {
				seterr(err, errlen, "%s: %s", path,
				    strerror(errno));
				goto fail;
			}
		}
		free(have);
		ps->menc = xmemdup(menc, mlen);
		ps->mlen = mlen;
	}
	if (manifest_decode(ps->menc, ps->mlen, &ps->m) == -1) {
		seterr(err, errlen, "%s: not a valid manifest", path);
		goto fail;
	}
	ps->nbytes = (ps->m.npieces + 7) / 8;
	ps->bits = xcalloc(1, ps->nbytes);

	path_in(path, sizeof(path), dir, PSTORE_DATA);
	if (stat(path, &st) == -1 && errno == ENOENT)
		fresh = true;
	if ((ps->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) == -1) {
		seterr(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	/* Sparse: the blob's size without writing a byte. */
	if (fstat(ps->fd, &st) == -1 || ((uint64_t)st.st_size != ps->m.size &&
	    ftruncate(ps->fd, (off_t)ps->m.size) == -1)) {
		seterr(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (!fresh && !map_load(ps) && map_rebuild(ps) == -1) {
		seterr(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (fresh)
		ps->dirty = true;
	if (pstore_flush(ps) == -1) {
		seterr(err, errlen, "%s/%s: %s", dir, PSTORE_HAVE,
		    strerror(errno));
		goto fail;
	}
	return ps;
fail:
	pstore_free(ps);
	return NULL;
}

struct pstore *
pstore_adopt(const char *dir, const uint8_t *menc, size_t mlen,
    const char *datapath, char *err, size_t errlen)
{
	char path[PATH_MAX], mpath[PATH_MAX];
	struct pstore *ps;

	path_in(mpath, sizeof(mpath), dir, PSTORE_MANIFEST);
	if (access(mpath, F_OK) == 0) {
		/* Already here (published before): keep what is there. */
		if ((ps = pstore_open(dir, menc, mlen, err, errlen)) == NULL)
			return NULL;
		if (pstore_complete(ps)) {
			unlink(datapath);
			return ps;
		}
		pstore_close(ps);
	}
	if (mkdir(dir, 0700) == -1 && errno != EEXIST) {
		seterr(err, errlen, "mkdir %s: %s", dir, strerror(errno));
		return NULL;
	}
	path_in(path, sizeof(path), dir, PSTORE_HAVE);
	unlink(path);			/* the map must be rebuilt */
	path_in(path, sizeof(path), dir, PSTORE_DATA);
	if (rename(datapath, path) == -1) {
		seterr(err, errlen, "rename %s to %s: %s", datapath, path,
		    strerror(errno));
		return NULL;
	}
	return pstore_open(dir, menc, mlen, err, errlen);
}

void
pstore_close(struct pstore *ps)
{
	if (ps == NULL)
		return;
	pstore_flush(ps);
	pstore_free(ps);
}

const struct manifest *
pstore_manifest(const struct pstore *ps)
{
	return &ps->m;
}

const uint8_t *
pstore_manifest_enc(const struct pstore *ps, size_t *len)
{
	*len = ps->mlen;
	return ps->menc;
}

bool
pstore_has(const struct pstore *ps, uint32_t i)
{
	return i < ps->m.npieces && bit_get(ps->bits, i);
}

uint32_t
pstore_count(const struct pstore *ps)
{
	return ps->count;
}

bool
pstore_complete(const struct pstore *ps)
{
	return ps->count == ps->m.npieces;
}

const uint8_t *
pstore_bits(const struct pstore *ps, size_t *len)
{
	*len = ps->nbytes;
	return ps->bits;
}

bool
pstore_rebuilt(const struct pstore *ps)
{
	return ps->rebuilt;
}

int
pstore_direct(struct pstore *ps, size_t cache_bytes)
{
	char path[PATH_MAX];
	size_t n = ps->m.piece_size ? cache_bytes / ps->m.piece_size : 1;

	if (ps->dfd != -1)
		return 0;
	if (ps->slots != NULL || ps->m.piece_size % PSTORE_DIRECT_ALIGN != 0) {
		errno = EINVAL;	/* turned off after a refusal, or unaligned */
		return -1;
	}
	path_in(path, sizeof(path), ps->dir, PSTORE_DATA);
	if ((ps->dfd = open(path, O_RDWR | O_DIRECT | O_CLOEXEC)) == -1)
		return -1;
	ps->nslots = n < 1 ? 1 : n;
	ps->slots = xcalloc(ps->nslots, sizeof(*ps->slots));
	for (size_t k = 0; k < ps->nslots; k++)
		ps->slots[k] = xcalloc(1, sizeof(**ps->slots));
	return 0;
}

bool
pstore_is_direct(const struct pstore *ps)
{
	return ps->dfd != -1;
}

const uint8_t *
pstore_cache_hold(struct pstore *ps, uint32_t i, void **token)
{
	for (size_t k = 0; k < ps->nslots; k++) {
		struct pslot *s = ps->slots[k];

		if (s->used && s->piece == i) {
			s->last = ++ps->tick;
			s->refs++;
			*token = s;
			return s->buf;
		}
	}
	return NULL;
}

void
pstore_cache_release(const void *p, size_t len, void *token)
{
	struct pslot *s = token;

	(void)p;
	(void)len;
	if (s->refs > 0 && --s->refs == 0 && s->orphan) {
		free(s->buf);
		free(s);
	}
}

/*
 * Write verified piece i with O_DIRECT from the least recently used cache
 * slot, which then holds it.  0, or -1 if it is not for this path (the
 * store is buffered, or the piece unaligned) or the write failed (the
 * caller writes it through the page cache then).
 */
static int
put_direct(struct pstore *ps, uint32_t i, const uint8_t *p, size_t len)
{
	uint64_t off = manifest_piece_off(&ps->m, i);
	struct pslot *s = NULL;

	if (ps->dfd == -1 || len % PSTORE_DIRECT_ALIGN != 0 ||
	    off % PSTORE_DIRECT_ALIGN != 0)
		return -1;
	/* An empty slot, else the least recently used one nobody holds. */
	for (size_t k = 0; k < ps->nslots; k++) {
		struct pslot *t = ps->slots[k];

		if (t->refs > 0)
			continue;
		if (s == NULL || !t->used || (s->used && t->last < s->last))
			s = t;
	}
	if (s == NULL)
		return -1;	/* every slot is being sent: not cached */
	if (s->buf == NULL && posix_memalign((void **)&s->buf,
	    PSTORE_DIRECT_ALIGN, ps->m.piece_size) != 0) {
		s->buf = NULL;
		return -1;
	}
	s->used = false;
	memcpy(s->buf, p, len);
	if (fileio_pwrite_all(ps->dfd, s->buf, len, off) == -1) {
		if (errno == EINVAL) {		/* alignment refused: buffered */
			close(ps->dfd);
			ps->dfd = -1;
		}
		return -1;
	}
	s->piece = i;
	s->used = true;
	s->last = ++ps->tick;
	return 0;
}

int
pstore_put(struct pstore *ps, uint32_t i, const uint8_t *p, size_t len)
{
	if (i >= ps->m.npieces)
		return PSTORE_EBAD;
	if (bit_get(ps->bits, i))
		return PSTORE_DUP;
	if (!manifest_piece_ok(&ps->m, i, p, len))
		return PSTORE_EBAD;
	if (put_direct(ps, i, p, len) == -1 && fileio_pwrite_all(ps->fd, p, len,
	    manifest_piece_off(&ps->m, i)) == -1)
		return PSTORE_EIO;
	bit_set(ps->bits, i);
	ps->count++;
	ps->dirty = true;
	return PSTORE_OK;
}

int
pstore_piece_at(const struct pstore *ps, uint32_t i, int *fd, uint64_t *off)
{
	if (!pstore_has(ps, i))
		return -1;
	*fd = ps->fd;
	*off = manifest_piece_off(&ps->m, i);
	return 0;
}

int
pstore_get(struct pstore *ps, uint32_t i, uint8_t *buf)
{
	if (!pstore_has(ps, i))
		return -1;
	return pread_all(ps->fd, buf, manifest_piece_len(&ps->m, i),
	    manifest_piece_off(&ps->m, i));
}

int
pstore_flush(struct pstore *ps)
{
	char path[PATH_MAX];
	size_t len = PSTORE_MAP_HEAD + ps->nbytes + 8;
	uint8_t *buf;
	int rc;

	if (!ps->dirty)
		return 0;
	buf = xcalloc(1, len);
	memcpy(buf, PSTORE_MAGIC, 4);
	buf[4] = PSTORE_MAP_VERSION;
	be_put32(buf + 8, ps->m.npieces);
	be_put32(buf + 12, ps->count);
	memcpy(buf + PSTORE_MAP_HEAD, ps->bits, ps->nbytes);
	be_put64(buf + len - 8, XXH64(buf, len - 8, 0));
	path_in(path, sizeof(path), ps->dir, PSTORE_HAVE);
	rc = write_atomic(path, buf, len);
	free(buf);
	if (rc == 0)
		ps->dirty = false;
	return rc;
}

int
pstore_sha256(struct pstore *ps, uint8_t out[MANIFEST_HASH_LEN])
{
	EVP_MD_CTX *ctx;
	uint8_t *buf;
	size_t chunk = 1u << 20;
	unsigned int olen = MANIFEST_HASH_LEN;
	int rc = -1;

	if ((ctx = EVP_MD_CTX_new()) == NULL)
		return -1;
	buf = xmalloc(chunk);
	if (EVP_DigestInit_ex(ctx, sha256_md(), NULL) != 1)
		goto out;
	for (uint64_t off = 0; off < ps->m.size; off += chunk) {
		size_t n = ps->m.size - off < chunk ? (size_t)(ps->m.size - off) :
		    chunk;

		if (pread_all(ps->fd, buf, n, off) == -1 ||
		    EVP_DigestUpdate(ctx, buf, n) != 1)
			goto out;
	}
	if (EVP_DigestFinal_ex(ctx, out, &olen) == 1)
		rc = 0;
out:
	free(buf);
	EVP_MD_CTX_free(ctx);
	return rc;
}
