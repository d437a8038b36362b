/*
 * identity.c: a peer's Ed25519 identity on OpenSSL 3 EVP (see identity.h).
 *
 * Signing and verifying sit on the hot path of every frame, so the costs
 * that are not the curve arithmetic are kept out of it.  An EVP_MD_CTX that
 * was initialised with a key is re-armed with EVP_DigestSignInit(ctx, NULL,
 * NULL, NULL, NULL), which keeps the provider context instead of fetching
 * and building a new one.  Signing keeps one such context for the last
 * signing key; verifying keeps one per sender in a small direct-mapped
 * cache keyed by XXH3 of the raw public key, beside the parsed key.
 *
 * OpenSSL 3.0 pitfall: passing a *different* key to the Init call of a
 * context that already has one silently keeps the old key, so a context is
 * reset before it is pointed at another key, never just re-initialised.
 *
 * This state is per process and not locked: a peer runs one event loop.
 */
#include <sys/stat.h>

#include <errno.h>
#include <time.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <xxhash.h>

#include "base58.h"
#include "fileio.h"
#include "identity.h"
#include "log.h"
#include "sha256.h"

#define VCACHE_SIZE	512		/* a power of two */

struct vcache_ent {
	uint8_t		 pub[IDENTITY_PUB_LEN];
	EVP_PKEY	*pkey;
	EVP_MD_CTX	*ctx;		/* initialised with pkey */
};

static struct vcache_ent	 vcache[VCACHE_SIZE];
static EVP_MD_CTX		*sign_ctx;
static const void		*sign_pkey;	/* the key sign_ctx holds */

/*
 * What verifying costs here, measured where it happens: every
 * IDENTITY_TIME_EVERY-th verification is timed in this thread's CPU time
 * (a clock read is a system call of about half a microsecond, so timing
 * them all would cost 1% of a verify).
 */
#define IDENTITY_TIME_EVERY	8
static struct identity_cost	 vcost;

/* Fill everything in ident that follows from its key; takes pkey. */
static int
identity_fill(struct identity *ident, EVP_PKEY *pkey)
{
	size_t publen = IDENTITY_PUB_LEN;

	memset(ident, 0, sizeof(*ident));
	if (EVP_PKEY_get_id(pkey) != EVP_PKEY_ED25519 ||
	    EVP_PKEY_get_raw_public_key(pkey, ident->pub, &publen) != 1 ||
	    publen != IDENTITY_PUB_LEN) {
		EVP_PKEY_free(pkey);
		ERR_clear_error();
		return -1;
	}
	ident->pkey = pkey;
	identity_id_of(ident->pub, ident->id);
	identity_peer_id_of(ident->id, ident->peer_id);
	ident->node = identity_node_of(ident->id);
	return 0;
}

int
identity_generate(struct identity *ident)
{
	EVP_PKEY *pkey;

	if ((pkey = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519")) == NULL) {
		ERR_clear_error();
		return -1;
	}
	return identity_fill(ident, pkey);
}

int
identity_from_seed(struct identity *ident,
    const uint8_t seed[IDENTITY_SEED_LEN])
{
	EVP_PKEY *pkey;

	pkey = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed,
	    IDENTITY_SEED_LEN);
	if (pkey == NULL) {
		ERR_clear_error();
		return -1;
	}
	return identity_fill(ident, pkey);
}

/*
 * Write the key to a fresh 0600 temp file beside path, then move it into
 * place: rename() replaces, link() (replace false) refuses an existing
 * path with EEXIST, so two creators never end up with different keys.
 */
static int
identity_write(const struct identity *ident, const char *path, bool replace)
{
	static unsigned int seq;
	char tmp[4096];
	BIO *bio = NULL;
	char *pem = NULL;
	long pemlen = 0;
	int fd = -1, saved, n;

	if (ident->pkey == NULL) {
		errno = EINVAL;
		return -1;
	}
	n = snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.%u", path, (long)getpid(),
	    seq++);
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((bio = BIO_new(BIO_s_mem())) == NULL ||
	    PEM_write_bio_PKCS8PrivateKey(bio, ident->pkey, NULL, NULL, 0,
	    NULL, NULL) != 1 ||
	    (pemlen = BIO_get_mem_data(bio, &pem)) <= 0) {
		ERR_clear_error();
		BIO_free(bio);
		errno = EIO;
		return -1;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd == -1)
		goto fail;
	if (fchmod(fd, 0600) == -1 ||
	    fileio_write_all(fd, pem, (size_t)pemlen) == -1 ||
	    fsync(fd) == -1)
		goto fail;
	if (close(fd) == -1) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (replace ? rename(tmp, path) == -1 : link(tmp, path) == -1)
		goto fail;
	if (!replace)
		unlink(tmp);
	OPENSSL_cleanse(pem, (size_t)pemlen);
	BIO_free(bio);
	return 0;
