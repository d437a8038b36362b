/*
 * cmd.c: the command table and its handlers (see cmd.h).  Handlers are
 * thin: they turn checked JSON arguments into calls on the subsystems
 * (replica_*, link_*, fault_*) and the results back into JSON.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "clock.h"
#include "cmd.h"
#include "control.h"
#include "hex.h"
#include "fault.h"
#include "gossip.h"
#include "link.h"
#include "load.h"
#include "manifest.h"
#include "log.h"
#include "member.h"
#include "stats.h"
#include "peerd.h"
#include "recon.h"
#include "replica.h"
#include "space.h"
#include "publish.h"
#include "swarm.h"
#include "take.h"
#include "template.h"
#include "trace.h"
#include "transport.h"
#include "view.h"
#include "xmalloc.h"

static void	cmd_hello(struct ctl_req *, struct ctl_client *, json_t *);
static void	cmd_trace(struct ctl_req *, struct ctl_client *, json_t *);
static void	cmd_shutdown(struct ctl_req *, struct ctl_client *, json_t *);
static void	cmd_help(struct ctl_req *, struct ctl_client *, json_t *);
static void	cmd_peers(struct ctl_req *, struct ctl_client *, json_t *);
static void	cmd_connect(struct ctl_req *, struct ctl_client *, json_t *);
static void	cmd_write(struct ctl_req *, struct ctl_client *, json_t *);
static void	cmd_read(struct ctl_req *, struct ctl_client *, json_t *);
static void	cmd_take(struct ctl_req *, struct ctl_client *, json_t *);
static void	cmd_complete(struct ctl_req *, struct ctl_client *, json_t *);
static void	cmd_notify(struct ctl_req *, struct ctl_client *, json_t *);
static void	cmd_takes(struct ctl_req *, struct ctl_client *, json_t *);
static void	cmd_metrics(struct ctl_req *, struct ctl_client *, json_t *);
static void	cmd_fault(struct ctl_req *, struct ctl_client *, json_t *);
static void	cmd_dump(struct ctl_req *, struct ctl_client *, json_t *);
static void	cmd_load(struct ctl_req *, struct ctl_client *, json_t *);
static void	cmd_ids(struct ctl_req *, struct ctl_client *, json_t *);
static void	cmd_reconcile(struct ctl_req *, struct ctl_client *, json_t *);
static void	cmd_debug(struct ctl_req *, struct ctl_client *, json_t *);
static void	cmd_publish(struct ctl_req *, struct ctl_client *, json_t *);
static void	cmd_fetch(struct ctl_req *, struct ctl_client *, json_t *);
static void	cmd_content(struct ctl_req *, struct ctl_client *, json_t *);
static void	cmd_swarm_fault(struct ctl_req *, struct ctl_client *,
		    json_t *);

static const struct cmd_arg args_none[] = { { NULL, 0, false, NULL } };
static const struct cmd_arg args_trace[] = {
	{ "n", CMD_T_INT, false, "how many of the newest events (default 100)" },
	{ NULL, 0, false, NULL }
};
static const struct cmd_arg args_shutdown[] = {
	{ "reason", CMD_T_STR, false, "logged and traced" },
	{ NULL, 0, false, NULL }
};

static const struct cmd_arg args_connect[] = {
	{ "addr", CMD_T_STR, true, "host:port of a peer to dial" },
	{ NULL, 0, false, NULL }
};
static const struct cmd_arg args_write[] = {
	{ "type", CMD_T_STR, true, "entry type, name#vN" },
	{ "fields", CMD_T_OBJ, false, "the payload (at most 64 KiB as CBOR)" },
	{ "lease_ms", CMD_T_INT, false, "time to live (default 3600000)" },
	{ "tags", CMD_T_ARR, false, "strings" },
	{ "space", CMD_T_STR, false, "space name (default \"default\")" },
	{ NULL, 0, false, NULL }
};
static const struct cmd_arg args_read[] = {
	{ "type", CMD_T_STR, true, "entry type" },
	{ "where", CMD_T_ARR, false, "conditions {field, op, value}" },
	{ "all", CMD_T_BOOL, false, "every match, not just the first" },
	{ "limit", CMD_T_INT, false, "at most this many with all (1000)" },
	{ NULL, 0, false, NULL }
};
static const struct cmd_arg args_take[] = {
	{ "type", CMD_T_STR, true, "entry type" },
	{ "where", CMD_T_ARR, false, "conditions {field, op, value}" },
	{ "timeout_ms", CMD_T_INT, false, "give up after (default 0: once)" },
	{ NULL, 0, false, NULL }
};
static const struct cmd_arg args_complete[] = {
	{ "id", CMD_T_STR, true, "entry id (hex)" },
	{ NULL, 0, false, NULL }
};
static const struct cmd_arg args_notify[] = {
	{ "type", CMD_T_STR, false, "entry type (default: every type)" },
	{ "where", CMD_T_ARR, false, "conditions {field, op, value}" },
	{ "events", CMD_T_ARR, false, "WRITTEN, TAKEN, COMPLETED, EXPIRED, "
	    "REAPPEARED (default all)" },
	{ "lease_ms", CMD_T_INT, false, "subscription lifetime (0: forever)" },
	{ NULL, 0, false, NULL }
};
static const struct cmd_arg args_takes[] = {
	{ "since", CMD_T_INT, false, "index of the first take to list" },
	{ NULL, 0, false, NULL }
};
static const struct cmd_arg args_metrics[] = {
	{ "reset", CMD_T_BOOL, false, "zero the counters after reading" },
	{ "only", CMD_T_ARR, false, "dotted names to answer: a section "
	    "(\"gauges\"), a figure (\"counters.frames.in\") or a prefix "
	    "(\"counters.frames\"); default all" },
	{ NULL, 0, false, NULL }
};
static const struct cmd_arg args_fault[] = {
	{ "clear", CMD_T_BOOL, false, "remove every fault" },
	{ "peer", CMD_T_STR, false, "peer name, PeerId or \"*\"" },
	{ "drop", CMD_T_NUM, false, "drop probability 0..1 on send" },
	{ "delay_ms", CMD_T_INT, false, "added delay on send" },
	{ "jitter_ms", CMD_T_INT, false, "added random delay 0..jitter" },
	{ "partition", CMD_T_ARR, false, "peers cut off (replaces the set)" },
	{ NULL, 0, false, NULL }
};
static const struct cmd_arg args_load[] = {
	{ "op", CMD_T_STR, true, "write, bulk, take, status or stop" },
	{ "name", CMD_T_STR, false, "the load's name" },
	{ "count", CMD_T_INT, false, "write: entries; take: stop after" },
	{ "rate", CMD_T_NUM, false, "write: per second (0: flat out)" },
	{ "type", CMD_T_STR, false, "entry type (default task#v1)" },
	{ "payload_bytes", CMD_T_INT, false, "write: padding per entry (64)" },
	{ "lease_ms", CMD_T_INT, false, "write: entry lease (3600000)" },
	{ "workers", CMD_T_INT, false, "take: concurrent takers (1)" },
	{ "complete", CMD_T_BOOL, false, "take: complete what is won (true)" },
	{ "timeout_ms", CMD_T_INT, false, "take: per take (1000)" },
	{ "ids", CMD_T_BOOL, false, "status: list what was written" },
	{ "seed", CMD_T_INT, false, "bulk: the issuer's seed (0)" },
	{ "from", CMD_T_INT, false, "bulk: the first seq (0)" },
	{ "stamp_ms", CMD_T_INT, false, "bulk: the entries' stamp, wall ms "
	    "(now)" },
	{ NULL, 0, false, NULL }
};
static const struct cmd_arg args_reconcile[] = {
	{ "peer", CMD_T_STR, true, "member name or PeerId, linked" },
	{ "method", CMD_T_STR, false, "digest, negentropy or riblt "
	    "(default --reconcile)" },
	{ "timeout_ms", CMD_T_INT, false, "give up after (60000)" },
	{ NULL, 0, false, NULL }
};
static const struct cmd_arg args_debug[] = {
	{ "hang", CMD_T_BOOL, false, "block inside this handler forever" },
	{ "spin_ms", CMD_T_INT, false, "keep the loop busy this long "
	    "(0..120000)" },
	{ NULL, 0, false, NULL }
};
static const struct cmd_arg args_dump[] = {
	{ "limit", CMD_T_INT, false, "entries to include (default 20)" },
	{ NULL, 0, false, NULL }
};

static const struct cmd_arg args_publish[] = {
	{ "path", CMD_T_STR, false, "a file to publish (copied into the store)" },
	{ "size", CMD_T_INT, false, "bytes of generated content (with seed)" },
	{ "seed", CMD_T_INT, false, "seed of the generated content (0)" },
	{ "piece_kib", CMD_T_INT, false, "piece size in KiB (1024; at most 4096)" },
	{ NULL, 0, false, NULL }
};
static const struct cmd_arg args_fetch[] = {
	{ "cid", CMD_T_STR, true, "content id, 64 hex digits" },
	{ "wait", CMD_T_BOOL, false, "answer when complete, not at the manifest" },
	{ "timeout_ms", CMD_T_INT, false, "answer timeout (10000; 600000 with wait)" },
	{ "inflight", CMD_T_INT, false, "requests in flight per source (4)" },
	{ "order", CMD_T_STR, false, "rarest (default) or random" },
	{ "stall_ms", CMD_T_INT, false, "no piece for this long is a stall (30000)" },
	{ NULL, 0, false, NULL }
};
static const struct cmd_arg args_content[] = {
	{ "cid", CMD_T_STR, false, "one content (default: all)" },
	{ "sha256", CMD_T_BOOL, false, "hash a complete blob whole if not "
	    "yet done (default true); false answers at once" },
	{ NULL, 0, false, NULL }
};
static const struct cmd_arg args_swarm_fault[] = {
	{ "corrupt_pieces", CMD_T_BOOL, false, "TEST ONLY: flip a byte in every "
	    "piece served" },
	{ "short_pieces", CMD_T_BOOL, false, "TEST ONLY: send every piece a "
	    "byte short of its signed length" },
	{ NULL, 0, false, NULL }
};

static const struct cmd_entry cmd_table[] = {
	{ "hello", args_none, cmd_hello,
	    "name, peer_id, pid, listen, binding, ktls, version, uptime" },
	{ "help", args_none, cmd_help, "the commands and their arguments" },
	{ "peers", args_none, cmd_peers, "members and links" },
	{ "connect", args_connect, cmd_connect, "dial a peer (kept, redialed)" },
	{ "write", args_write, cmd_write, "write an entry" },
	{ "read", args_read, cmd_read, "read matching entries (local)" },
	{ "take", args_take, cmd_take, "take an entry (lease race)" },
	{ "complete", args_complete, cmd_complete, "mark a taken entry done" },
	{ "notify", args_notify, cmd_notify, "stream events on this connection" },
	{ "takes", args_takes, cmd_takes, "the takes this peer won" },
	{ "metrics", args_metrics, cmd_metrics, "counters, histograms, CPU, RSS" },
	{ "trace", args_trace, cmd_trace, "the newest events of the trace ring" },
	{ "fault", args_fault, cmd_fault, "inject or clear faults" },
	{ "load", args_load, cmd_load, "in-peer workloads: start, poll, stop" },
	{ "ids", args_none, cmd_ids, "every record's id and state" },
	{ "reconcile", args_reconcile, cmd_reconcile, "one anti-entropy "
	    "reconciliation with a member, and what it cost" },
	{ "publish", args_publish, cmd_publish, "publish a file or generated "
	    "content to the swarm" },
	{ "fetch", args_fetch, cmd_fetch, "fetch content by cid from the swarm" },
	{ "content", args_content, cmd_content, "content held or fetched: "
	    "progress, sources, served" },
	{ "swarm_fault", args_swarm_fault, cmd_swarm_fault, "test-only swarm "
	    "faults" },
	{ "dump", args_dump, cmd_dump, "state for debugging" },
	{ "shutdown", args_shutdown, cmd_shutdown, "stop the peer cleanly" },
	{ "debug", args_debug, cmd_debug, "test hooks (needs --test-hooks)" },
};

static const struct cmd_entry *
cmd_find(const char *name)
{
	for (size_t i = 0; i < sizeof(cmd_table) / sizeof(cmd_table[0]); i++)
		if (strcmp(cmd_table[i].name, name) == 0)
			return &cmd_table[i];
	return NULL;
}

static unsigned
cmd_json_type(json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_STRING:
		return CMD_T_STR;
	case JSON_INTEGER:
		return CMD_T_INT | CMD_T_NUM;
	case JSON_REAL:
		return CMD_T_NUM;
	case JSON_TRUE:
	case JSON_FALSE:
		return CMD_T_BOOL;
	case JSON_OBJECT:
		return CMD_T_OBJ;
	case JSON_ARRAY:
		return CMD_T_ARR;
	default:
		return 0;
	}
}

static const char *
cmd_type_names(unsigned types, char *buf, size_t len)
{
	static const char *const names[] = { "string", "integer", "number",
	    "boolean", "object", "array" };

	buf[0] = '\0';
	for (size_t i = 0; i < 6; i++) {
		if (!(types & (1u << i)))
			continue;
		size_t used = strlen(buf);

		snprintf(buf + used, len - used, "%s%s", used ? " or " : "",
		    names[i]);
	}
	return buf;
}

const char *
cmd_check_args(const struct cmd_entry *ce, json_t *args, char *buf,
    size_t len)
{
	const struct cmd_arg *a;
	const char *key;
	json_t *v;
	char tn[64];

	if (args != NULL && !json_is_object(args) && !json_is_null(args)) {
		snprintf(buf, len, "\"args\" must be an object");
		return buf;
	}
	if (args != NULL && json_is_object(args)) {
		json_object_foreach(args, key, v) {
			for (a = ce->args; a->name != NULL; a++)
				if (strcmp(a->name, key) == 0)
					break;
			if (a->name == NULL) {
				snprintf(buf, len, "%s: unknown argument \"%s\"",
				    ce->name, key);
				return buf;
			}
			if (!(cmd_json_type(v) & a->types)) {
				snprintf(buf, len, "%s: \"%s\" must be %s",
				    ce->name, key, cmd_type_names(a->types, tn,
				    sizeof(tn)));
				return buf;
			}
		}
	}
	for (a = ce->args; a->name != NULL; a++)
		if (a->required && (args == NULL ||
		    json_object_get(args, a->name) == NULL)) {
			snprintf(buf, len, "%s: missing argument \"%s\"",
			    ce->name, a->name);
			return buf;
		}
	return NULL;
}

void
cmd_dispatch(struct ctl_req *req, struct ctl_client *c, const char *name,
    json_t *args)
{
	const struct cmd_entry *ce;
	char msg[256];
	json_t *empty = NULL;

	if ((ce = cmd_find(name)) == NULL) {
		ctl_fail(req, CTL_UNKNOWN_CMD, "unknown command \"%.64s\" "
		    "(\"help\" lists them)", name);
		return;
	}
	req->cmd = ce->name;
	if (cmd_check_args(ce, args, msg, sizeof(msg)) != NULL) {
		ctl_fail(req, CTL_BAD_ARGS, "%s", msg);
		return;
	}
	if (args == NULL || json_is_null(args))
		args = empty = json_object();
	ce->exec(req, c, args);
	json_decref(empty);
}

json_int_t
cmd_int(json_t *args, const char *name, json_int_t dflt)
{
	json_t *v = json_object_get(args, name);

	return json_is_integer(v) ? json_integer_value(v) : dflt;
}

const char *
cmd_str(json_t *args, const char *name, const char *dflt)
{
	json_t *v = json_object_get(args, name);

	return json_is_string(v) ? json_string_value(v) : dflt;
}

bool
cmd_bool(json_t *args, const char *name, bool dflt)
{
	json_t *v = json_object_get(args, name);

	return json_is_boolean(v) ? json_is_true(v) : dflt;
}

/* ---- handlers ---------------------------------------------------------- */

