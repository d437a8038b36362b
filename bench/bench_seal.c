/*
 * bench_seal.c: the Seal family: seal_seal and seal_open (AES-256-GCM under
 * a group key, seal.h) at 256 B, 4 KiB and 64 KiB, each beside the raw
 * OpenSSL row of the same size (Crypto.aes256gcm_{seal,open}_raw_*).
 *
 * The ratio is what seal.c adds to the cipher: the raw rows set the key
 * schedule once and reuse two EVP_CIPHER_CTX, with no associated data and
 * a counter nonce; seal.c also keeps two contexts per key (keyed once by
 * seal_key_init), and adds a random nonce (from a pool refilled by
 * RAND_bytes every SEAL_NONCE_POOL seals, and a getpid() per seal for fork
 * safety) and the associated data.  The AD here is what an entry uses:
 * seal_ad() of a 5-byte space name and a 16-byte entry id (21 B).
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "seal.h"

struct seal_state {
	struct seal_key	 key;
	size_t		 len;
	uint8_t		*pt;
	uint8_t		*sealed;	/* pt sealed once */
	size_t		 sealed_len;
	uint8_t		*out;
	uint8_t		 ad[64];
	size_t		 adlen;
};

static void
seal_teardown(void *state)
{
	struct seal_state *st = state;

	seal_key_clear(&st->key);
	free(st->pt);
	free(st->sealed);
	free(st->out);
	free(st);
}

static int
seal_setup(void **state, size_t param)
{
	struct seal_state *st;
	uint8_t key[SEAL_KEY_LEN], id[16];
	size_t n;

	if ((st = calloc(1, sizeof(*st))) == NULL)
		return -1;
	*state = st;
	st->len = param;
	st->pt = malloc(param);
	st->sealed = malloc(param + SEAL_OVERHEAD);
	st->out = malloc(param + SEAL_OVERHEAD);
	if (st->pt == NULL || st->sealed == NULL || st->out == NULL)
		return -1;
	bench_fill(st->pt, param, 31);
	bench_fill(key, sizeof(key), 32);
	bench_fill(id, sizeof(id), 33);
	seal_key_init(&st->key, key);
	st->adlen = seal_ad(st->ad, sizeof(st->ad), "bench", id, sizeof(id),
	    NULL);
	if (st->adlen > sizeof(st->ad))
		return -1;
	if (seal_seal(&st->key, st->ad, st->adlen, st->pt, param, st->sealed,
	    param + SEAL_OVERHEAD, &st->sealed_len) == -1 ||
	    seal_open(&st->key, st->ad, st->adlen, st->sealed, st->sealed_len,
	    st->out, param + SEAL_OVERHEAD, &n) == -1 || n != param ||
	    memcmp(st->out, st->pt, param) != 0)
		return -1;
	return 0;
}

static int
run_seal(void *state, uint64_t n)
{
	struct seal_state *st = state;
	uint64_t acc = 0;
	size_t outn;

	for (uint64_t i = 0; i < n; i++) {
		if (seal_seal(&st->key, st->ad, st->adlen, st->pt, st->len,
		    st->out, st->len + SEAL_OVERHEAD, &outn) == -1)
			return -1;
		acc += st->out[outn - 1];
	}
	bench_consume(acc);
	return 0;
}

static int
run_open(void *state, uint64_t n)
{
	struct seal_state *st = state;
	uint64_t acc = 0;
	size_t outn;

	for (uint64_t i = 0; i < n; i++) {
		if (seal_open(&st->key, st->ad, st->adlen, st->sealed,
		    st->sealed_len, st->out, st->len + SEAL_OVERHEAD,
		    &outn) == -1)
			return -1;
		acc += st->out[0];
	}
	bench_consume(acc);
	return 0;
}

#define ROW(name, base, size, fn) \
	{ "Seal." name, base, size, seal_setup, fn, seal_teardown, NULL }

static const struct bench_row seal_rows[] = {
	ROW("seal_256", "Crypto.aes256gcm_seal_raw_256", 256, run_seal),
	ROW("open_256", "Crypto.aes256gcm_open_raw_256", 256, run_open),
	ROW("seal_4k", "Crypto.aes256gcm_seal_raw_4k", 4096, run_seal),
	ROW("open_4k", "Crypto.aes256gcm_open_raw_4k", 4096, run_open),
	ROW("seal_64k", "Crypto.aes256gcm_seal_raw_64k", 65536, run_seal),
	ROW("open_64k", "Crypto.aes256gcm_open_raw_64k", 65536, run_open),
};

const struct bench_family bench_family_seal = {
	"Seal", seal_rows, BENCH_NROWS(seal_rows)
};
