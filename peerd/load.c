/*
 * load.c: in-peer workload generators (see load.h).
 *
 *   load {"op":"write","name":"w","count":N,"rate":R,"type":T,
 *         "payload_bytes":B,"lease_ms":L}
 *   load {"op":"take","name":"t","workers":K,"type":T,"complete":true,
 *         "timeout_ms":MS,"count":MAX}
 *   load {"op":"bulk","name":"b","count":N,"seed":S,"from":F,
 *         "stamp_ms":T,"payload_bytes":B,"lease_ms":L,"type":T}
 *   load {"op":"status"[,"name":"w"][,"ids":true]}
 *   load {"op":"stop"[,"name":"w"]}
 *
 * A write load with rate 0 writes as fast as the loop allows, in slices of
 * WRITE_SLICE so links and the control socket are served between slices
 * (and the gossip layer batches each slice into one rumor): the next slice
 * is a zero timer, which runs after the loop polled its sockets.
 *
 * A bulk load fills the replica without gossip, flat out: entries seq F ..
 * F+N-1 issued by the key whose seed is SHA-256 of "bulk" and S, stamped
 * T (wall ms; default now) with logical seq, so two peers given the same
 * S, F and T hold the very same records (id, signature and state) and
 * differ only where their loads differ: the set-up of a reconciliation
 * benchmark, 100,000 entries in a few seconds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <openssl/sha.h>

#include "chunklog.h"
#include "clock.h"
#include "entry.h"
#include "hex.h"
#include "load.h"
#include "log.h"
#include "peerd.h"
#include "replica.h"
#include "space.h"
#include "take.h"
#include "template.h"
#include "trace.h"
#include "xmalloc.h"

#define WRITE_SLICE	128
#define IDS_CHUNK	2048	/* ids a chunk of a write load's id log */
#define LOAD_NAME_MAX	64

enum load_op { LOAD_WRITE, LOAD_TAKE, LOAD_BULK };

struct load;

struct worker {
	struct load	*load;
	struct event	*ev;
	bool		 busy;		/* a take is in flight */
};

/*
 * A write load's id log: 24 bytes an entry written, in chunks (chunklog.h)
 * that grow with what is written, not with the count asked for.
 */
struct written {
	uint8_t		id[ENTRY_ID_LEN];
	uint64_t	mono_us;
};

struct load {
	TAILQ_ENTRY(load)	 entry;
	char			 name[LOAD_NAME_MAX];
	enum load_op		 op;
	bool			 running;
	char			 type[ENTRY_TYPE_MAX + 1];
	uint64_t		 start_us, end_us;
	/* write */
	uint64_t		 count, written, errors;
	double			 rate;
	uint32_t		 payload;
	uint64_t		 lease_ms;
	struct event		*ev;
	struct chunklog		 ids;		/* of struct written */
	char			*pad;
	char			 last_error[160];
	/* bulk */
	struct identity		 gen;
	uint64_t		 from, stamp_ms;
	/* take */
	struct worker		*workers;
	uint32_t		 nworkers;
	bool			 complete;
	uint32_t		 timeout_ms;
	uint64_t		 max;		/* stop after this many; 0: never */
	uint64_t		 taken, empty, completed;
};

static TAILQ_HEAD(, load) loads = TAILQ_HEAD_INITIALIZER(loads);

static struct load *
load_find(const char *name)
{
	struct load *l;

	TAILQ_FOREACH(l, &loads, entry)
		if (strcmp(l->name, name) == 0)
			return l;
	return NULL;
}

static void
load_finish(struct load *l, const char *why)
{
	if (!l->running)
		return;
	l->running = false;
	l->end_us = clock_mono_us();
	trace_add("load", "%s finished: %s", l->name, why);
	log_info("load %s finished: %s", l->name, why);
}

/* ---- write ------------------------------------------------------------- */