static void
cmd_hello(struct ctl_req *req, struct ctl_client *c, json_t *args)
{
	(void)c;
	(void)args;
	/* activity: a number that moves while the peer does anything. */
	ctl_ok(req, json_pack("{s:s, s:s, s:I, s:s, s:s, s:s, s:s, s:s, s:f, "
	    "s:I}",
	    "name", pd->conf.name, "peer_id", pd->ident.peer_id,
	    "pid", (json_int_t)getpid(), "listen", pd->listen_addr,
	    "control", pd->conf.control, "binding", pd->conf.binding,
	    "ktls", transport_ktls(), "version", PEERD_VERSION,
	    "uptime_s", (double)peerd_uptime_us() / 1e6,
	    "activity", (json_int_t)stats_activity()));
}

static void
cmd_help(struct ctl_req *req, struct ctl_client *c, json_t *args)
{
	json_t *cmds = json_array();

	(void)c;
	(void)args;
	for (size_t i = 0; i < sizeof(cmd_table) / sizeof(cmd_table[0]); i++) {
		const struct cmd_entry *ce = &cmd_table[i];
		json_t *ja = json_array();
		char tn[64];

		for (const struct cmd_arg *a = ce->args; a->name; a++)
			json_array_append_new(ja, json_pack("{s:s, s:s, s:b, s:s}",
			    "name", a->name, "type", cmd_type_names(a->types,
			    tn, sizeof(tn)), "required", a->required,
			    "help", a->help ? a->help : ""));
		json_array_append_new(cmds, json_pack("{s:s, s:s, s:o}",
		    "name", ce->name, "help", ce->help, "args", ja));
	}
	ctl_ok(req, json_pack("{s:o}", "commands", cmds));
}

