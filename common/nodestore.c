/*
 * nodestore.c: the node store: append-only packs, an index file, and an
 * in-memory table id -> (pack, offset, length, kind) (see nodestore.h for
 * the formats and the rules on open).
 *
 * The table (idset.h) maps an id to its entry's place in a growing array,
 * so the entries stay in pack order.
 */
#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h>

#include "be.h"
#include "fileio.h"
#include "idset.h"
#include "nodestore.h"
#include "pnode.h"
#include "xmalloc.h"

#define PACK_MAGIC	"PDTPACK1"
#define IDX_MAGIC	"PDTIDX01"
#define IDX_NAME	"index"
#define MAX_PACKS	100000

struct ent {
	uint8_t		id[PNODE_ID_LEN];
	uint64_t	off;		/* the record's header in its pack */
	uint32_t	pack;
	uint32_t	len;		/* the node's bytes */
	uint8_t		kind;
};

struct nodestore {
	bool		 null;
	char		*dir;
	int		*packfd;	/* packfd[0..npack) */
	uint64_t	*packsz;
	uint32_t	 npack;
	int		 idxfd;
	int		 dirfd;		/* flocked: one process a store */
	struct ent	*ents;
	size_t		 nents, capents;
	struct idset	 tab;		/* id -> its place in ents */
	struct dcbor_buf scratch;
	struct nodestore_counts c;
};

/* ---- the table ---- */

static struct ent *
tab_find(const struct nodestore *s, const uint8_t *id)
{
	uint32_t i;

	return idset_get(&s->tab, id, &i) ? &s->ents[i] : NULL;
}

/* Add an entry (the caller knows the id is new) and count it. */
static void
ent_add(struct nodestore *s, const struct ent *e)
{
	if (s->nents == s->capents) {
		s->capents = s->capents ? 2 * s->capents : 256;
		s->ents = xreallocarray(s->ents, s->capents, sizeof(*e));
	}
	s->ents[s->nents] = *e;
	idset_add(&s->tab, e->id, (uint32_t)s->nents++);
	s->c.nodes[e->kind]++;
	s->c.bytes[e->kind] += e->len;
	s->c.nodes_total++;
	s->c.bytes_total += e->len;
}

/* ---- records ---- */

static void
idx_rec(uint8_t r[NODESTORE_IDX_REC], const struct ent *e)
{
	memset(r, 0, NODESTORE_IDX_REC);
	memcpy(r, e->id, PNODE_ID_LEN);
	r[32] = e->kind;
	be_put32(r + 36, e->pack);
	be_put64(r + 40, e->off);
	be_put32(r + 48, e->len);
	be_put32(r + 52, XXH32(r, 52, 0));
}

static int
idx_parse(const uint8_t r[NODESTORE_IDX_REC], struct ent *e)
{
	if (be_get32(r + 52) != XXH32(r, 52, 0) || r[33] || r[34] || r[35])
		return -1;
	memcpy(e->id, r, PNODE_ID_LEN);
	e->kind = r[32];
	e->pack = be_get32(r + 36);
	e->off = be_get64(r + 40);
	e->len = be_get32(r + 48);
	if (e->kind <= PNODE_NONE || e->kind >= PNODE_NKINDS ||
	    e->len == 0 || e->len > PNODE_MAX_LEN)
		return -1;
	return 0;
}

static void
rec_hdr(uint8_t h[NODESTORE_REC_HDR], uint32_t len, int kind,
    const uint8_t *id)
{
	be_put32(h, len);
	h[4] = (uint8_t)kind;
	memcpy(h + 5, id, PNODE_ID_LEN);
}

/* ---- open ---- */

static void
set_err(char *err, size_t errlen, const char *what, const char *path)
{
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s %s: %s", what, path,
		    errno ? strerror(errno) : "bad contents");
}

static char *
pack_path(const struct nodestore *s, uint32_t i)
{
	char *p;

	xasprintf(&p, "%s/pack-%08u", s->dir, i);
	return p;
}

