/*
 * test_rstream.c: the DTLS binding's reliable stream (common/rstream.c)
 * with no sockets: two streams joined by a simulated network with a fake
 * clock and a seeded PRNG that drops, delays (reorders) and duplicates
 * packets.  Every byte must come out once, in order; the window must
 * shrink on loss and grow back when the loss stops; the timeout must
 * back off while nothing gets through and the stream must resume after;
 * the parser must refuse every malformed header and range list.
 * RSTREAM_TEST_SEED=n replays a run.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rstream.h"

static uint64_t test_seed = 0x5eed;

#define CHECK(cond) ck_assert_msg((cond), "%s (RSTREAM_TEST_SEED=%" PRIu64 \
	")", #cond, test_seed)

static uint64_t
rnd(uint64_t *st)
{
	uint64_t z = (*st += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#define NET_MAX	200000

struct pkt {
	uint64_t	 at;
	int		 to;	/* 0: a, 1: b */
	size_t		 len;
	uint8_t		*data;
};

/* The simulated network and both ends. */
struct net {
	uint64_t	 now, rng;
	double		 drop, dup;	/* probabilities */
	uint64_t	 delay_us, jitter_us;
	bool		 blackhole;	/* drop everything */
	struct pkt	*q;
	size_t		 nq;
	struct rstream	*rs[2];
	uint8_t		*got[2];
	size_t		 ngot[2], capgot[2];
	uint64_t	 sent[2];
};

struct end {
	struct net	*net;
	int		 me;
};

static double
unit(struct net *n)
{
	return (double)(rnd(&n->rng) >> 11) / 9007199254740992.0;
}

static void
net_push(struct net *n, int to, const uint8_t *p, size_t len)
{
	struct pkt *k;

	ck_assert(n->nq < NET_MAX);
	k = &n->q[n->nq++];
	k->at = n->now + n->delay_us + (n->jitter_us ?
	    rnd(&n->rng) % n->jitter_us : 0);
	k->to = to;
	k->len = len;
	k->data = malloc(len);
	memcpy(k->data, p, len);
}

static int
end_send(void *arg, const uint8_t *p, size_t len)
{
	struct end *e = arg;
	struct net *n = e->net;

	n->sent[e->me]++;
	if (n->blackhole || unit(n) < n->drop)
		return 0;
	net_push(n, 1 - e->me, p, len);
	if (unit(n) < n->dup)
		net_push(n, 1 - e->me, p, len);
	return 0;
}

static void
end_deliver(void *arg, const uint8_t *p, size_t len)
{
	struct end *e = arg;
	struct net *n = e->net;
	int me = e->me;

	if (n->ngot[me] + len > n->capgot[me]) {
		n->capgot[me] = (n->ngot[me] + len) * 2;
		n->got[me] = realloc(n->got[me], n->capgot[me]);
	}
	memcpy(n->got[me] + n->ngot[me], p, len);
	n->ngot[me] += len;
}

static struct end ends[2];

static void
net_init(struct net *n, size_t mss)
{
	memset(n, 0, sizeof(*n));
	n->now = 1000000;
	n->rng = test_seed;
	n->delay_us = 100;
	n->q = calloc(NET_MAX, sizeof(*n->q));
	for (int i = 0; i < 2; i++) {
		struct rstream_io io = { end_send, end_deliver, &ends[i] };

		ends[i].net = n;
		ends[i].me = i;
		n->rs[i] = rstream_new(mss, &io, n->now);
	}
}

static void
net_free(struct net *n)
{
	for (size_t i = 0; i < n->nq; i++)
		free(n->q[i].data);
	free(n->q);
	for (int i = 0; i < 2; i++) {
		rstream_free(n->rs[i]);
		free(n->got[i]);
	}
}

/*
 * Run until both ends hold nothing unacknowledged and the network is
 * empty, or max_steps: the time jumps to the next arrival or deadline.
 * Returns the steps taken.
 */
static size_t
net_run(struct net *n, size_t max_steps)
{
	size_t steps;

	for (steps = 0; steps < max_steps; steps++) {
		uint64_t next = UINT64_MAX, d;
		size_t i;

		for (int e = 0; e < 2; e++)
			if ((d = rstream_poll(n->rs[e], n->now)) < next)
				next = d;
		if (n->nq == 0 && rstream_queued(n->rs[0]) == 0 &&
		    rstream_queued(n->rs[1]) == 0)
			return steps;
		for (i = 0; i < n->nq; i++)
			if (n->q[i].at < next)
				next = n->q[i].at;
		CHECK(next != UINT64_MAX);
		if (next > n->now)
			n->now = next;
		/* deliver what is due, in arrival order */
		for (;;) {
			size_t best = SIZE_MAX;
			struct pkt k;

			for (i = 0; i < n->nq; i++)
				if (n->q[i].at <= n->now && (best == SIZE_MAX ||
				    n->q[i].at < n->q[best].at))
					best = i;
			if (best == SIZE_MAX)
				break;
			k = n->q[best];
			n->q[best] = n->q[--n->nq];
			CHECK(rstream_input(n->rs[k.to], k.data, k.len,
			    n->now) == RSTREAM_OK);
			free(k.data);
		}
	}
	return steps;
}

