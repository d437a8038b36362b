/*
 * test_dtlsid.c: the DTLS binding's identity (common/dtlsid.c).  An
 * endorsement checks under the key, channel key and exported bytes it was
 * made for, and under no other: a flipped bit anywhere, another channel
 * key, another session's bytes or another identity's key is refused.
 * Real DTLS 1.2 handshakes between two channel keys, over a pair of UDP
 * sockets on 127.0.0.1, show each end learning the other's channel key,
 * both ends exporting the same bytes, and two sessions exporting different
 * ones, so an endorsement replayed from one session fails on the next.  A
 * certificate on another curve fails the handshake and is marked as the
 * certificate's fault.
 */
#include <sys/socket.h>

#include <netinet/in.h>

#include <check.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>

#include "dtlsid.h"
#include "identity.h"
#include "tlsid.h"

static void
seeded(struct identity *id, uint8_t first)
{
	uint8_t seed[IDENTITY_SEED_LEN];

	for (size_t i = 0; i < sizeof(seed); i++)
		seed[i] = (uint8_t)(first + i);
	ck_assert_int_eq(identity_from_seed(id, seed), 0);
}

START_TEST(endorsement_checks_only_what_it_was_made_for)
{
	struct identity a, b;
	struct dtlsid c1, c2;
	uint8_t ekm[DTLSID_EKM_LEN], e[DTLSID_ENDORSE_LEN];
	uint8_t bad[DTLSID_ENDORSE_LEN], pub[IDENTITY_PUB_LEN];
	uint8_t id[IDENTITY_ID_LEN], eb[DTLSID_ENDORSE_LEN];

	seeded(&a, 0);
	seeded(&b, 0x20);
	ck_assert_int_eq(dtlsid_new(&c1, a.peer_id), 0);
	ck_assert_int_eq(dtlsid_new(&c2, b.peer_id), 0);
	ck_assert_uint_eq(c1.pub[0], 0x04);
	ck_assert(memcmp(c1.pub, c2.pub, DTLSID_CHAN_PUB_LEN) != 0);
	for (size_t i = 0; i < sizeof(ekm); i++)
		ekm[i] = (uint8_t)(0x80 + i);
	ck_assert_int_eq(dtlsid_endorse(&a, c1.pub, ekm, e), 0);
	ck_assert_int_eq(dtlsid_check(e, c1.pub, ekm, pub, id), 0);
	ck_assert_mem_eq(pub, a.pub, IDENTITY_PUB_LEN);
	ck_assert_mem_eq(id, a.id, IDENTITY_ID_LEN);
	/* every bit of it matters */
	for (size_t i = 0; i < DTLSID_ENDORSE_LEN; i++)
		for (int bit = 0; bit < 8; bit += 3) {
			memcpy(bad, e, sizeof(bad));
			bad[i] ^= (uint8_t)(1u << bit);
			ck_assert_int_eq(dtlsid_check(bad, c1.pub, ekm, pub, id),
			    -1);
		}
	/* another channel key, another session */
	ck_assert_int_eq(dtlsid_check(e, c2.pub, ekm, pub, id), -1);
	ekm[31] ^= 0x80;
	ck_assert_int_eq(dtlsid_check(e, c1.pub, ekm, pub, id), -1);
	ekm[31] ^= 0x80;
	/* B's key in front of A's signature */
	memcpy(bad, e, sizeof(bad));
	memcpy(bad, b.pub, IDENTITY_PUB_LEN);
	ck_assert_int_eq(dtlsid_check(bad, c1.pub, ekm, pub, id), -1);
	/* B's own endorsement of the same channel key checks, as B */
	ck_assert_int_eq(dtlsid_endorse(&b, c1.pub, ekm, eb), 0);
	ck_assert_int_eq(dtlsid_check(eb, c1.pub, ekm, pub, id), 0);
	ck_assert_mem_eq(id, b.id, IDENTITY_ID_LEN);
	dtlsid_free(&c1);
	dtlsid_free(&c2);
	identity_free(&a);
	identity_free(&b);
}
END_TEST