/* Open (or create) pack i with its header; -1 with err. */
static int
pack_open(struct nodestore *s, uint32_t i, bool create, char *err,
    size_t errlen)
{
	char *path = pack_path(s, i);
	uint8_t hdr[NODESTORE_PACK_HDR];
	struct stat st;
	int fd;

	fd = open(path, O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0644);
	if (fd == -1 || fstat(fd, &st) == -1) {
		if (fd != -1)
			close(fd);
		if (!create && errno == ENOENT) {
			free(path);
			return 1;
		}
		set_err(err, errlen, "open", path);
		free(path);
		return -1;
	}
	errno = 0;
	if ((uint64_t)st.st_size >= NODESTORE_PACK_HDR) {
		if (pread(fd, hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr) ||
		    memcmp(hdr, PACK_MAGIC, NODESTORE_PACK_HDR) != 0) {
			set_err(err, errlen, "not a pack file:", path);
			close(fd);
			free(path);
			return -1;
		}
	} else if (ftruncate(fd, 0) == -1 ||
	    pwrite(fd, PACK_MAGIC, NODESTORE_PACK_HDR, 0) !=
	    NODESTORE_PACK_HDR) {
		/* A pack torn before its header was whole: start it again. */
		set_err(err, errlen, "write", path);
		close(fd);
		free(path);
		return -1;
	} else {
		s->c.cut_bytes += (uint64_t)st.st_size;
		st.st_size = NODESTORE_PACK_HDR;
	}
	free(path);
	s->packfd = xreallocarray(s->packfd, i + 1, sizeof(*s->packfd));
	s->packsz = xreallocarray(s->packsz, i + 1, sizeof(*s->packsz));
	s->packfd[i] = fd;
	s->packsz[i] = (uint64_t)st.st_size;
	s->npack = i + 1;
	return 0;
}

/* Whether index entry e is the next record at (*pack, *off). */
static bool
idx_next_ok(const struct nodestore *s, const struct ent *e, uint32_t *pack,
    uint64_t *off)
{
	if (e->pack == *pack + 1 && e->pack < s->npack &&
	    *off == s->packsz[*pack]) {
		*pack = e->pack;
		*off = NODESTORE_PACK_HDR;
	}
	if (e->pack != *pack || e->off != *off ||
	    e->off + NODESTORE_REC_HDR + e->len > s->packsz[e->pack] ||
	    tab_find(s, e->id) != NULL)
		return false;
	*off += NODESTORE_REC_HDR + e->len;
	return true;
}

/* Read the index; the position after the last record believed. */
static int
idx_load(struct nodestore *s, uint32_t *pack, uint64_t *off, char *err,
    size_t errlen)
{
	uint8_t r[NODESTORE_IDX_REC];
	char *path;
	uint64_t pos = NODESTORE_IDX_HDR;
	struct ent e;

	xasprintf(&path, "%s/%s", s->dir, IDX_NAME);
	s->idxfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (s->idxfd == -1) {
		set_err(err, errlen, "open", path);
		free(path);
		return -1;
	}
	free(path);
	*pack = 0;
	*off = NODESTORE_PACK_HDR;
	if (pread(s->idxfd, r, NODESTORE_IDX_HDR, 0) == NODESTORE_IDX_HDR &&
	    memcmp(r, IDX_MAGIC, NODESTORE_IDX_HDR) == 0) {
		while (pread(s->idxfd, r, sizeof(r), (off_t)pos) ==
		    (ssize_t)sizeof(r) && idx_parse(r, &e) == 0 &&
		    idx_next_ok(s, &e, pack, off)) {
			ent_add(s, &e);
			pos += sizeof(r);
		}
	} else if (pwrite(s->idxfd, IDX_MAGIC, NODESTORE_IDX_HDR, 0) !=
	    NODESTORE_IDX_HDR) {
		set_err(err, errlen, "write", IDX_NAME);
		return -1;
	}
	if (ftruncate(s->idxfd, (off_t)pos) == -1 ||
	    lseek(s->idxfd, (off_t)pos, SEEK_SET) == -1) {
		set_err(err, errlen, "truncate", IDX_NAME);
		return -1;
	}
	return 0;
}

static int
idx_append(struct nodestore *s, const struct ent *e)
{
	uint8_t r[NODESTORE_IDX_REC];

	idx_rec(r, e);
	return fileio_write_all(s->idxfd, r, sizeof(r));
}

/*
 * Scan pack i from off: index every whole record that hashes to its id;
 * cut the pack at the first that does not.
 */