static void
write_cb(evutil_socket_t fd, short what, void *arg)
{
	struct load *l = arg;
	uint64_t due, now = clock_mono_us();
	char err[160];
	uint8_t id[ENTRY_ID_LEN];
	struct written *w;

	(void)fd;
	(void)what;
	if (!l->running)
		return;
	due = l->count;
	if (l->rate > 0) {
		double d = (double)(now - l->start_us) / 1e6 * l->rate + 1;

		if (d < (double)due)
			due = (uint64_t)d;
	}
	for (int n = 0; n < WRITE_SLICE && l->written < due; n++) {
		json_t *args, *res;

		if (l->op == LOAD_BULK) {
			if (replica_generate(&l->gen, l->from + l->written,
			    l->stamp_ms, l->lease_ms, l->type, l->pad, id, err,
			    sizeof(err)) == -1) {
				l->errors++;
				snprintf(l->last_error, sizeof(l->last_error),
				    "%s", err);
				load_finish(l, err);
				return;
			}
			w = chunklog_append(&l->ids);
			memcpy(w->id, id, sizeof(id));
			l->written++;
			continue;
		}

		args = json_pack("{s:s, s:I, s:{s:I, s:s, s:s}}", "type", l->type,
		    "lease_ms", (json_int_t)l->lease_ms, "fields",
		    "seq", (json_int_t)l->written, "load", l->name,
		    "pad", l->pad);
		res = replica_write(args, err, sizeof(err));
		json_decref(args);
		if (res == NULL) {
			l->errors++;
			snprintf(l->last_error, sizeof(l->last_error), "%s", err);
			load_finish(l, err);
			return;
		}
		hex_decode(json_string_value(json_object_get(res, "id")), id,
		    sizeof(id));
		w = chunklog_append(&l->ids);
		memcpy(w->id, id, sizeof(id));
		w->mono_us = clock_mono_us();
		l->written++;
		json_decref(res);
	}
	if (l->written >= l->count) {
		load_finish(l, "all written");
		return;
	}
	if (l->rate > 0 && l->written >= due) {
		uint64_t next_us = l->start_us + (uint64_t)((double)l->written /
		    l->rate * 1e6);
		uint64_t wait = next_us > now ? next_us - now : 0;
		struct timeval tv = { .tv_sec = (time_t)(wait / 1000000u),
		    .tv_usec = (suseconds_t)(wait % 1000000u) };

		evtimer_add(l->ev, &tv);
	} else {
		/*
		 * A zero timer, not event_active: libevent runs what is
		 * activated from inside the active queue in the same pass,
		 * so the loop would poll no socket (the control client
		 * waiting for "started" among them) until the load is over.
		 */
		struct timeval tv = { 0, 0 };

		evtimer_add(l->ev, &tv);
	}
}

/* ---- take -------------------------------------------------------------- */

static void	worker_next(struct worker *);

static void
worker_done(void *arg, const struct space_rec *won,
    const struct take_end *end)
{
	struct worker *w = arg;
	struct load *l = w->load;

	(void)end;
	w->busy = false;
	if (won != NULL) {
		int rc;

		l->taken++;
		if (l->complete) {
			rc = replica_complete(space_rec_id(won));
			if (rc == SPACE_OK || rc == SPACE_EALREADY)
				l->completed++;
		}
	} else
		l->empty++;
	if (l->max != 0 && l->taken >= l->max)
		load_finish(l, "count reached");
	if (l->running)
		event_active(w->ev, EV_TIMEOUT, 0);
}

static void
worker_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	worker_next(arg);
}

static void
worker_next(struct worker *w)
{
	struct load *l = w->load;
	struct template *t;

	if (!l->running || w->busy || pd->stopping)
		return;
	if ((t = template_new(l->type)) == NULL) {
		load_finish(l, "bad type");
		return;
	}
	w->busy = true;
	take_start(t, l->timeout_ms, worker_done, w);
}

/* ---- commands ---------------------------------------------------------- */