static uint8_t *
pattern(size_t len, uint64_t seed)
{
	uint8_t *p = malloc(len);

	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(rnd(&seed) >> 56);
	return p;
}

/* Send len bytes each way in pieces; both must arrive exact. */
static void
transfer(struct net *n, size_t len)
{
	uint8_t *a = pattern(len, test_seed), *b = pattern(len / 3 + 1,
	    test_seed + 1);

	for (size_t off = 0; off < len; off += 100000)
		rstream_write(n->rs[0], a + off, len - off < 100000 ?
		    len - off : 100000);
	rstream_write(n->rs[1], b, len / 3 + 1);
	net_run(n, 2000000);
	CHECK(n->ngot[1] == len);
	CHECK(memcmp(n->got[1], a, len) == 0);
	CHECK(n->ngot[0] == len / 3 + 1);
	CHECK(memcmp(n->got[0], b, len / 3 + 1) == 0);
	CHECK(rstream_queued(n->rs[0]) == 0);
	CHECK(rstream_inflight(n->rs[0]) == 0);
	free(a);
	free(b);
}

START_TEST(clean_path)
{
	struct net n;

	net_init(&n, 1200);
	transfer(&n, 3u << 20);
	CHECK(rstream_stats(n.rs[0])->retx == 0);
	CHECK(rstream_stats(n.rs[0])->lost == 0);
	CHECK(rstream_stats(n.rs[1])->dup_in == 0);
	CHECK(rstream_srtt(n.rs[0]) >= 100);
	/* slow start only: the window grew far past its start */
	CHECK(rstream_cwnd(n.rs[0]) > 100 * 1200);
	net_free(&n);
}
END_TEST

START_TEST(loss_reorder_dup)
{
	static const double drops[] = { 0.02, 0.1, 0.3 };
	struct net n;

	test_seed = 0x5eed00 + (uint64_t)_i;
	net_init(&n, 1000);
	n.drop = drops[_i % 3];
	n.dup = 0.05;
	n.jitter_us = 300;	/* reorders: a packet can pass three others */
	transfer(&n, 1u << 20);
	CHECK(rstream_stats(n.rs[0])->lost > 0);
	CHECK(rstream_stats(n.rs[0])->retx > 0);
	CHECK(rstream_stats(n.rs[1])->dup_in > 0);
	net_free(&n);
}
END_TEST

START_TEST(window_backs_off_and_recovers)
{
	struct net n;
	size_t before, after, total = 18u << 20;
	uint8_t *a = pattern(total, 7);

	net_init(&n, 1000);
	rstream_write(n.rs[0], a, 2u << 20);
	net_run(&n, 4000000);
	before = rstream_cwnd(n.rs[0]);
	CHECK(before > 200 * 1000);
	n.drop = 0.05;
	rstream_write(n.rs[0], a + (2u << 20), 8u << 20);
	net_run(&n, 4000000);
	after = rstream_cwnd(n.rs[0]);
	/* NewReno under 5% loss keeps a small window */
	CHECK(after < before / 16);
	CHECK(rstream_stats(n.rs[0])->lost > 0);
	n.drop = 0;
	rstream_write(n.rs[0], a + (10u << 20), 8u << 20);
	net_run(&n, 4000000);
	CHECK(rstream_cwnd(n.rs[0]) > 4 * after);
	CHECK(n.ngot[1] == total);
	CHECK(memcmp(n.got[1], a, total) == 0);
	free(a);
	net_free(&n);
}
END_TEST

START_TEST(timeout_backs_off_and_resumes)
{
	struct net n;
	uint8_t *a = pattern(200000, 9);
	uint64_t t0, rto1;
	const struct rstream_stats *st;

	net_init(&n, 1000);
	st = rstream_stats(n.rs[0]);
	rstream_write(n.rs[0], a, 100000);
	net_run(&n, 100000);
	n.blackhole = true;
	rstream_write(n.rs[0], a + 100000, 100000);
	t0 = n.now;
	/* nothing gets through: the timeouts come, further apart each time */
	while (st->rto < 1)
		net_run(&n, 1);
	rto1 = n.now - t0;
	CHECK(rto1 >= RSTREAM_RTO_MIN_US);
	while (st->rto < 5)
		net_run(&n, 1);
	CHECK(n.now - t0 > 8 * rto1);
	CHECK(rstream_cwnd(n.rs[0]) == RSTREAM_MIN_CWND * 1000);
	n.blackhole = false;
	net_run(&n, 1000000);
	CHECK(n.ngot[1] == 200000);
	CHECK(memcmp(n.got[1], a, 200000) == 0);
	free(a);
	net_free(&n);
}
END_TEST