static void
cmd_trace(struct ctl_req *req, struct ctl_client *c, json_t *args)
{
	json_int_t n = cmd_int(args, "n", 100);

	(void)c;
	if (n < 0) {
		ctl_fail(req, CTL_BAD_ARGS, "trace: \"n\" must be >= 0");
		return;
	}
	ctl_ok(req, json_pack("{s:I, s:o}", "total", (json_int_t)trace_total(),
	    "events", trace_json((size_t)n)));
}

static void
cmd_shutdown(struct ctl_req *req, struct ctl_client *c, json_t *args)
{
	const char *why = cmd_str(args, "reason", "control request");

	(void)c;
	ctl_ok(req, json_pack("{s:b}", "stopping", 1));
	peerd_shutdown(why);
}

static struct template *
cmd_template(struct ctl_req *req, json_t *args, const char *dflt_type)
{
	json_t *tj = json_object();
	struct template *t;
	char err[256];

	(void)dflt_type;
	json_object_set(tj, "type", json_object_get(args, "type"));
	if (json_object_get(args, "where") != NULL)
		json_object_set(tj, "where", json_object_get(args, "where"));
	t = template_from_json(tj, err, sizeof(err));
	json_decref(tj);
	if (t == NULL)
		ctl_fail(req, CTL_BAD_ARGS, "%s: %s", req->cmd, err);
	return t;
}

