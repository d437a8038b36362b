/*
 * fuzz_hello.c: libFuzzer target for the handshake's body parser,
 * handshake_parse (docs/protocol.md section 3), the first thing a peer
 * parses from a connection that has proven nothing.
 *
 * The input is one CHANNEL_HELLO body.  Whatever parses must keep the
 * parser's promises: echo and nonce point into the input, the nonce is 16
 * bytes and the echo 0 or 16, a kx (the offered X25519 key) absent or 32
 * bytes, addr and name are NUL-free strings that fit;
 * encoding the parsed hello (handshake_encode, what the peer itself sends)
 * and parsing that again gives the same hello; and when the input is
 * canonical CBOR (as frame_open guarantees of a body on the wire), that
 * encoding is the input byte for byte, so a hello has one spelling.
 * Seeds: tests/fuzz/seeds/fuzz_hello/, written by this target with
 * FUZZ_SEED_DIR=DIR (a hello, a proof, each with and without kx, and
 * near misses).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcbor.h"
#include "handshake.h"
#include "link.h"
#include "log.h"
#include "peerd.h"

#include "fuzz_daemon.h"

/* link.c's module needs the daemon; the parser itself touches none of it. */
static struct peerd	 fz_peerd;
struct peerd		*pd = &fz_peerd;

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int	LLVMFuzzerInitialize(int *argc, char ***argv);

static bool
within(const uint8_t *p, size_t n, const uint8_t *buf, size_t len)
{
	return p >= buf && p + n <= buf + len;
}

static void
check_same(const struct link_hello *a, const struct link_hello *b)
{
	if (strcmp(a->addr, b->addr) != 0 || strcmp(a->name, b->name) != 0 ||
	    a->echo_len != b->echo_len || a->nonce_len != b->nonce_len ||
	    a->kx_len != b->kx_len ||
	    (a->kx_len > 0 && memcmp(a->kx, b->kx, a->kx_len) != 0) ||
	    memcmp(a->nonce, b->nonce, a->nonce_len) != 0 ||
	    (a->echo_len > 0 && memcmp(a->echo, b->echo, a->echo_len) != 0))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct link_hello h, again;
	struct dcbor_buf b;

	if (handshake_parse(data, size, &h) == -1)
		return 0;
	if (h.nonce_len != LINK_HELLO_NONCE || !within(h.nonce, h.nonce_len,
	    data, size) || (h.echo_len != 0 && h.echo_len != LINK_HELLO_NONCE) ||
	    (h.echo_len > 0 && !within(h.echo, h.echo_len, data, size)) ||
	    (h.kx_len != 0 && h.kx_len != 32) || (h.kx_len > 0 &&
	    (h.kx == NULL || !within(h.kx, h.kx_len, data, size))) ||
	    memchr(h.addr, '\0', sizeof(h.addr)) == NULL ||
	    memchr(h.name, '\0', sizeof(h.name)) == NULL)
		abort();
	dcbor_buf_init(&b);
	handshake_encode(&b, &h);
	if (handshake_parse(b.data, b.len, &again) == -1)
		abort();
	check_same(&h, &again);
	if (dcbor_check(data, size, 64, true, NULL) == DCBOR_OK &&
	    (b.len != size || memcmp(b.data, data, size) != 0))
		abort();
	dcbor_buf_free(&b);
	return 0;
}

static void
seed(const char *dir, const char *name, const struct link_hello *h,
    size_t cut)
{
	struct dcbor_buf b;
	char path[4096];
	FILE *fp;

	dcbor_buf_init(&b);
	handshake_encode(&b, h);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((fp = fopen(path, "wb")) == NULL)
		fatal("seed %s", path);
	fwrite(b.data, 1, b.len - cut, fp);
	if (fclose(fp) != 0)
		fatal("seed %s", path);
	dcbor_buf_free(&b);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const uint8_t nonce[LINK_HELLO_NONCE] = "0123456789abcdef";
	static const uint8_t echo[LINK_HELLO_NONCE] = "fedcba9876543210";
	static const uint8_t kx[32] = "an X25519 public key, 32 bytes.";
	const char *dir = getenv("FUZZ_SEED_DIR");
	struct link_hello h;

	(void)argc;
	(void)argv;
	if (dir == NULL)
		return 0;
	memset(&h, 0, sizeof(h));
	strcpy(h.addr, "127.0.0.1:4000");
	strcpy(h.name, "p0");
	h.nonce = nonce;
	h.nonce_len = sizeof(nonce);
	seed(dir, "hello", &h, 0);
	h.echo = echo;
	h.echo_len = sizeof(echo);
	seed(dir, "proof", &h, 0);
	seed(dir, "proof_cut", &h, 5);
	h.nonce_len = 15;
	seed(dir, "short_nonce", &h, 0);
	h.nonce_len = sizeof(nonce);
	h.kx = kx;
	h.kx_len = sizeof(kx);
	seed(dir, "proof_kx", &h, 0);
	h.echo = NULL;
	h.echo_len = 0;
	seed(dir, "hello_kx", &h, 0);
	seed(dir, "hello_kx_cut", &h, 3);
	h.kx_len = 31;
	seed(dir, "short_kx", &h, 0);
	exit(0);
}