static json_t *
load_status(const struct load *l, bool with_ids)
{
	uint64_t end = l->running ? clock_mono_us() : l->end_us;
	double secs = (double)(end - l->start_us) / 1e6;
	json_t *j;

	j = json_pack("{s:s, s:s, s:b, s:s, s:f, s:I}", "name", l->name,
	    "op", l->op == LOAD_WRITE ? "write" : l->op == LOAD_BULK ?
	    "bulk" : "take", "running",
	    l->running, "type", l->type, "elapsed_s", secs,
	    "start_mono_us", (json_int_t)l->start_us);
	if (l->op != LOAD_TAKE) {
		json_object_set_new(j, "count", json_integer((json_int_t)l->count));
		json_object_set_new(j, "written",
		    json_integer((json_int_t)l->written));
		json_object_set_new(j, "errors",
		    json_integer((json_int_t)l->errors));
		json_object_set_new(j, "rate_achieved", json_real(secs > 0 ?
		    (double)l->written / secs : 0));
		if (l->last_error[0] != '\0')
			json_object_set_new(j, "last_error",
			    json_string(l->last_error));
		if (with_ids) {
			json_t *arr = json_array();
			char idhex[2 * ENTRY_ID_LEN + 1];

			for (uint64_t i = 0; i < l->written; i++) {
				const struct written *w = chunklog_at(&l->ids,
				    i);

				hex_encode(w->id, ENTRY_ID_LEN, idhex);
				json_array_append_new(arr, json_pack("[s, I]",
				    idhex, (json_int_t)w->mono_us));
			}
			json_object_set_new(j, "ids", arr);
		}
	} else {
		json_object_set_new(j, "workers",
		    json_integer((json_int_t)l->nworkers));
		json_object_set_new(j, "taken", json_integer((json_int_t)l->taken));
		json_object_set_new(j, "completed",
		    json_integer((json_int_t)l->completed));
		json_object_set_new(j, "empty", json_integer((json_int_t)l->empty));
	}
	return j;
}

static void
load_free(struct load *l)
{
	TAILQ_REMOVE(&loads, l, entry);
	if (l->ev != NULL)
		event_free(l->ev);
	for (uint32_t i = 0; i < l->nworkers; i++)
		event_free(l->workers[i].ev);
	free(l->workers);
	chunklog_free(&l->ids);
	free(l->pad);
	if (l->op == LOAD_BULK)
		identity_free(&l->gen);
	free(l);
}

static struct load *
load_new(const char *name, enum load_op op, const char *type)
{
	struct load *l = xcalloc(1, sizeof(*l));

	snprintf(l->name, sizeof(l->name), "%s", name);
	snprintf(l->type, sizeof(l->type), "%s", type);
	l->op = op;
	l->running = true;
	l->start_us = clock_mono_us();
	TAILQ_INSERT_TAIL(&loads, l, entry);
	return l;
}

/* A bulk load's issuer, first seq and stamp from its arguments. */
static int
bulk_key(struct load *l, json_t *args, char *err, size_t errlen)
{
	json_int_t seed = json_integer_value(json_object_get(args, "seed"));
	json_int_t from = json_integer_value(json_object_get(args, "from"));
	json_t *st = json_object_get(args, "stamp_ms");
	uint8_t key[IDENTITY_SEED_LEN];
	char text[48];

	if (seed < 0 || from < 0 || (st != NULL && (!json_is_integer(st) ||
	    json_integer_value(st) < 1))) {
		snprintf(err, errlen, "load: bulk needs seed >= 0, from >= 0 "
		    "and stamp_ms >= 1 (wall ms)");
		return -1;
	}
	snprintf(text, sizeof(text), "bulk %lld", (long long)seed);
	SHA256((const unsigned char *)text, strlen(text), key);
	if (identity_from_seed(&l->gen, key) == -1) {
		snprintf(err, errlen, "load: bulk: no key from seed");
		return -1;
	}
	l->from = (uint64_t)from;
	l->stamp_ms = st ? (uint64_t)json_integer_value(st) : hlc_wall_ms();
	return 0;
}

