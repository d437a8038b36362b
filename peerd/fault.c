/*
 * fault.c: the fault filter (see fault.h).  Rules are few (one per remote
 * peer at most, plus an "any" rule), so a linear scan is the index.
 * Randomness comes from a seeded xorshift so a run's faults can be
 * replayed with the same seed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "member.h"
#include "rng.h"
#include "trace.h"
#include "xmalloc.h"

static struct fault_rule	*rules;
static size_t			 nrules;
static uint64_t			 fault_rng = 0x9e3779b97f4a7c15ull;

void
fault_seed(uint64_t seed)
{
	fault_rng = seed ? seed : 0x9e3779b97f4a7c15ull;
}


static double
rng_unit(void)
{
	return (double)(rng_xorshift64(&fault_rng) >> 11) / 9007199254740992.0;
}

static struct fault_rule *
rule_for(const uint8_t id[IDENTITY_ID_LEN])
{
	struct fault_rule *any = NULL;

	for (size_t i = 0; i < nrules; i++) {
		if (rules[i].any)
			any = &rules[i];
		else if (memcmp(rules[i].id, id, IDENTITY_ID_LEN) == 0)
			return &rules[i];
	}
	return any;
}

int
fault_on_send(const uint8_t id[IDENTITY_ID_LEN], uint64_t *delay_us)
{
	struct fault_rule *r = rule_for(id);

	*delay_us = 0;
	if (r == NULL)
		return 0;
	if (r->partitioned)
		return -1;
	if (r->drop > 0 && rng_unit() < r->drop)
		return -1;
	if (r->delay_ms > 0 || r->jitter_ms > 0) {
		uint64_t j = r->jitter_ms ?
		    rng_xorshift64(&fault_rng) % ((uint64_t)r->jitter_ms * 1000u +
		    1) : 0;

		*delay_us = (uint64_t)r->delay_ms * 1000u + j;
	}
	return 0;
}

bool
fault_on_recv(const uint8_t id[IDENTITY_ID_LEN])
{
	struct fault_rule *r = rule_for(id);

	return r != NULL && r->partitioned;
}

void
fault_clear(void)
{
	free(rules);
	rules = NULL;
	nrules = 0;
	trace_add("fault", "cleared");
}

/* A peer named by PeerId text or by member name. */
static int
fault_resolve(const char *who, uint8_t id[IDENTITY_ID_LEN])
{
	struct member *m;

	if (identity_peer_id_parse(who, id) == 0)
		return 0;
	if ((m = member_named(who)) == NULL)
		return -1;
	memcpy(id, m->id, IDENTITY_ID_LEN);
	return 0;
}

static struct fault_rule *
rule_get(bool any, const uint8_t *id)
{
	for (size_t i = 0; i < nrules; i++)
		if (rules[i].any == any && (any ||
		    memcmp(rules[i].id, id, IDENTITY_ID_LEN) == 0))
			return &rules[i];
	rules = xreallocarray(rules, nrules + 1, sizeof(*rules));
	memset(&rules[nrules], 0, sizeof(rules[nrules]));
	rules[nrules].any = any;
	if (!any)
		memcpy(rules[nrules].id, id, IDENTITY_ID_LEN);
	return &rules[nrules++];
}

/*
 * {"clear": true} | {"peer": NAME|PEERID|"*", "drop": 0.1, "delay_ms": 5,
 *  "jitter_ms": 2} | {"partition": [NAME|PEERID, ...]} (replaces the set
 * of peers this one is cut off from; [] heals).
 */
int
fault_apply(json_t *args, char *msg, size_t msglen)
{
	json_t *part = json_object_get(args, "partition");
	json_t *v;
	const char *peer;
	uint8_t id[IDENTITY_ID_LEN];
	size_t i;

	if (json_is_true(json_object_get(args, "clear"))) {
		fault_clear();
		return 0;
	}
	if (part != NULL) {
		if (!json_is_array(part)) {
			snprintf(msg, msglen, "fault: \"partition\" must be an "
			    "array of peer names or ids");
			return -1;
		}
		json_array_foreach(part, i, v)
			if (!json_is_string(v) ||
			    fault_resolve(json_string_value(v), id) == -1) {
				snprintf(msg, msglen, "fault: partition[%zu]: "
				    "unknown peer", i);
				return -1;
			}
		for (size_t k = 0; k < nrules; k++)
			rules[k].partitioned = false;
		json_array_foreach(part, i, v) {
			fault_resolve(json_string_value(v), id);
			rule_get(false, id)->partitioned = true;
		}
		trace_add("fault", "partition set to %zu peers",
		    json_array_size(part));
		return 0;
	}
	peer = json_string_value(json_object_get(args, "peer"));
	if (peer == NULL) {
		snprintf(msg, msglen, "fault: give \"clear\", \"partition\" or "
		    "\"peer\"");
		return -1;
	}
	bool any = strcmp(peer, "*") == 0;
	if (!any && fault_resolve(peer, id) == -1) {
		snprintf(msg, msglen, "fault: unknown peer \"%.64s\"", peer);
		return -1;
	}
	double drop = json_number_value(json_object_get(args, "drop"));
	json_int_t delay = json_integer_value(json_object_get(args, "delay_ms"));
	json_int_t jitter = json_integer_value(json_object_get(args,
	    "jitter_ms"));
	if (!(drop >= 0 && drop <= 1) || delay < 0 || delay > 600000 ||
	    jitter < 0 || jitter > 600000) {
		snprintf(msg, msglen, "fault: drop must be 0..1, delay_ms and "
		    "jitter_ms 0..600000");
		return -1;
	}
	struct fault_rule *r = rule_get(any, id);
	r->drop = drop;
	r->delay_ms = (uint32_t)delay;
	r->jitter_ms = (uint32_t)jitter;
	trace_add("fault", "peer %s: drop %.3f delay %u ms jitter %u ms",
	    peer, drop, r->delay_ms, r->jitter_ms);
	return 0;
}

json_t *
fault_json(void)
{
	json_t *arr = json_array();
	char pid[IDENTITY_PEERID_MAX];

	for (size_t i = 0; i < nrules; i++) {
		struct fault_rule *r = &rules[i];

		if (r->any)
			snprintf(pid, sizeof(pid), "*");
		else
			identity_peer_id_of(r->id, pid);
		json_array_append_new(arr, json_pack("{s:s, s:f, s:i, s:i, s:b}",
		    "peer", pid, "drop", r->drop, "delay_ms", (int)r->delay_ms,
		    "jitter_ms", (int)r->jitter_ms, "partitioned",
		    r->partitioned));
	}
	return arr;
}