/* A datagram BIO on fd, told it is connected to fd's peer. */
static BIO *
dgram_bio(int fd)
{
	struct sockaddr_in peer;
	socklen_t len = sizeof(peer);
	BIO *b = BIO_new_dgram(fd, BIO_NOCLOSE);
	BIO_ADDR *a = BIO_ADDR_new();

	ck_assert_int_eq(getpeername(fd, (struct sockaddr *)&peer, &len), 0);
	ck_assert(BIO_ADDR_rawmake(a, AF_INET, &peer.sin_addr,
	    sizeof(peer.sin_addr), peer.sin_port));
	BIO_ctrl(b, BIO_CTRL_DGRAM_SET_CONNECTED, 0, a);
	BIO_ADDR_free(a);
	return b;
}

/* Two UDP sockets on 127.0.0.1 connected to each other. */
static void
udp_pair(int fd[2])
{
	struct sockaddr_in sin[2];
	socklen_t len;

	for (int i = 0; i < 2; i++) {
		fd[i] = socket(AF_INET, SOCK_DGRAM, 0);
		ck_assert_int_ge(fd[i], 0);
		memset(&sin[i], 0, sizeof(sin[i]));
		sin[i].sin_family = AF_INET;
		sin[i].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		ck_assert_int_eq(bind(fd[i], (struct sockaddr *)&sin[i],
		    sizeof(sin[i])), 0);
		len = sizeof(sin[i]);
		ck_assert_int_eq(getsockname(fd[i], (struct sockaddr *)&sin[i],
		    &len), 0);
		fcntl(fd[i], F_SETFL, O_NONBLOCK);
	}
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(connect(fd[i], (struct sockaddr *)&sin[1 - i],
		    sizeof(sin[i])), 0);
}

/*
 * Run a handshake between a client on cctx and a server on sctx; the two
 * SSLs are returned.  1 if both completed, 0 if either failed; bounded
 * (each wait is on the sockets, at most 200 of 100 ms).
 */
static int
handshake(SSL_CTX *cctx, SSL_CTX *sctx, SSL **c, SSL **s, int fd[2])
{
	int done[2] = { 0, 0 }, failed = 0;

	udp_pair(fd);
	*c = SSL_new(cctx);
	*s = SSL_new(sctx);
	{
		BIO *bc = dgram_bio(fd[0]), *bs = dgram_bio(fd[1]);

		SSL_set_bio(*c, bc, bc);
		SSL_set_bio(*s, bs, bs);
	}
	DTLS_set_link_mtu(*c, 16512);
	DTLS_set_link_mtu(*s, 16512);
	SSL_set_connect_state(*c);
	SSL_set_accept_state(*s);
	for (int round = 0; round < 200 && !(done[0] && done[1]) && !failed;
	    round++) {
		SSL *ends[2] = { *c, *s };
		struct pollfd p[2] = { { fd[0], POLLIN, 0 },
		    { fd[1], POLLIN, 0 } };

		for (int i = 0; i < 2; i++) {
			int r;

			if (done[i])
				continue;
			ERR_clear_error();
			if ((r = SSL_do_handshake(ends[i])) == 1)
				done[i] = 1;
			else if (SSL_get_error(ends[i], r) != SSL_ERROR_WANT_READ &&
			    SSL_get_error(ends[i], r) != SSL_ERROR_WANT_WRITE) {
				if (getenv("DTLSID_TEST_DEBUG") != NULL)
					ERR_print_errors_fp(stderr);
				failed = 1;
			}
		}
		if (!(done[0] && done[1]) && !failed &&
		    poll(p, 2, 100) == 0) {
			DTLSv1_handle_timeout(*c);
			DTLSv1_handle_timeout(*s);
		}
	}
	ERR_clear_error();
	return done[0] && done[1] && !failed;
}

static void
teardown(SSL *c, SSL *s, int fd[2])
{
	SSL_free(c);
	SSL_free(s);
	close(fd[0]);
	close(fd[1]);
}