START_TEST(receiver_window)
{
	struct net n;
	uint8_t pkt[RSTREAM_DATA_HDR + 4] = { RSTREAM_DATA };

	net_init(&n, 1000);
	/* a segment past the window is dropped and counted */
	pkt[1] = 0;
	pkt[8] = 0;
	pkt[7] = (RSTREAM_RWND >> 8) & 0xff;
	pkt[8] = RSTREAM_RWND & 0xff;
	CHECK(rstream_input(n.rs[1], pkt, sizeof(pkt), n.now) ==
	    RSTREAM_OK);
	CHECK(rstream_stats(n.rs[1])->out_of_window == 1);
	CHECK(n.ngot[1] == 0);
	/* an ack of what was never sent is refused */
	{
		uint8_t ack[14] = { RSTREAM_ACK, 0, 0, 0, 0, 0, 0, 0, 5,
		    0, 0, 4, 0, 0 };

		CHECK(rstream_input(n.rs[0], ack, sizeof(ack), n.now) ==
		    RSTREAM_OK);
		CHECK(rstream_stats(n.rs[0])->bad == 1);
	}
	net_free(&n);
}
END_TEST

START_TEST(parser)
{
	struct rstream_pkt pk;
	uint8_t b[14 + 8 * (RSTREAM_ACK_RANGES + 1)] = { 0 };

	CHECK(rstream_parse(b, 0, &pk) == RSTREAM_ESHORT);
	b[0] = 9;
	CHECK(rstream_parse(b, 20, &pk) == RSTREAM_ETYPE);
	b[0] = RSTREAM_DATA;
	CHECK(rstream_parse(b, 8, &pk) == RSTREAM_ESHORT);
	CHECK(rstream_parse(b, 9, &pk) == RSTREAM_EEMPTY);
	memset(b + 1, 0, 8);
	b[8] = 7;
	CHECK(rstream_parse(b, 12, &pk) == RSTREAM_OK);
	CHECK(pk.seq == 7 && pk.len == 3 && pk.data == b + 9);
	memset(b, 0, sizeof(b));
	b[0] = RSTREAM_ACK;
	b[8] = 3;		/* cum 3 */
	b[12] = 4;		/* wnd 4 */
	CHECK(rstream_parse(b, 13, &pk) == RSTREAM_ESHORT);
	CHECK(rstream_parse(b, 14, &pk) == RSTREAM_OK);
	CHECK(pk.cum == 3 && pk.wnd == 4 && pk.nranges == 0);
	CHECK(rstream_parse(b, 15, &pk) == RSTREAM_ELONG);
	b[13] = 2;
	CHECK(rstream_parse(b, 21, &pk) == RSTREAM_ESHORT);
	/* ranges (2,4) and (6,9): fine */
	b[17] = 2; b[21] = 4; b[25] = 6; b[29] = 9;
	CHECK(rstream_parse(b, 30, &pk) == RSTREAM_OK);
	CHECK(pk.ranges[1].lo == 6 && pk.ranges[1].hi == 9);
	b[25] = 4;		/* touching the one before: not apart */
	CHECK(rstream_parse(b, 30, &pk) == RSTREAM_ERANGE);
	b[25] = 6; b[29] = 6;	/* empty */
	CHECK(rstream_parse(b, 30, &pk) == RSTREAM_ERANGE);
	b[29] = 9; b[17] = 0;	/* lo 0 is cum itself, never held */
	CHECK(rstream_parse(b, 30, &pk) == RSTREAM_ERANGE);
	b[17] = 2; b[27] = 0x10;	/* hi past the window */
	b[26] = 0x10;
	CHECK(rstream_parse(b, 30, &pk) == RSTREAM_ERANGE);
	b[13] = RSTREAM_ACK_RANGES + 1;
	CHECK(rstream_parse(b, sizeof(b), &pk) == RSTREAM_ERANGE);
}
END_TEST

static Suite *
rstream_suite(void)
{
	Suite *s = suite_create("rstream");
	TCase *tc = tcase_create("core");
	const char *seed = getenv("RSTREAM_TEST_SEED");

	if (seed != NULL)
		test_seed = strtoull(seed, NULL, 0);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, parser);
	tcase_add_test(tc, clean_path);
	tcase_add_loop_test(tc, loss_reorder_dup, 0, 6);
	tcase_add_test(tc, window_backs_off_and_recovers);
	tcase_add_test(tc, timeout_backs_off_and_resumes);
	tcase_add_test(tc, receiver_window);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(rstream_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