static void
cmd_peers(struct ctl_req *req, struct ctl_client *c, json_t *args)
{
	(void)c;
	(void)args;
	ctl_ok(req, json_pack("{s:o, s:o, s:o}", "members", member_list_json(),
	    "links", link_list_json(), "view", view_json()));
}

static void
cmd_connect(struct ctl_req *req, struct ctl_client *c, json_t *args)
{
	const char *addr = cmd_str(args, "addr", "");

	(void)c;
	if (view_add_seed(addr) == -1) {
		ctl_fail(req, CTL_BAD_ARGS, "connect: \"%.64s\" is not "
		    "host:port", addr);
		return;
	}
	ctl_ok(req, json_pack("{s:s}", "dialing", addr));
}

static void
cmd_write(struct ctl_req *req, struct ctl_client *c, json_t *args)
{
	char err[256];
	json_t *res;

	(void)c;
	if ((res = replica_write(args, err, sizeof(err))) == NULL) {
		ctl_fail(req, strstr(err, "full") ? CTL_BUSY :
		    strstr(err, "too_big") ? CTL_TOO_LARGE : CTL_BAD_ARGS,
		    "%s", err);
		return;
	}
	ctl_ok(req, res);
}

static void
cmd_read(struct ctl_req *req, struct ctl_client *c, json_t *args)
{
	struct template *t;
	json_int_t limit = cmd_int(args, "limit", 1000);

	(void)c;
	if (limit < 1) {
		ctl_fail(req, CTL_BAD_ARGS, "read: \"limit\" must be >= 1");
		return;
	}
	if ((t = cmd_template(req, args, NULL)) == NULL)
		return;
	ctl_ok(req, replica_read(t, cmd_bool(args, "all", false),
	    (size_t)limit));
	template_free(t);
}