fail:
	saved = errno;
	if (fd != -1)
		close(fd);
	unlink(tmp);
	OPENSSL_cleanse(pem, (size_t)pemlen);
	BIO_free(bio);
	errno = saved;
	return -1;
}

int
identity_save(const struct identity *ident, const char *path)
{
	return identity_write(ident, path, true);
}

int
identity_load(struct identity *ident, const char *path)
{
	struct stat st;
	EVP_PKEY *pkey;
	FILE *fp;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	if (fstat(fd, &st) == 0 && (st.st_mode & 077) != 0)
		log_warnx("%s: key file is readable by others (mode %03o)",
		    path, (unsigned int)(st.st_mode & 0777));
	if ((fp = fdopen(fd, "r")) == NULL) {
		close(fd);
		return -1;
	}
	pkey = PEM_read_PrivateKey(fp, NULL, NULL, NULL);
	fclose(fp);
	if (pkey == NULL) {
		ERR_clear_error();
		errno = EINVAL;
		return -1;
	}
	if (identity_fill(ident, pkey) == -1) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int
identity_load_or_create(struct identity *ident, const char *dir,
    bool *created)
{
	char path[4096];
	int n;

	if (created != NULL)
		*created = false;
	n = snprintf(path, sizeof(path), "%s/%s", dir, IDENTITY_KEY_FILE);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (identity_load(ident, path) == 0)
		return 0;
	if (errno != ENOENT)
		return -1;
	if (identity_generate(ident) == -1)
		return -1;
	if (identity_write(ident, path, false) == -1) {
		int saved = errno;

		identity_free(ident);
		/* Another process created it first: use that key. */
		if (saved == EEXIST)
			return identity_load(ident, path);
		errno = saved;
		return -1;
	}
	if (created != NULL)
		*created = true;
	return 0;
}

void
identity_free(struct identity *ident)
{
	if (ident->pkey != NULL && ident->pkey == sign_pkey) {
		EVP_MD_CTX_reset(sign_ctx);
		sign_pkey = NULL;
	}
	EVP_PKEY_free(ident->pkey);
	memset(ident, 0, sizeof(*ident));
}

int
identity_sign(const struct identity *ident, const void *msg, size_t len,
    uint8_t sig[IDENTITY_SIG_LEN])
{
	size_t siglen = IDENTITY_SIG_LEN;
	EVP_PKEY *rekey = NULL;

	if (ident->pkey == NULL)
		return -1;
	if (sign_ctx == NULL && (sign_ctx = EVP_MD_CTX_new()) == NULL)
		return -1;
	if (ident->pkey != sign_pkey) {
		/* sign_ctx's reference keeps the old key's address taken. */
		EVP_MD_CTX_reset(sign_ctx);
		sign_pkey = NULL;
		rekey = ident->pkey;
	}
	if (msg == NULL)
		msg = "";
	if (EVP_DigestSignInit(sign_ctx, NULL, NULL, NULL, rekey) != 1)
		goto fail;
	sign_pkey = ident->pkey;
	if (EVP_DigestSign(sign_ctx, sig, &siglen, msg, len) != 1 ||
	    siglen != IDENTITY_SIG_LEN)
		goto fail;
	return 0;
fail:
	EVP_MD_CTX_reset(sign_ctx);
	sign_pkey = NULL;
	ERR_clear_error();
	return -1;
}

/* The cache slot for pub, holding its parsed key and an armed context. */
static struct vcache_ent *
vcache_get(const uint8_t pub[IDENTITY_PUB_LEN])
{
	struct vcache_ent *e;
	EVP_PKEY *pkey;

	e = &vcache[XXH3_64bits(pub, IDENTITY_PUB_LEN) & (VCACHE_SIZE - 1)];
	if (e->pkey != NULL && memcmp(e->pub, pub, IDENTITY_PUB_LEN) == 0)
		return e;
	pkey = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pub,
	    IDENTITY_PUB_LEN);
	if (pkey == NULL)
		goto fail;
	if (e->ctx == NULL && (e->ctx = EVP_MD_CTX_new()) == NULL)
		goto fail;
	EVP_MD_CTX_reset(e->ctx);
	EVP_PKEY_free(e->pkey);
	e->pkey = NULL;
	if (EVP_DigestVerifyInit(e->ctx, NULL, NULL, NULL, pkey) != 1) {
		EVP_MD_CTX_reset(e->ctx);
		goto fail;
	}
	e->pkey = pkey;
	memcpy(e->pub, pub, IDENTITY_PUB_LEN);
	return e;
fail:
	EVP_PKEY_free(pkey);
	ERR_clear_error();
	return NULL;
}