START_TEST(sessions_bind_endorsements)
{
	struct identity a;
	struct dtlsid ca, cb;
	SSL_CTX *xa, *xb;
	SSL *c, *s;
	int fd[2];
	uint8_t got[DTLSID_CHAN_PUB_LEN], ekm1[DTLSID_EKM_LEN];
	uint8_t ekm_s[DTLSID_EKM_LEN], ekm2[DTLSID_EKM_LEN];
	uint8_t e[DTLSID_ENDORSE_LEN], pub[IDENTITY_PUB_LEN];
	uint8_t id[IDENTITY_ID_LEN];

	seeded(&a, 0);
	ck_assert_int_eq(dtlsid_new(&ca, "a"), 0);
	ck_assert_int_eq(dtlsid_new(&cb, "b"), 0);
	ck_assert_ptr_nonnull(xa = dtlsid_ctx_new(&ca));
	ck_assert_ptr_nonnull(xb = dtlsid_ctx_new(&cb));

	ck_assert_int_eq(handshake(xa, xb, &c, &s, fd), 1);
	ck_assert_str_eq(SSL_get_version(c), "DTLSv1.2");
	ck_assert_int_eq(dtlsid_peer_chan(s, got), 0);
	ck_assert_mem_eq(got, ca.pub, DTLSID_CHAN_PUB_LEN);
	ck_assert_int_eq(dtlsid_peer_chan(c, got), 0);
	ck_assert_mem_eq(got, cb.pub, DTLSID_CHAN_PUB_LEN);
	ck_assert_int_eq(dtlsid_ekm(c, ekm1), 0);
	ck_assert_int_eq(dtlsid_ekm(s, ekm_s), 0);
	ck_assert_mem_eq(ekm1, ekm_s, DTLSID_EKM_LEN);
	/* A endorses its channel key for this session; the server checks. */
	ck_assert_int_eq(dtlsid_endorse(&a, ca.pub, ekm1, e), 0);
	ck_assert_int_eq(dtlsid_check(e, ca.pub, ekm_s, pub, id), 0);
	ck_assert_mem_eq(id, a.id, IDENTITY_ID_LEN);
	teardown(c, s, fd);

	/* A second session between the same keys exports other bytes: the
	 * first session's endorsement, replayed, is refused. */
	ck_assert_int_eq(handshake(xa, xb, &c, &s, fd), 1);
	ck_assert_int_eq(dtlsid_ekm(s, ekm2), 0);
	ck_assert(memcmp(ekm1, ekm2, DTLSID_EKM_LEN) != 0);
	ck_assert_int_eq(dtlsid_check(e, ca.pub, ekm2, pub, id), -1);
	teardown(c, s, fd);

	SSL_CTX_free(xa);
	SSL_CTX_free(xb);
	dtlsid_free(&ca);
	dtlsid_free(&cb);
	identity_free(&a);
}
END_TEST

START_TEST(other_curve_refused)
{
	struct dtlsid cb;
	EVP_PKEY *k;
	X509 *cert;
	SSL_CTX *xc, *xs;
	SSL *c, *s;
	int fd[2];

	ck_assert_int_eq(dtlsid_new(&cb, "b"), 0);
	ck_assert_ptr_nonnull(xs = dtlsid_ctx_new(&cb));
	/* A client with a P-384 certificate and the same suites. */
	ck_assert_ptr_nonnull(k = EVP_EC_gen("P-384"));
	ck_assert_ptr_nonnull(cert = tlsid_cert_of(k, "c"));
	ck_assert_ptr_nonnull(xc = SSL_CTX_new(DTLS_method()));
	ck_assert_int_eq(SSL_CTX_use_certificate(xc, cert), 1);
	ck_assert_int_eq(SSL_CTX_use_PrivateKey(xc, k), 1);
	SSL_CTX_set_options(xc, SSL_OP_NO_QUERY_MTU);
	SSL_CTX_set_verify(xc, SSL_VERIFY_NONE, NULL);
	ck_assert_int_eq(handshake(xc, xs, &c, &s, fd), 0);
	ck_assert(dtlsid_verify_failed(s));
	teardown(c, s, fd);
	SSL_CTX_free(xc);
	SSL_CTX_free(xs);
	X509_free(cert);
	EVP_PKEY_free(k);
	dtlsid_free(&cb);
}
END_TEST

int
main(void)
{
	Suite *su = suite_create("dtlsid");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int nf;

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, endorsement_checks_only_what_it_was_made_for);
	tcase_add_test(tc, sessions_bind_endorsements);
	tcase_add_test(tc, other_curve_refused);
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