static int
pack_scan(struct nodestore *s, uint32_t i, uint64_t off)
{
	uint8_t h[NODESTORE_REC_HDR], id[PNODE_ID_LEN];
	int fd = s->packfd[i];
	struct ent e;

	for (;;) {
		uint8_t *body;

		if (off + NODESTORE_REC_HDR > s->packsz[i] ||
		    pread(fd, h, sizeof(h), (off_t)off) != (ssize_t)sizeof(h))
			break;
		e.len = be_get32(h);
		e.kind = h[4];
		if (e.len == 0 || e.len > PNODE_MAX_LEN ||
		    e.kind <= PNODE_NONE || e.kind >= PNODE_NKINDS ||
		    off + NODESTORE_REC_HDR + e.len > s->packsz[i])
			break;
		dcbor_buf_reset(&s->scratch);
		body = dcbor_buf_reserve(&s->scratch, e.len);
		if (pread(fd, body, e.len, (off_t)(off + NODESTORE_REC_HDR)) !=
		    (ssize_t)e.len)
			break;
		pnode_id(body, e.len, id);
		if (memcmp(id, h + 5, PNODE_ID_LEN) != 0 ||
		    tab_find(s, id) != NULL)
			break;
		memcpy(e.id, id, PNODE_ID_LEN);
		e.pack = i;
		e.off = off;
		ent_add(s, &e);
		s->c.reindexed++;
		if (idx_append(s, &e) == -1)
			return -1;
		off += NODESTORE_REC_HDR + e.len;
	}
	if (off < s->packsz[i]) {
		if (ftruncate(fd, (off_t)off) == -1)
			return -1;
		s->c.cut_bytes += s->packsz[i] - off;
		s->packsz[i] = off;
	}
	return 0;
}