static void
cmd_take_done(void *arg, const struct space_rec *won,
    const struct take_end *end)
{
	struct ctl_req *req = arg;
	char peer[IDENTITY_PEERID_MAX];
	json_t *res;

	res = json_pack("{s:o, s:i}", "entry", won ? replica_entry_json(won) :
	    json_null(), "attempts", (int)end->attempts);
	if (end->nsilent > 0) {
		json_t *silent = json_array();

		for (size_t i = 0; i < end->nsilent; i++) {
			identity_peer_id_of(end->silent[i], peer);
			json_array_append_new(silent, json_string(peer));
		}
		json_object_set_new(res, "unanswered", silent);
	}
	/* A reply to a client that has gone is dropped by ctl_ok. */
	ctl_ok(req, res);
}

static void
cmd_take(struct ctl_req *req, struct ctl_client *c, json_t *args)
{
	struct template *t;
	json_int_t timeout = cmd_int(args, "timeout_ms", 0);

	(void)c;
	if (timeout < 0 || timeout > 86400000) {
		ctl_fail(req, CTL_BAD_ARGS, "take: \"timeout_ms\" must be "
		    "0..86400000");
		return;
	}
	if ((t = cmd_template(req, args, NULL)) == NULL)
		return;
	take_start(t, (uint32_t)timeout, cmd_take_done, req);
}

static void
cmd_complete(struct ctl_req *req, struct ctl_client *c, json_t *args)
{
	const char *idhex = cmd_str(args, "id", "");
	uint8_t id[ENTRY_ID_LEN];
	int rc;

	(void)c;
	if (hex_decode(idhex, id, sizeof(id)) == -1) {
		ctl_fail(req, CTL_BAD_ARGS, "complete: \"id\" must be %d hex "
		    "digits", 2 * ENTRY_ID_LEN);
		return;
	}
	rc = replica_complete(id);
	if (rc == SPACE_ENOENT)
		ctl_fail(req, CTL_NOT_FOUND, "complete: no entry %s", idhex);
	else if (rc != SPACE_OK && rc != SPACE_EALREADY)
		ctl_fail(req, CTL_INTERNAL, "complete: %s", space_strerror(rc));
	else
		ctl_ok(req, json_pack("{s:b}", "already", rc == SPACE_EALREADY));
}

