/*
 * test_tlsid.c: the TLS binding's pieces that need no socket.
 *
 * Identity certificates: made from a key they carry it, and only a
 * certificate self-signed by an Ed25519 key yields one (an EC key, or an
 * Ed25519 certificate signed by another key, does not).  Handshakes between
 * two tlsid contexts over an in-memory BIO pair: each end learns the
 * other's PeerId; a client that offers only TLS 1.2, or presents an EC
 * certificate, or none, fails.  The bare frame rule (frame_encode_bare,
 * frame_open_channel): a bare frame opens only on a channel whose peer is
 * its "from"; a signed frame on a channel must also come from the channel's
 * peer and still verifies.
 */
#include <check.h>
#include <string.h>

#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "dcbor.h"
#include "frame.h"
#include "hlc.h"
#include "identity.h"
#include "tlsid.h"

static void
ident_seeded(struct identity *id, uint8_t b)
{
	uint8_t seed[IDENTITY_SEED_LEN];

	memset(seed, b, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(id, seed), 0);
}

/* A self-signed certificate for key, signed by signer (md NULL: Ed25519). */
static X509 *
cert_signed(EVP_PKEY *key, EVP_PKEY *signer, const EVP_MD *md)
{
	X509 *x = X509_new();

	ck_assert_ptr_nonnull(x);
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 7);
	X509_gmtime_adj(X509_getm_notBefore(x), 0);
	X509_gmtime_adj(X509_getm_notAfter(x), 86400);
	X509_set_pubkey(x, key);
	X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN",
	    MBSTRING_ASC, (const unsigned char *)"t", -1, -1, 0);
	X509_set_issuer_name(x, X509_get_subject_name(x));
	ck_assert_int_gt(X509_sign(x, signer, md), 0);
	return x;
}

START_TEST(test_cert_carries_key)
{
	struct identity id;
	uint8_t pub[IDENTITY_PUB_LEN];
	X509 *x;

	ident_seeded(&id, 1);
	x = tlsid_cert_new(&id);
	ck_assert_ptr_nonnull(x);
	ck_assert_int_eq(tlsid_cert_key(x, pub), 0);
	ck_assert_mem_eq(pub, id.pub, IDENTITY_PUB_LEN);
	X509_free(x);
	identity_free(&id);
}
END_TEST

START_TEST(test_cert_refused)
{
	struct identity a, b;
	uint8_t pub[IDENTITY_PUB_LEN];
	EVP_PKEY *ec = EVP_EC_gen("P-256");
	X509 *x;

	ident_seeded(&a, 2);
	ident_seeded(&b, 3);
	/* An Ed25519 key in a certificate another key signed. */
	x = cert_signed(a.pkey, b.pkey, NULL);
	ck_assert_int_eq(tlsid_cert_key(x, pub), -1);
	X509_free(x);
	/* An EC key, self-signed. */
	ck_assert_ptr_nonnull(ec);
	x = cert_signed(ec, ec, EVP_sha256());
	ck_assert_int_eq(tlsid_cert_key(x, pub), -1);
	X509_free(x);
	ck_assert_int_eq(tlsid_cert_key(NULL, pub), -1);
	EVP_PKEY_free(ec);
	identity_free(&a);
	identity_free(&b);
}
END_TEST

/* Run both ends of a handshake over a BIO pair until neither moves. */
static bool
handshake(SSL *c, SSL *s)
{
	bool cdone = false, sdone = false;

	for (int i = 0; i < 64 && !(cdone && sdone); i++) {
		int rc;

		if (!cdone) {
			if ((rc = SSL_do_handshake(c)) == 1)
				cdone = true;
			else if (SSL_get_error(c, rc) != SSL_ERROR_WANT_READ &&
			    SSL_get_error(c, rc) != SSL_ERROR_WANT_WRITE)
				return false;
		}
		if (!sdone) {
			if ((rc = SSL_do_handshake(s)) == 1)
				sdone = true;
			else if (SSL_get_error(s, rc) != SSL_ERROR_WANT_READ &&
			    SSL_get_error(s, rc) != SSL_ERROR_WANT_WRITE)
				return false;
		}
	}
	/* TLS 1.3: the server sees the client's certificate on a read. */
	if (cdone && sdone) {
		uint8_t b;

		SSL_read(s, &b, 1);
		SSL_read(c, &b, 1);
		return SSL_get_verify_result(s) == X509_V_OK &&
		    SSL_get0_peer_certificate(s) != NULL;
	}
	return false;
}