json_t *
load_command(json_t *args, char *err, size_t errlen)
{
	const char *op = json_string_value(json_object_get(args, "op"));
	const char *name = json_string_value(json_object_get(args, "name"));
	const char *type = json_string_value(json_object_get(args, "type"));
	struct load *l;
	json_t *arr;

	if (type == NULL)
		type = "task#v1";
	if (strcmp(op, "status") == 0 || strcmp(op, "stop") == 0) {
		bool ids = json_is_true(json_object_get(args, "ids"));

		if (name != NULL && load_find(name) == NULL) {
			snprintf(err, errlen, "load: no load named \"%.64s\"", name);
			return NULL;
		}
		arr = json_array();
		TAILQ_FOREACH(l, &loads, entry) {
			if (name != NULL && strcmp(l->name, name) != 0)
				continue;
			if (strcmp(op, "stop") == 0)
				load_finish(l, "stopped");
			json_array_append_new(arr, load_status(l, ids));
		}
		return json_pack("{s:o}", "loads", arr);
	}
	if (name == NULL || name[0] == '\0' || strlen(name) >= LOAD_NAME_MAX) {
		snprintf(err, errlen, "load: \"name\" (1..%d chars) is required",
		    LOAD_NAME_MAX - 1);
		return NULL;
	}
	if ((l = load_find(name)) != NULL) {
		bool busy = l->running;

		for (uint32_t i = 0; i < l->nworkers; i++)
			busy |= l->workers[i].busy;
		if (busy) {
			snprintf(err, errlen, "load: \"%s\" is still running",
			    name);
			return NULL;
		}
		load_free(l);
	}
	if (!entry_type_valid(type, strlen(type))) {
		snprintf(err, errlen, "load: \"type\" must be name#vN");
		return NULL;
	}
	if (strcmp(op, "write") == 0 || strcmp(op, "bulk") == 0) {
		json_int_t count = json_integer_value(json_object_get(args,
		    "count"));
		json_int_t payload = json_object_get(args, "payload_bytes") ?
		    json_integer_value(json_object_get(args, "payload_bytes")) :
		    64;
		json_int_t lease = json_object_get(args, "lease_ms") ?
		    json_integer_value(json_object_get(args, "lease_ms")) :
		    3600000;
		double rate = json_number_value(json_object_get(args, "rate"));

		if (count < 1 || count > 10000000 || payload < 0 ||
		    payload > 60000 || lease < 1 || rate < 0) {
			snprintf(err, errlen, "load: write needs count 1..1e7, "
			    "payload_bytes 0..60000, lease_ms >= 1, rate >= 0");
			return NULL;
		}
		l = load_new(name, *op == 'w' ? LOAD_WRITE : LOAD_BULK, type);
		if (l->op == LOAD_BULK && bulk_key(l, args, err, errlen) == -1) {
			load_free(l);
			return NULL;
		}
		l->count = (uint64_t)count;
		l->rate = rate;
		l->payload = (uint32_t)payload;
		l->lease_ms = (uint64_t)lease;
		chunklog_init(&l->ids, sizeof(struct written), IDS_CHUNK);
		l->pad = xmalloc((size_t)payload + 1);
		memset(l->pad, 'x', (size_t)payload);
		l->pad[payload] = '\0';
		l->ev = event_new(pd->base, -1, 0, write_cb, l);
		event_active(l->ev, EV_TIMEOUT, 0);
	} else if (strcmp(op, "take") == 0) {
		json_int_t workers = json_object_get(args, "workers") ?
		    json_integer_value(json_object_get(args, "workers")) : 1;
		json_int_t timeout = json_object_get(args, "timeout_ms") ?
		    json_integer_value(json_object_get(args, "timeout_ms")) :
		    1000;
		json_int_t max = json_integer_value(json_object_get(args,
		    "count"));

		if (workers < 1 || workers > 1024 || timeout < 0 ||
		    timeout > 3600000 || max < 0) {
			snprintf(err, errlen, "load: take needs workers 1..1024, "
			    "timeout_ms 0..3600000, count >= 0");
			return NULL;
		}
		l = load_new(name, LOAD_TAKE, type);
		l->complete = !json_is_false(json_object_get(args, "complete"));
		l->timeout_ms = (uint32_t)timeout;
		l->max = (uint64_t)max;
		l->nworkers = (uint32_t)workers;
		l->workers = xcalloc(l->nworkers, sizeof(*l->workers));
		for (uint32_t i = 0; i < l->nworkers; i++) {
			l->workers[i].load = l;
			l->workers[i].ev = event_new(pd->base, -1, 0, worker_cb,
			    &l->workers[i]);
			event_active(l->workers[i].ev, EV_TIMEOUT, 0);
		}
	} else {
		snprintf(err, errlen, "load: \"op\" is write, bulk, take, "
		    "status or stop");
		return NULL;
	}
	trace_add("load", "%s started (%s)", l->name, op);
	return json_pack("{s:s, s:b}", "name", l->name, "started", 1);
}

void
load_free_all(void)
{
	struct load *l;

	while ((l = TAILQ_FIRST(&loads)) != NULL)
		load_free(l);
}
