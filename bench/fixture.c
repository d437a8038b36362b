/*
 * fixture.c: the typical entry the Template, LocalSpace and Entry rows
 * work on (fixture.h).
 */
#include <stdio.h>
#include <string.h>

#include "dcbor.h"
#include "fixture.h"

struct entry *
fixture_entry(uint64_t i, uint64_t phys, uint64_t lease_ms, int kind)
{
	static const uint8_t issuer[IDENTITY_PUB_LEN] = { 0x42, 0x17 };
	struct entry_spec spec;
	struct dcbor_buf b;
	struct entry *e = NULL;
	char owner[32], title[64];
	const char *k;

	if (kind == FIXTURE_KIND_ALT)
		kind = (int)(i % 2);
	k = kind == 0 ? "build" : "test";
	snprintf(owner, sizeof(owner), "agent-%llu",
	    (unsigned long long)(i % 16));
	snprintf(title, sizeof(title), "compile module %llu of the fleet lab",
	    (unsigned long long)i);
	dcbor_buf_init(&b);
	dcbor_put_map(&b, 8);
	dcbor_put_cstr(&b, "id");
	dcbor_put_uint(&b, i);
	dcbor_put_cstr(&b, "done");
	dcbor_put_bool(&b, false);
	dcbor_put_cstr(&b, "kind");
	dcbor_put_cstr(&b, k);
	dcbor_put_cstr(&b, "prio");
	dcbor_put_uint(&b, (i * 7) % 10);
	dcbor_put_cstr(&b, "owner");
	dcbor_put_cstr(&b, owner);
	dcbor_put_cstr(&b, "score");
	dcbor_put_float(&b, 0.5 + (double)(i % 100));
	dcbor_put_cstr(&b, "title");
	dcbor_put_cstr(&b, title);
	dcbor_put_cstr(&b, "labels");
	dcbor_put_array(&b, 2);
	dcbor_put_cstr(&b, "ci");
	dcbor_put_cstr(&b, "linux");
	if (dcbor_sort_map(&b, 0) != DCBOR_OK) {
		dcbor_buf_free(&b);
		return NULL;
	}
	memset(&spec, 0, sizeof(spec));
	spec.space = FIXTURE_SPACE;
	spec.type = FIXTURE_TYPE;
	spec.fields = b.data;
	spec.fields_len = b.len;
	spec.issuer = issuer;
	spec.stamp.phys = phys;
	spec.stamp.node = 0x4217;
	spec.lease_ms = lease_ms;
	spec.mono_us = 1000 + i;
	if (entry_new(&spec, &e) != ENTRY_OK)
		e = NULL;
	dcbor_buf_free(&b);
	return e;
}
