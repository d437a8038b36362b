/*
 * hlc.c: hybrid logical clock (see hlc.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dcbor.h"
#include "hlc.h"

uint64_t
hlc_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void
hlc_init(struct hlc *c, uint64_t node)
{
	memset(c, 0, sizeof(*c));
	c->node = node;
	c->last.node = node;
}

static uint32_t
sat_inc(uint32_t v)
{
	return v == UINT32_MAX ? v : v + 1;
}

struct hlc_stamp
hlc_now(struct hlc *c, uint64_t wall_ms)
{
	if (wall_ms > c->last.phys) {
		c->last.phys = wall_ms;
		c->last.logical = 0;
	} else
		c->last.logical = sat_inc(c->last.logical);
	c->last.node = c->node;
	return c->last;
}

bool
hlc_update(struct hlc *c, const struct hlc_stamp *remote, uint64_t wall_ms,
    struct hlc_stamp *out)
{
	uint64_t rphys = remote->phys, p;
	bool capped = false;

	if (rphys > wall_ms + HLC_MAX_AHEAD_MS) {
		rphys = wall_ms + HLC_MAX_AHEAD_MS;
		capped = true;
	}
	p = wall_ms;
	if (c->last.phys > p)
		p = c->last.phys;
	if (rphys > p)
		p = rphys;
	if (p == c->last.phys && p == rphys) {
		uint32_t m = c->last.logical > remote->logical ?
		    c->last.logical : remote->logical;

		c->last.logical = sat_inc(m);
	} else if (p == c->last.phys)
		c->last.logical = sat_inc(c->last.logical);
	else if (p == rphys)
		c->last.logical = capped ? 0 : sat_inc(remote->logical);
	else
		c->last.logical = 0;
	c->last.phys = p;
	c->last.node = c->node;
	if (out != NULL)
		*out = c->last;
	return capped;
}

int
hlc_cmp(const struct hlc_stamp *a, const struct hlc_stamp *b)
{
	if (a->phys != b->phys)
		return a->phys < b->phys ? -1 : 1;
	if (a->logical != b->logical)
		return a->logical < b->logical ? -1 : 1;
	if (a->node != b->node)
		return a->node < b->node ? -1 : 1;
	return 0;
}

void
hlc_encode(struct dcbor_buf *b, const struct hlc_stamp *s)
{
	dcbor_put_array(b, 3);
	dcbor_put_uint(b, s->phys);
	dcbor_put_uint(b, s->logical);
	dcbor_put_uint(b, s->node);
}

int
hlc_parse(struct dcbor_rd *rd, struct hlc_stamp *s)
{
	uint64_t n, logical;

	if (dcbor_get_array(rd, &n) == -1)
		return -1;
	if (n != 3) {
		rd->err = DCBOR_ETYPE;
		return -1;
	}
	if (dcbor_get_uint(rd, &s->phys) == -1 ||
	    dcbor_get_uint(rd, &logical) == -1 ||
	    dcbor_get_uint(rd, &s->node) == -1)
		return -1;
	if (logical > UINT32_MAX) {
		rd->err = DCBOR_ERANGE;
		return -1;
	}
	s->logical = (uint32_t)logical;
	return 0;
}

void
hlc_format(const struct hlc_stamp *s, char *buf, size_t len)
{
	snprintf(buf, len, "%" PRIu64 ".%" PRIu32 ".%016" PRIx64, s->phys,
	    s->logical, s->node);
}

int
hlc_parse_text(const char *text, struct hlc_stamp *s)
{
	char *end;
	unsigned long long phys, logical, node;

	phys = strtoull(text, &end, 10);
	if (end == text || *end != '.')
		return -1;
	text = end + 1;
	logical = strtoull(text, &end, 10);
	if (end == text || *end != '.' || logical > UINT32_MAX)
		return -1;
	text = end + 1;
	node = strtoull(text, &end, 16);
	if (end == text || *end != '\0')
		return -1;
	s->phys = phys;
	s->logical = (uint32_t)logical;
	s->node = node;
	return 0;
}