struct nodestore *
nodestore_open(const char *dir, char *err, size_t errlen)
{
	struct nodestore *s = xcalloc(1, sizeof(*s));
	uint32_t pack;
	uint64_t off;
	int rc;

	s->idxfd = -1;
	s->dirfd = -1;
	s->dir = xstrdup(dir);
	dcbor_buf_init(&s->scratch);
	errno = 0;
	if (mkdir(dir, 0755) == -1 && errno != EEXIST) {
		set_err(err, errlen, "mkdir", dir);
		goto fail;
	}
	if ((s->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    flock(s->dirfd, LOCK_EX | LOCK_NB) == -1) {
		set_err(err, errlen, errno == EWOULDBLOCK ?
		    "in use by another process: store" : "open", dir);
		goto fail;
	}
	for (uint32_t i = 0; i < MAX_PACKS; i++) {
		if ((rc = pack_open(s, i, i == 0, err, errlen)) == -1)
			goto fail;
		if (rc == 1)
			break;
	}
	if (idx_load(s, &pack, &off, err, errlen) == -1)
		goto fail;
	for (uint32_t i = pack; i < s->npack; i++) {
		if (pack_scan(s, i, i == pack ? off : NODESTORE_PACK_HDR) ==
		    -1) {
			set_err(err, errlen, "reindex", dir);
			goto fail;
		}
	}
	return s;
fail:
	nodestore_close(s);
	return NULL;
}

struct nodestore *
nodestore_null(void)
{
	struct nodestore *s = xcalloc(1, sizeof(*s));

	s->null = true;
	s->idxfd = -1;
	s->dirfd = -1;
	dcbor_buf_init(&s->scratch);
	return s;
}

void
nodestore_close(struct nodestore *s)
{
	if (s == NULL)
		return;
	for (uint32_t i = 0; i < s->npack; i++)
		close(s->packfd[i]);
	if (s->idxfd != -1)
		close(s->idxfd);
	if (s->dirfd != -1)
		close(s->dirfd);	/* and its lock with it */
	free(s->packfd);
	free(s->packsz);
	free(s->ents);
	idset_free(&s->tab);
	free(s->dir);
	dcbor_buf_free(&s->scratch);
	free(s);
}

/* ---- put, get ---- */

int
nodestore_put_id(struct nodestore *s, int kind,
    const uint8_t id[PNODE_ID_LEN], const uint8_t *p, size_t n)
{
	uint8_t *rec;
	struct ent e;
	uint32_t cur;
	int fd;

	if (kind <= PNODE_NONE || kind >= PNODE_NKINDS || n == 0 ||
	    n > PNODE_MAX_LEN) {
		errno = EINVAL;
		return -1;
	}
	s->c.puts++;
	s->c.put_bytes += n;
	if (s->null) {
		s->c.nodes[kind]++;
		s->c.bytes[kind] += n;
		s->c.nodes_total++;
		s->c.bytes_total += n;
		return 1;
	}
	if (tab_find(s, id) != NULL)
		return 0;
	cur = s->npack - 1;
	if (s->packsz[cur] > NODESTORE_PACK_HDR &&
	    s->packsz[cur] + NODESTORE_REC_HDR + n > NODESTORE_PACK_ROLL) {
		if (pack_open(s, s->npack, true, NULL, 0) == -1)
			return -1;
		cur = s->npack - 1;
	}
	fd = s->packfd[cur];
	dcbor_buf_reset(&s->scratch);
	rec = dcbor_buf_reserve(&s->scratch, NODESTORE_REC_HDR + n);
	rec_hdr(rec, (uint32_t)n, kind, id);
	memcpy(rec + NODESTORE_REC_HDR, p, n);
	if (pwrite(fd, rec, NODESTORE_REC_HDR + n, (off_t)s->packsz[cur]) !=
	    (ssize_t)(NODESTORE_REC_HDR + n)) {
		int save = errno ? errno : EIO;

		/* Never leave half a record behind a good one. */
		(void)ftruncate(fd, (off_t)s->packsz[cur]);
		errno = save;
		return -1;
	}
	memcpy(e.id, id, PNODE_ID_LEN);
	e.kind = (uint8_t)kind;
	e.pack = cur;
	e.off = s->packsz[cur];
	e.len = (uint32_t)n;
	s->packsz[cur] += NODESTORE_REC_HDR + n;
	ent_add(s, &e);
	/* A lost index record is found again by the next open's scan. */
	(void)idx_append(s, &e);
	return 1;
}

int
nodestore_put(struct nodestore *s, int kind, const uint8_t *p, size_t n,
    uint8_t id[PNODE_ID_LEN])
{
	pnode_id(p, n, id);
	return nodestore_put_id(s, kind, id, p, n);
}

int
nodestore_get(struct nodestore *s, const uint8_t id[PNODE_ID_LEN],
    struct dcbor_buf *out, int *kind)
{
	const struct ent *e = s->null ? NULL : tab_find(s, id);
	uint8_t h[NODESTORE_REC_HDR], want[NODESTORE_REC_HDR];
	uint8_t got[PNODE_ID_LEN], *body;

	dcbor_buf_reset(out);
	if (e == NULL)
		return 1;
	if (kind != NULL)
		*kind = e->kind;
	rec_hdr(want, e->len, e->kind, e->id);
	body = dcbor_buf_reserve(out, e->len);
	if (pread(s->packfd[e->pack], h, sizeof(h), (off_t)e->off) !=
	    (ssize_t)sizeof(h) || memcmp(h, want, sizeof(h)) != 0 ||
	    pread(s->packfd[e->pack], body, e->len,
	    (off_t)(e->off + NODESTORE_REC_HDR)) != (ssize_t)e->len)
		goto bad;
	pnode_id(body, e->len, got);
	if (memcmp(got, id, PNODE_ID_LEN) != 0)
		goto bad;
	out->len = e->len;
	return 0;
bad:
	errno = EIO;
	return -1;
}

bool
nodestore_has(const struct nodestore *s, const uint8_t id[PNODE_ID_LEN])
{
	return !s->null && tab_find(s, id) != NULL;
}

int
nodestore_stat(const struct nodestore *s, const uint8_t id[PNODE_ID_LEN],
    int *kind, uint32_t *len)
{
	const struct ent *e = s->null ? NULL : tab_find(s, id);

	if (e == NULL)
		return 1;
	if (kind != NULL)
		*kind = e->kind;
	if (len != NULL)
		*len = e->len;
	return 0;
}

void
nodestore_counts(const struct nodestore *s, struct nodestore_counts *c)
{
	*c = s->c;
}

static int
src_get(void *arg, const uint8_t id[PNODE_ID_LEN], struct dcbor_buf *out,
    int *kind)
{
	return nodestore_get(arg, id, out, kind);
}

struct pnode_src
nodestore_src(struct nodestore *s)
{
	struct pnode_src src = { src_get, s };

	return src;
}

uint64_t
nodestore_verify(struct nodestore *s,
    void (*fn)(void *arg, const uint8_t *id, int kind, const char *why),
    void *arg)
{
	struct dcbor_buf b;
	uint64_t bad = 0;

	dcbor_buf_init(&b);
	for (size_t i = 0; i < s->nents; i++) {
		const struct ent *e = &s->ents[i];
		const char *why = NULL;

		if (nodestore_get(s, e->id, &b, NULL) != 0)
			why = "bytes do not hash to the id";
		else if (pnode_check(e->kind, b.data, b.len) == -1)
			why = "not a valid node of its kind";
		if (why == NULL)
			continue;
		bad++;
		if (fn != NULL)
			fn(arg, e->id, e->kind, why);
	}
	dcbor_buf_free(&b);
	return bad;
}