/* ---- notify: subscriptions to the replica's events ---------------------- */

struct notify_sub {
	struct template	*t;
	unsigned	 mask;		/* NOTIFY_BIT(space_event) */
	uint64_t	 expires_ms;	/* monotonic; 0 never */
};

#define NOTIFY_BIT(ev)	(1u << (ev))

static const char *const notify_names[] = { "WRITTEN", "TAKEN",
    "COMPLETED", "EXPIRED", "REAPPEARED" };

/* the upper-case event names of docs/control.md (notify). */
static const char *
notify_name(enum space_event ev)
{
	return (unsigned)ev <= SPACE_EV_REAPPEARED ? notify_names[ev] :
	    "UNKNOWN";
}

/* Parse ["WRITTEN", ...] (or none: all) into a mask; -1 for a bad name. */
static int
notify_mask(json_t *arr, unsigned *mask)
{
	size_t i;
	json_t *v;

	*mask = 0;
	if (arr == NULL) {
		*mask = 0x1f;
		return 0;
	}
	json_array_foreach(arr, i, v) {
		int ev;

		if (!json_is_string(v))
			return -1;
		for (ev = SPACE_EV_WRITTEN; ev <= SPACE_EV_REAPPEARED; ev++)
			if (strcasecmp(json_string_value(v),
			    notify_name((enum space_event)ev)) == 0)
				break;
		if (ev > SPACE_EV_REAPPEARED)
			return -1;
		*mask |= NOTIFY_BIT(ev);
	}
	return 0;
}

struct notify_arg {
	enum space_event	 ev;
	const struct space_rec	*r;
};

static void
notify_one(struct ctl_client *c, void *subp, void *argp)
{
	struct notify_sub *sub = subp;
	struct notify_arg *a = argp;

	if (!(sub->mask & NOTIFY_BIT(a->ev)))
		return;
	if (sub->expires_ms != 0 && clock_mono_ms() >= sub->expires_ms)
		return;
	if (sub->t != NULL && (space_rec_entry(a->r) == NULL ||
	    !template_match(sub->t, space_rec_entry(a->r))))
		return;
	pd_count(notify_sent);
	ctl_event(c, json_pack("{s:s, s:s, s:o}", "event", "notify",
	    "kind", notify_name(a->ev), "entry", replica_entry_json(a->r)));
}

/* The replica's observer: each event to every subscribed client. */
static void
notify_event(void *arg, enum space_event ev, const struct space_rec *r)
{
	struct notify_arg na = { ev, r };

	(void)arg;
	ctl_foreach_sub(notify_one, &na);
}

static void
notify_sub_free(void *p)
{
	struct notify_sub *sub = p;

	template_free(sub->t);
	free(sub);
}

static void
cmd_notify(struct ctl_req *req, struct ctl_client *c, json_t *args)
{
	struct template *t = NULL;
	struct notify_sub *sub;
	unsigned mask;
	json_int_t lease = cmd_int(args, "lease_ms", 0);

	if (notify_mask(json_object_get(args, "events"), &mask) == -1) {
		ctl_fail(req, CTL_BAD_ARGS, "notify: \"events\" lists "
		    "WRITTEN, TAKEN, COMPLETED, EXPIRED, REAPPEARED");
		return;
	}
	if (lease < 0) {
		ctl_fail(req, CTL_BAD_ARGS, "notify: \"lease_ms\" must be >= 0");
		return;
	}
	if (json_object_get(args, "type") != NULL &&
	    (t = cmd_template(req, args, NULL)) == NULL)
		return;
	if (t == NULL && json_object_get(args, "where") != NULL) {
		ctl_fail(req, CTL_BAD_ARGS, "notify: \"where\" needs \"type\"");
		return;
	}
	sub = xcalloc(1, sizeof(*sub));
	sub->t = t;
	sub->mask = mask;
	sub->expires_ms = lease ? clock_mono_ms() + (uint64_t)lease : 0;
	ctl_subscribe(c, sub, notify_sub_free);
	replica_on_event(notify_event, NULL);
	ctl_ok(req, json_pack("{s:b}", "subscribed", 1));
}

static void
cmd_takes(struct ctl_req *req, struct ctl_client *c, json_t *args)
{
	json_int_t since = cmd_int(args, "since", 0);

	(void)c;
	ctl_ok(req, take_won_json(since < 0 ? 0 : (size_t)since));
}

