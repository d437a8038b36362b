/*
 * bench_channel.c: the Channel family: one frame from one end of a real
 * loopback TCP connection to the other, per frame, the way peerd's two
 * bindings carry it (docs/protocol.md "TLS binding").
 *
 *   signed_tcp_*  frame_encode (Ed25519 sign), write(2), read(2) of the
 *                 whole frame, frame_open (SHA-256 of the key and verify):
 *                 the TCP binding.
 *   bare_tls_*    frame_encode_bare, SSL_write, SSL_read, frame_open_channel
 *                 (no signature either way; AES-GCM by TLS 1.3 instead):
 *                 the TLS binding, on a channel a tlsid handshake set up.
 *
 * bare_tls names signed_tcp as its baseline, so the ratio is the cost of a
 * frame on TLS relative to TCP in the same run.  Both ends are in this one
 * thread: a frame (a few hundred bytes to 4 KiB) fits the socket buffers,
 * so a write never waits for the read that follows it.  The handshake is
 * outside the timed span.
 */
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/ssl.h>

#include "bench.h"
#include "dcbor.h"
#include "frame.h"
#include "hlc.h"
#include "identity.h"
#include "tlsid.h"

struct chan_state {
	struct identity		 a, b;		/* a sends, b receives */
	struct hlc_stamp	 stamp;
	struct dcbor_buf	 body, out;
	uint8_t			*rx;
	size_t			 rx_cap;
	int			 fa, fb;	/* the connection's two ends */
	SSL_CTX			*ca, *cb;
	SSL			*sa, *sb;
};

static void
chan_teardown(void *state)
{
	struct chan_state *st = state;

	SSL_free(st->sa);
	SSL_free(st->sb);
	SSL_CTX_free(st->ca);
	SSL_CTX_free(st->cb);
	if (st->fa >= 0)
		close(st->fa);
	if (st->fb >= 0)
		close(st->fb);
	identity_free(&st->a);
	identity_free(&st->b);
	dcbor_buf_free(&st->body);
	dcbor_buf_free(&st->out);
	free(st->rx);
	free(st);
}

