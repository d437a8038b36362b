/*
 * fuzz_rstream.c: libFuzzer target for the DTLS binding's frame stream
 * (common/rstream.c): the packet header and acknowledgement parser, and a
 * stream fed whatever packets come.
 *
 * The input is a list of packets, each a one-byte length then that many
 * bytes (a length past the end takes the rest).  Each is parsed on its
 * own: what parses must say exactly what its bytes say (a DATA's bytes
 * point into the packet, an ACK's ranges are above cum, ascending, apart
 * and inside the window).  Then all of them go, in order, into one stream
 * that has written data of its own, with a clock that moves 1 ms a packet
 * and a poll after each: nothing crashes, the stream never delivers more
 * bytes than the DATA it was given, never has more in flight than it
 * wrote, and its window never falls below the floor.
 * Seeds: tests/fuzz/seeds/fuzz_rstream/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rstream.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REQUIRE(c) do { if (!(c)) abort(); } while (0)

static size_t delivered;

static int
sink(void *arg, const uint8_t *p, size_t len)
{
	(void)arg;
	REQUIRE(len > 0 && (p[0] == RSTREAM_DATA || p[0] == RSTREAM_ACK));
	return 0;
}

static void
take(void *arg, const uint8_t *p, size_t len)
{
	(void)arg;
	(void)p;
	delivered += len;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[16384];
	struct rstream_io io = { sink, take, NULL };
	struct rstream_pkt pk;
	struct rstream *rs;
	size_t off = 0, given = 0, mss = 100;
	uint64_t now = 1000000;

	delivered = 0;
	rs = rstream_new(mss, &io, now);
	memset(out, 0x5a, sizeof(out));
	rstream_write(rs, out, sizeof(out));
	rstream_poll(rs, now);
	while (off < size) {
		size_t len = data[off++];
		const uint8_t *p = data + off;

		if (len > size - off)
			len = size - off;
		off += len;
		if (rstream_parse(p, len, &pk) == RSTREAM_OK) {
			REQUIRE(pk.type == RSTREAM_DATA || pk.type == RSTREAM_ACK);
			if (pk.type == RSTREAM_DATA) {
				REQUIRE(pk.data == p + RSTREAM_DATA_HDR);
				REQUIRE(pk.len == len - RSTREAM_DATA_HDR);
				REQUIRE(pk.len > 0);
				given += pk.len;
			} else {
				uint32_t prev = 0;

				REQUIRE(len == 14 + 8 * (size_t)pk.nranges);
				for (uint8_t i = 0; i < pk.nranges; i++) {
					REQUIRE(pk.ranges[i].lo > prev);
					REQUIRE(pk.ranges[i].hi > pk.ranges[i].lo);
					REQUIRE(pk.ranges[i].hi <= RSTREAM_RWND);
					prev = pk.ranges[i].hi;
				}
			}
		}
		rstream_input(rs, p, len, now);
		now += 1000;
		rstream_poll(rs, now);
		REQUIRE(delivered <= given);
		REQUIRE(rstream_inflight(rs) <= sizeof(out));
		REQUIRE(rstream_queued(rs) <= sizeof(out));
		REQUIRE(rstream_cwnd(rs) >= RSTREAM_MIN_CWND * mss);
	}
	rstream_free(rs);
	return 0;
}