static void
cmd_metrics(struct ctl_req *req, struct ctl_client *c, json_t *args)
{
	json_t *only = json_object_get(args, "only"), *v;
	size_t i;

	(void)c;
	json_array_foreach(only, i, v) {
		if (!json_is_string(v)) {
			ctl_fail(req, CTL_BAD_ARGS, "only[%zu]: not a string", i);
			return;
		}
	}
	ctl_ok(req, stats_json(only));
	if (cmd_bool(args, "reset", false))
		stats_reset();
}

static void
cmd_fault(struct ctl_req *req, struct ctl_client *c, json_t *args)
{
	char msg[256];

	(void)c;
	if (fault_apply(args, msg, sizeof(msg)) == -1) {
		ctl_fail(req, CTL_BAD_ARGS, "%s", msg);
		return;
	}
	ctl_ok(req, json_pack("{s:o}", "faults", fault_json()));
}

static void
cmd_dump(struct ctl_req *req, struct ctl_client *c, json_t *args)
{
	json_int_t limit = cmd_int(args, "limit", 20);

	(void)c;
	ctl_ok(req, json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:I, s:I}",
	    "name", pd->conf.name, "peer_id", pd->ident.peer_id,
	    "space", replica_dump_json(limit < 0 ? 0 : (size_t)limit),
	    "members", member_list_json(), "links", link_list_json(),
	    "faults", fault_json(),
	    "control_clients", (json_int_t)control_clients(),
	    "trace_total", (json_int_t)trace_total()));
}

static void
cmd_load(struct ctl_req *req, struct ctl_client *c, json_t *args)
{
	char err[256];
	json_t *res;

	(void)c;
	if ((res = load_command(args, err, sizeof(err))) == NULL) {
		ctl_fail(req, strstr(err, "no load") ? CTL_NOT_FOUND :
		    strstr(err, "still running") ? CTL_BUSY : CTL_BAD_ARGS,
		    "%s", err);
		return;
	}
	ctl_ok(req, res);
}

static void
cmd_ids(struct ctl_req *req, struct ctl_client *c, json_t *args)
{
	(void)c;
	(void)args;
	ctl_ok(req, replica_ids_json());
}

static void
cmd_reconcile_done(void *arg, const struct recon_result *r)
{
	struct ctl_req *req = arg;

	if (!r->ok) {
		ctl_fail(req, strcmp(r->error, "timeout") == 0 ? CTL_TIMEOUT :
		    strstr(r->error, "running") || strstr(r->error, "many") ?
		    CTL_BUSY : CTL_INTERNAL, "reconcile: %s", r->error);
		return;
	}
	ctl_ok(req, json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:f}",
	    "method", recon_method_name(r->method),
	    "rounds", (json_int_t)r->rounds, "bytes", (json_int_t)r->bytes,
	    "record_bytes", (json_int_t)r->record_bytes,
	    "records", (json_int_t)r->records,
	    "payload", (json_int_t)r->payload, "items", (json_int_t)r->items,
	    "ms", r->ms));
}

static void
cmd_reconcile(struct ctl_req *req, struct ctl_client *c, json_t *args)
{
	const char *who = cmd_str(args, "peer", "");
	const char *name = cmd_str(args, "method", NULL);
	json_int_t timeout = cmd_int(args, "timeout_ms", 60000);
	enum recon_method method = (enum recon_method)pd->conf.reconcile;
	struct member *m;

	(void)c;
	if (name != NULL && recon_method_parse(name, &method) == -1) {
		ctl_fail(req, CTL_BAD_ARGS, "reconcile: \"method\" is digest, "
		    "negentropy or riblt");
		return;
	}
	if (timeout < 1 || timeout > 3600000) {
		ctl_fail(req, CTL_BAD_ARGS, "reconcile: \"timeout_ms\" must be "
		    "1..3600000");
		return;
	}
	if ((m = member_named(who)) == NULL || m->link == NULL) {
		ctl_fail(req, CTL_NOT_FOUND, "reconcile: no linked member "
		    "\"%s\"", who);
		return;
	}
	recon_run(m, method, (uint32_t)timeout, cmd_reconcile_done, req);
}

/*
 * A deliberate hang for the watchdog's tests: the loop never comes back,
 * so the peer stops answering while its process lives.  Not inlined, so a
 * backtrace names it.
 */
static void __attribute__((noinline, noreturn))
debug_block_forever(void)
{
	log_warnx("debug: blocking forever on purpose (--test-hooks)");
	for (;;)
		pause();
}

/*
 * A deliberate busy loop for the watchdog's tests: the loop is gone for ms
 * while the process burns CPU, as a peer does that verifies a big batch in
 * one callback or waits for a core on an oversubscribed host.
 */