static void
pair(SSL_CTX *cctx, SSL_CTX *sctx, SSL **c, SSL **s)
{
	BIO *bc, *bs;

	ck_assert_int_eq(BIO_new_bio_pair(&bc, 0, &bs, 0), 1);
	*c = SSL_new(cctx);
	*s = SSL_new(sctx);
	SSL_set_bio(*c, bc, bc);
	SSL_set_bio(*s, bs, bs);
	SSL_set_connect_state(*c);
	SSL_set_accept_state(*s);
}

START_TEST(test_handshake_ids)
{
	struct identity a, b;
	uint8_t pub[IDENTITY_PUB_LEN], id[IDENTITY_ID_LEN];
	SSL_CTX *ca, *cb;
	SSL *c, *s;

	ident_seeded(&a, 4);
	ident_seeded(&b, 5);
	ca = tlsid_ctx_new(&a);
	cb = tlsid_ctx_new(&b);
	ck_assert_ptr_nonnull(ca);
	ck_assert_ptr_nonnull(cb);
	pair(ca, cb, &c, &s);
	ck_assert(handshake(c, s));
	ck_assert_int_eq(SSL_version(c), TLS1_3_VERSION);
	ck_assert_int_eq(tlsid_peer(c, pub, id), 0);
	ck_assert_mem_eq(id, b.id, IDENTITY_ID_LEN);
	ck_assert_int_eq(tlsid_peer(s, pub, id), 0);
	ck_assert_mem_eq(id, a.id, IDENTITY_ID_LEN);
	ck_assert_mem_eq(pub, a.pub, IDENTITY_PUB_LEN);
	ck_assert(!tlsid_verify_failed(s));
	ck_assert_str_eq(SSL_CIPHER_get_name(SSL_get_current_cipher(s)),
	    "TLS_AES_128_GCM_SHA256");
	SSL_free(c);
	SSL_free(s);
	/*
	 * The acceptor's cipher order wins: a client that prefers AES-256-GCM
	 * (OpenSSL's default order) still gets AES-128-GCM from a peer.
	 */
	pair(ca, cb, &c, &s);
	ck_assert_int_eq(SSL_set_ciphersuites(c, "TLS_AES_256_GCM_SHA384:"
	    "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256"), 1);
	ck_assert(handshake(c, s));
	ck_assert_str_eq(SSL_CIPHER_get_name(SSL_get_current_cipher(s)),
	    "TLS_AES_128_GCM_SHA256");
	ck_assert_str_eq(SSL_CIPHER_get_name(SSL_get_current_cipher(c)),
	    "TLS_AES_128_GCM_SHA256");
	SSL_free(c);
	SSL_free(s);
	SSL_CTX_free(ca);
	SSL_CTX_free(cb);
	identity_free(&a);
	identity_free(&b);
}
END_TEST

/* A plain client context: no certificate checks of its own. */
static SSL_CTX *
plain_client(int max_version, EVP_PKEY *key)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());

	ck_assert_ptr_nonnull(ctx);
	SSL_CTX_set_max_proto_version(ctx, max_version);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
	if (key != NULL) {
		X509 *x = cert_signed(key, key, EVP_PKEY_get_id(key) ==
		    EVP_PKEY_ED25519 ? NULL : EVP_sha256());

		ck_assert_int_eq(SSL_CTX_use_certificate(ctx, x), 1);
		ck_assert_int_eq(SSL_CTX_use_PrivateKey(ctx, key), 1);
		X509_free(x);
	}
	return ctx;
}

START_TEST(test_handshake_refused)
{
	struct identity a, b;
	EVP_PKEY *ec = EVP_EC_gen("P-256");
	SSL_CTX *srv, *cl;
	SSL *c, *s;

	ident_seeded(&a, 6);
	ident_seeded(&b, 7);
	srv = tlsid_ctx_new(&a);
	/* TLS 1.2 only, with a good Ed25519 certificate. */
	cl = plain_client(TLS1_2_VERSION, b.pkey);
	pair(cl, srv, &c, &s);
	ck_assert(!handshake(c, s));
	SSL_free(c);
	SSL_free(s);
	SSL_CTX_free(cl);
	/* No certificate at all. */
	cl = plain_client(TLS1_3_VERSION, NULL);
	pair(cl, srv, &c, &s);
	ck_assert(!handshake(c, s));
	SSL_free(c);
	SSL_free(s);
	SSL_CTX_free(cl);
	/*
	 * An EC certificate: ed25519 being the only scheme asked for, the
	 * client has nothing it can sign with and sends no certificate.
	 */
	cl = plain_client(TLS1_3_VERSION, ec);
	SSL_CTX_set1_sigalgs_list(cl, "ecdsa_secp256r1_sha256:ed25519");
	pair(cl, srv, &c, &s);
	ck_assert(!handshake(c, s));
	SSL_free(c);
	SSL_free(s);
	SSL_CTX_free(cl);
	/* b's key in a certificate a signed: the check refuses it. */
	cl = plain_client(TLS1_3_VERSION, NULL);
	{
		X509 *x = cert_signed(b.pkey, a.pkey, NULL);

		ck_assert_int_eq(SSL_CTX_use_certificate(cl, x), 1);
		ck_assert_int_eq(SSL_CTX_use_PrivateKey(cl, b.pkey), 1);
		X509_free(x);
	}
	pair(cl, srv, &c, &s);
	ck_assert(!handshake(c, s));
	ck_assert(tlsid_verify_failed(s));
	SSL_free(c);
	SSL_free(s);
	SSL_CTX_free(cl);
	ERR_clear_error();
	SSL_CTX_free(srv);
	EVP_PKEY_free(ec);
	identity_free(&a);
	identity_free(&b);
}
END_TEST