static int	verify_once(const uint8_t *, const void *, size_t,
		    const uint8_t *);

static uint64_t
thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int
identity_verify(const uint8_t pub[IDENTITY_PUB_LEN], const void *msg,
    size_t len, const uint8_t sig[IDENTITY_SIG_LEN])
{
	uint64_t t0;
	int rc;

	if (vcost.verifies++ % IDENTITY_TIME_EVERY != 0)
		return verify_once(pub, msg, len, sig);
	t0 = thread_cpu_ns();
	rc = verify_once(pub, msg, len, sig);
	vcost.timed++;
	vcost.timed_ns += thread_cpu_ns() - t0;
	return rc;
}

void
identity_verify_cost(struct identity_cost *out)
{
	*out = vcost;
}

static int
verify_once(const uint8_t *pub, const void *msg, size_t len,
    const uint8_t *sig)
{
	struct vcache_ent *e;

	if ((e = vcache_get(pub)) == NULL)
		return -1;
	if (msg == NULL)
		msg = "";
	if (EVP_DigestVerifyInit(e->ctx, NULL, NULL, NULL, NULL) != 1 ||
	    EVP_DigestVerify(e->ctx, sig, IDENTITY_SIG_LEN, msg, len) != 1) {
		ERR_clear_error();
		return -1;
	}
	return 0;
}

void
identity_cache_clear(void)
{
	for (size_t i = 0; i < VCACHE_SIZE; i++) {
		EVP_MD_CTX_free(vcache[i].ctx);
		EVP_PKEY_free(vcache[i].pkey);
		vcache[i].ctx = NULL;
		vcache[i].pkey = NULL;
	}
	EVP_MD_CTX_free(sign_ctx);
	sha256_free();
	sign_ctx = NULL;
	sign_pkey = NULL;
}

void
identity_id_of(const uint8_t pub[IDENTITY_PUB_LEN],
    uint8_t id[IDENTITY_ID_LEN])
{
	_Static_assert(IDENTITY_ID_LEN == SHA256_LEN, "a peer id is SHA-256");
	sha256_digest(pub, IDENTITY_PUB_LEN, id);
}

void
identity_peer_id_of(const uint8_t id[IDENTITY_ID_LEN],
    char out[IDENTITY_PEERID_MAX])
{
	out[0] = 'z';
	base58_encode(id, IDENTITY_ID_LEN, out + 1, IDENTITY_PEERID_MAX - 1);
}

int
identity_peer_id_parse(const char *text, uint8_t id[IDENTITY_ID_LEN])
{
	uint8_t buf[IDENTITY_ID_LEN];
	size_t n;

	if (text[0] != 'z' || strnlen(text, IDENTITY_PEERID_MAX) >=
	    IDENTITY_PEERID_MAX)
		return -1;
	if (base58_decode(text + 1, buf, sizeof(buf), &n) == -1 ||
	    n != IDENTITY_ID_LEN)
		return -1;
	memcpy(id, buf, IDENTITY_ID_LEN);
	return 0;
}

uint64_t
identity_node_of(const uint8_t id[IDENTITY_ID_LEN])
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | id[i];
	return v;
}