static void __attribute__((noinline))
debug_spin(uint64_t ms)
{
	uint64_t end = clock_mono_ms() + ms;
	volatile uint64_t x = 0;

	log_warnx("debug: spinning %llu ms on purpose (--test-hooks)",
	    (unsigned long long)ms);
	while (clock_mono_ms() < end)
		x++;
}

static void
cmd_debug(struct ctl_req *req, struct ctl_client *c, json_t *args)
{
	json_int_t spin;

	(void)c;
	if (!pd->conf.test_hooks) {
		ctl_fail(req, CTL_BAD_ARGS, "debug: start the peer with "
		    "--test-hooks to use test hooks");
		return;
	}
	if (cmd_bool(args, "hang", false)) {
		trace_add("debug", "hang requested");
		ctl_ok(req, json_pack("{s:b}", "hanging", 1));
		debug_block_forever();
	}
	spin = cmd_int(args, "spin_ms", 0);
	if (spin < 0 || spin > 120000) {
		ctl_fail(req, CTL_BAD_ARGS, "debug: spin_ms is 0..120000");
		return;
	}
	if (spin > 0) {
		trace_add("debug", "spin %lld ms requested", (long long)spin);
		ctl_ok(req, json_pack("{s:I}", "spinning_ms", (json_int_t)spin));
		debug_spin((uint64_t)spin);
		return;
	}
	ctl_ok(req, json_object());
}

/* The swarm's answers as control errors, one row per swarm_err. */
static const enum ctl_err swarm_ctl_err[] = {
	[SWARM_OK] = CTL_INTERNAL,
	[SWARM_EARGS] = CTL_BAD_ARGS,
	[SWARM_ENOTFOUND] = CTL_NOT_FOUND,
	[SWARM_EBUSY] = CTL_BUSY,
	[SWARM_ETIMEOUT] = CTL_TIMEOUT,
	[SWARM_EINTERNAL] = CTL_INTERNAL,
};

/* Answer req with the swarm's result or error (swarm_done_fn). */
static void
swarm_answer(void *arg, enum swarm_err err, const char *msg, json_t *result)
{
	struct ctl_req *req = arg;

	if (err == SWARM_OK)
		ctl_ok(req, result);
	else
		ctl_fail(req, swarm_ctl_err[err], "%s", msg);
}

static void
cmd_publish(struct ctl_req *req, struct ctl_client *c, json_t *args)
{
	json_t *jsize = json_object_get(args, "size");
	struct publish_req r = {
		.path = cmd_str(args, "path", NULL),
		.have_size = jsize != NULL,
		.size = jsize != NULL ? json_integer_value(jsize) : 0,
		.seed = (uint64_t)cmd_int(args, "seed", 0),
		.piece_kib = cmd_int(args, "piece_kib",
		    MANIFEST_PIECE_DEFAULT / 1024),
	};
	json_t *result;
	char msg[512];
	enum swarm_err err;

	(void)c;
	err = publish_blob(&r, &result, msg, sizeof(msg));
	swarm_answer(req, err, msg, result);
}

static void
cmd_fetch(struct ctl_req *req, struct ctl_client *c, json_t *args)
{
	bool wait = cmd_bool(args, "wait", false);
	struct swarm_fetch_req r = {
		.cid = cmd_str(args, "cid", ""),
		.wait = wait,
		.timeout_ms = cmd_int(args, "timeout_ms", wait ? 600000 :
		    SWARM_FETCH_TIMEOUT_MS),
		.inflight = cmd_int(args, "inflight", SWARM_INFLIGHT_DEFAULT),
		.stall_ms = cmd_int(args, "stall_ms", SWARM_STALL_MS),
		.order = cmd_str(args, "order", "rarest"),
	};

	(void)c;
	swarm_fetch(&r, swarm_answer, req);
}

static void
cmd_content(struct ctl_req *req, struct ctl_client *c, json_t *args)
{
	json_t *result;
	char msg[256];
	enum swarm_err err;

	(void)c;
	err = swarm_content(cmd_str(args, "cid", NULL),
	    cmd_bool(args, "sha256", true), &result, msg, sizeof(msg));
	swarm_answer(req, err, msg, result);
}

/* A flag given in args: 1 or 0, or -1 when absent. */
static int
cmd_flag(json_t *args, const char *key)
{
	return json_object_get(args, key) == NULL ? -1 :
	    cmd_bool(args, key, false);
}

static void
cmd_swarm_fault(struct ctl_req *req, struct ctl_client *c, json_t *args)
{
	(void)c;
	ctl_ok(req, swarm_fault(cmd_flag(args, "corrupt_pieces"),
	    cmd_flag(args, "short_pieces")));
}