static const uint8_t body[] = { 0x63, 'a', 'b', 'c' };	/* "abc" */

START_TEST(test_bare_rule)
{
	struct identity a, b;
	struct hlc_stamp st = { 1700000000000ull, 0, 1 };
	struct dcbor_buf bare, sig;
	struct frame f;

	ident_seeded(&a, 8);
	ident_seeded(&b, 9);
	dcbor_buf_init(&bare);
	dcbor_buf_init(&sig);
	ck_assert_int_eq(frame_encode_bare(&bare, &a, FRAME_PING, "g", b.id,
	    &st, body, sizeof(body), 0, FRAME_MAX_DEFAULT), 0);
	ck_assert_int_eq(frame_encode(&sig, &a, FRAME_PING, "g", b.id, &st,
	    body, sizeof(body), FRAME_MAX_DEFAULT), 0);
	/* No key (32), no signature (64), nor their keys and heads. */
	ck_assert_uint_eq(sig.len - bare.len, 4 + 2 + 32 + 4 + 2 + 64);
	/* Nowhere but on a's channel. */
	ck_assert_int_eq(frame_open(bare.data + 4, bare.len - 4, &f),
	    FRAME_EBARE);
	ck_assert_int_eq(frame_open_channel(bare.data + 4, bare.len - 4, &f,
	    NULL), FRAME_EBARE);
	ck_assert_int_eq(frame_open_channel(bare.data + 4, bare.len - 4, &f,
	    b.id), FRAME_ECHANNEL);
	ck_assert_int_eq(frame_open_channel(bare.data + 4, bare.len - 4, &f,
	    a.id), FRAME_OK);
	ck_assert(f.bare);
	ck_assert_mem_eq(f.from, a.id, IDENTITY_ID_LEN);
	ck_assert_uint_eq(f.body_len, sizeof(body));
	/* A signed frame on a channel: its peer's, and verified. */
	ck_assert_int_eq(frame_open_channel(sig.data + 4, sig.len - 4, &f,
	    a.id), FRAME_OK);
	ck_assert(!f.bare);
	ck_assert_int_eq(frame_open_channel(sig.data + 4, sig.len - 4, &f,
	    b.id), FRAME_ECHANNEL);
	sig.data[sig.len - 1] ^= 1;	/* the signature's last byte */
	ck_assert_int_eq(frame_open_channel(sig.data + 4, sig.len - 4, &f,
	    a.id), FRAME_ESIG);
	/* A bare BLOCK keeps its detached payload's framing. */
	dcbor_buf_reset(&bare);
	ck_assert_int_eq(frame_encode_bare(&bare, &a, FRAME_BLOCK, "g", b.id,
	    &st, body, sizeof(body), 3, FRAME_MAX_DEFAULT), 0);
	dcbor_put_raw(&bare, (const uint8_t *)"xyz", 3);
	ck_assert_int_eq(frame_open_channel(bare.data + 4, bare.len - 4, &f,
	    a.id), FRAME_OK);
	ck_assert_uint_eq(f.data_len, 3);
	ck_assert_int_eq(frame_encode_bare(&bare, &a, FRAME_PING, "g", b.id,
	    &st, body, sizeof(body), 3, FRAME_MAX_DEFAULT), -1);
	dcbor_buf_free(&bare);
	dcbor_buf_free(&sig);
	identity_free(&a);
	identity_free(&b);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("tlsid");
	TCase *tc = tcase_create("tlsid");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_cert_carries_key);
	tcase_add_test(tc, test_cert_refused);
	tcase_add_test(tc, test_handshake_ids);
	tcase_add_test(tc, test_handshake_refused);
	tcase_add_test(tc, test_bare_rule);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