/* A loopback TCP connection: *fa dialed, *fb accepted. 0 or -1. */
static int
tcp_pair(int *fa, int *fb)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int ls, one = 1;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((ls = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return -1;
	if (bind(ls, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(ls, 1) == -1 ||
	    getsockname(ls, (struct sockaddr *)&sin, &len) == -1 ||
	    (*fa = socket(AF_INET, SOCK_STREAM, 0)) == -1) {
		close(ls);
		return -1;
	}
	if (connect(*fa, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    (*fb = accept(ls, NULL, NULL)) == -1) {
		close(ls);
		return -1;
	}
	close(ls);
	setsockopt(*fa, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(*fb, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 0;
}

/* Both ends' handshake, on non-blocking sockets, then blocking again. */
static int
tls_handshake(struct chan_state *st)
{
	bool da = false, db = false;

	fcntl(st->fa, F_SETFL, O_NONBLOCK);
	fcntl(st->fb, F_SETFL, O_NONBLOCK);
	for (int i = 0; i < 100000 && !(da && db); i++) {
		int r;

		if (!da && (r = SSL_connect(st->sa)) == 1)
			da = true;
		else if (!da && SSL_get_error(st->sa, r) != SSL_ERROR_WANT_READ &&
		    SSL_get_error(st->sa, r) != SSL_ERROR_WANT_WRITE)
			return -1;
		if (!db && (r = SSL_accept(st->sb)) == 1)
			db = true;
		else if (!db && SSL_get_error(st->sb, r) != SSL_ERROR_WANT_READ &&
		    SSL_get_error(st->sb, r) != SSL_ERROR_WANT_WRITE)
			return -1;
	}
	fcntl(st->fa, F_SETFL, 0);
	fcntl(st->fb, F_SETFL, 0);
	return da && db ? 0 : -1;
}

static int
chan_setup_common(void **state, size_t param, bool tls)
{
	struct chan_state *st;
	uint8_t seed[IDENTITY_SEED_LEN], *data;

	if ((st = calloc(1, sizeof(*st))) == NULL)
		return -1;
	*state = st;
	st->fa = st->fb = -1;
	dcbor_buf_init(&st->body);
	dcbor_buf_init(&st->out);
	bench_fill(seed, sizeof(seed), 31);
	if (identity_from_seed(&st->a, seed) == -1)
		return -1;
	bench_fill(seed, sizeof(seed), 32);
	if (identity_from_seed(&st->b, seed) == -1)
		return -1;
	st->stamp.phys = 1764480000000ull;
	st->stamp.node = st->a.node;
	if ((data = malloc(param)) == NULL)
		return -1;
	bench_fill(data, param, 33);
	dcbor_put_bytes(&st->body, data, param);
	free(data);
	st->rx_cap = param + 1024;
	if ((st->rx = malloc(st->rx_cap)) == NULL)
		return -1;
	if (tcp_pair(&st->fa, &st->fb) == -1)
		return -1;
	if (!tls)
		return 0;
	if ((st->ca = tlsid_ctx_new(&st->a)) == NULL ||
	    (st->cb = tlsid_ctx_new(&st->b)) == NULL ||
	    (st->sa = SSL_new(st->ca)) == NULL ||
	    (st->sb = SSL_new(st->cb)) == NULL ||
	    SSL_set_fd(st->sa, st->fa) != 1 || SSL_set_fd(st->sb, st->fb) != 1)
		return -1;
	return tls_handshake(st);
}

static int
setup_tcp(void **state, size_t param)
{
	return chan_setup_common(state, param, false);
}

static int
setup_tls(void **state, size_t param)
{
	return chan_setup_common(state, param, true);
}

/* Read exactly n bytes from fd (TCP) or ssl (TLS). 0 or -1. */
static int
read_full(struct chan_state *st, bool tls, uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t r = tls ? SSL_read(st->sb, p, (int)n) :
		    read(st->fb, p, n);

		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static int
write_full(struct chan_state *st, bool tls, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t r = tls ? SSL_write(st->sa, p, (int)n) :
		    write(st->fa, p, n);

		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static int
run_chan(struct chan_state *st, uint64_t n, bool tls)
{
	struct frame f;
	uint32_t len;
	uint64_t acc = 0;

	for (uint64_t i = 0; i < n; i++) {
		dcbor_buf_reset(&st->out);
		if ((tls ? frame_encode_bare(&st->out, &st->a, FRAME_RUMOR,
		    "bench-group", st->b.id, &st->stamp, st->body.data,
		    st->body.len, 0, FRAME_MAX_DEFAULT) :
		    frame_encode(&st->out, &st->a, FRAME_RUMOR, "bench-group",
		    st->b.id, &st->stamp, st->body.data, st->body.len,
		    FRAME_MAX_DEFAULT)) == -1 ||
		    write_full(st, tls, st->out.data, st->out.len) == -1 ||
		    read_full(st, tls, st->rx, FRAME_LEN_PREFIX) == -1 ||
		    frame_read_len(st->rx, FRAME_LEN_PREFIX, st->rx_cap,
		    &len) != FRAME_OK ||
		    read_full(st, tls, st->rx, len) == -1 ||
		    frame_open_channel(st->rx, len, &f, tls ? st->a.id : NULL) !=
		    FRAME_OK)
			return -1;
		acc += f.body_len;
	}
	bench_consume(acc);
	return 0;
}

static int
run_tcp(void *state, uint64_t n)
{
	return run_chan(state, n, false);
}

static int
run_tls(void *state, uint64_t n)
{
	return run_chan(state, n, true);
}

static const struct bench_row channel_rows[] = {
	{ "Channel.signed_tcp_256", NULL, 256, setup_tcp, run_tcp,
	    chan_teardown, NULL },
	{ "Channel.bare_tls_256", "Channel.signed_tcp_256", 256, setup_tls,
	    run_tls, chan_teardown, NULL },
	{ "Channel.signed_tcp_4k", NULL, 4096, setup_tcp, run_tcp,
	    chan_teardown, NULL },
	{ "Channel.bare_tls_4k", "Channel.signed_tcp_4k", 4096, setup_tls,
	    run_tls, chan_teardown, NULL },
};

const struct bench_family bench_family_channel = {
	"Channel", channel_rows, BENCH_NROWS(channel_rows)
};
