/*
 * gather.c: what a run reads from its fleet to measure it: the counters
 * summed at the write window's start (gather_window_open) and at any step
 * (gather_fleet_sum), the fleet's CPU at a take step's start
 * (gather_take_cpu_mark), and at the end every peer's metrics into the
 * latency, frame, push, CPU and take measures (gather_run, gather_takes).
 * run.c calls it; it calls the engine's run_* helpers and nothing above.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "ctl.h"
#include "engine.h"
#include "fleet.h"
#include "hist.h"
#include "identity.h"
#include "log.h"
#include "metrics.h"
#include "num.h"
#include "xmalloc.h"

/*
 * A peer's frames sent by kind (its counters' frames.out_by_kind object)
 * added to sum as flat "frames.out_by_kind.<kind>" numbers, so the window
 * can subtract them like any other counter.
 */
static void
kinds_add(json_t *sum, json_t *counters)
{
	char key[96];
	const char *k;
	json_t *v;

	json_object_foreach(json_object_get(counters, "frames.out_by_kind"),
	    k, v) {
		snprintf(key, sizeof(key), "frames.out_by_kind.%s", k);
		json_object_set_new(sum, key, json_real(json_number_value(v) +
		    json_number_value(json_object_get(sum, key))));
	}
}

/*
 * The numeric counters summed over the live peers (each frames.out_by_kind
 * kind as "frames.out_by_kind.KIND", the process's cpu_s as
 * "process.cpu_s" and its wakeups as "process.wakeups", the peers that
 * answered as "peers"): the write window
 * and a rest step count from such a sum.
 */
static void
sum_one(struct run *r, int index, struct peer *p, json_t *m, void *arg)
{
	json_t *sum = arg, *v, *c = json_object_get(m, "counters");
	const char *k;

	(void)r;
	(void)index;
	if (m == NULL || p->state != PEER_RUNNING)
		return;
#define SUM_ADD(name, x) json_object_set_new(sum, (name), json_real( \
	json_number_value(json_object_get(sum, (name))) + (x)))
	json_object_foreach(c, k, v)
		if (json_is_number(v))
			SUM_ADD(k, json_number_value(v));
	kinds_add(sum, c);
	SUM_ADD("process.cpu_s", json_number_value(json_object_get(
	    json_object_get(m, "process"), "cpu_s")));
	SUM_ADD("process.wakeups", json_number_value(json_object_get(
	    json_object_get(m, "process"), "wakeups")));
	SUM_ADD("peers", 1.0);
#undef SUM_ADD
}

json_t *
gather_fleet_sum(struct run *r)
{
	json_t *sum = json_object();

	engine_call_each(r, "metrics", NULL, CALL_MS, sum_one, sum);
	return sum;
}

/* The write window opens when the first write step begins. */
void
gather_window_open(struct run *r)
{
	if (r->write_base == NULL) {
		r->write_open_us = clock_mono_us();
		r->write_base = gather_fleet_sum(r);
	}
}

/* A counter summed at the end less its sum when the window opened. */
static double
window_delta(struct run *r, const char *name)
{
	return json_number_value(json_object_get(r->counters, name)) -
	    json_number_value(json_object_get(r->write_base, name));
}

size_t
gather_kinds_text(json_t *from, json_t *to, double div, size_t max, char *out,
    size_t len)
{
	struct { const char *kind; double n; } k[64], t;
	const char *key, *pre = "frames.out_by_kind.";
	size_t nk = 0, used = 0;
	json_t *v;

	json_object_foreach(to, key, v) {
		double d;

		if (strncmp(key, pre, strlen(pre)) != 0 || nk == 64 ||
		    (d = json_number_value(v) - json_number_value(
		    json_object_get(from, key))) <= 0)
			continue;
		k[nk].kind = key + strlen(pre);
		k[nk++].n = d / div;
	}
	for (size_t i = 1; i < nk; i++)
		for (size_t j = i; j > 0 && k[j].n > k[j - 1].n; j--) {
			t = k[j];
			k[j] = k[j - 1];
			k[j - 1] = t;
		}
	if (len > 0)
		out[0] = '\0';
	for (size_t i = 0; i < nk && i < max && used + 1 < len; i++) {
		char num[NUM_BUF];

		used += (size_t)snprintf(out + used, len - used, "%s%s %s",
		    i ? ", " : "", k[i].kind, num_human(k[i].n, "", num,
		    sizeof(num)));
	}
	return nk < max ? nk : max;
}

/*
 * Where the write window's frames went: a note naming every kind the
 * fleet sent in it, per write, largest first (the breakdown behind
 * gossip.frames_per_write).
 */
static void
kinds_note(struct run *r, double writes)
{
	char text[2048];

	if (gather_kinds_text(r->write_base, r->counters, writes, 64, text,
	    sizeof(text)) > 0)
		engine_note(r, "frames per write by kind, write window: %s", text);
}

/* push.eager_edges, push.grafts, push.redundant_copies (docs/report.md). */
static void
push_measures(struct run *r)
{
	if (r->write_base == NULL || json_object_size(r->writes) == 0)
		return;
	engine_measure(r, M_PUSH_EAGER_EDGES, r->tree_degree);
	engine_measure(r, M_PUSH_GRAFTS, window_delta(r, "push.grafts_sent"));
	engine_measure(r, M_PUSH_REDUNDANT_COPIES, window_delta(r,
	    "push.duplicate_records"));
}

/* What gather() adds up while the answers come in. */
struct gather {
	struct metrics_hists	 all;
	double			 frames_out, bytes_out, bad, cpu_s, wakeups;
	int			 answered;
	bool			 have_metrics;
	json_t			**rows;		/* one per fleet index */
};

/* One peer's metrics: its metrics.json, its row, the fleet's sums. */
static void
gather_one(struct run *r, int i, struct peer *p, json_t *m, void *arg)
{
	struct gather *g = arg;
	struct metrics_hists one;
	json_t *c, *proc, *row = g->rows[i], *v;
	char path[700];
	const char *k;

	if (m == NULL)
		return;
	snprintf(path, sizeof(path), "%s/metrics.json", p->dir);
	engine_write_json(path, m);
	c = json_object_get(m, "counters");
	proc = json_object_get(m, "process");
	json_object_set(row, "cpu_s", json_object_get(proc, "cpu_s"));
	json_object_set(row, "max_rss_kib", json_object_get(proc,
	    "max_rss_kib"));
	json_object_set(row, "frames_in", json_object_get(c, "frames.in"));
	json_object_set(row, "frames_out", json_object_get(c, "frames.out"));
	json_object_set(row, "bytes_in", json_object_get(c, "bytes.in"));
	json_object_set(row, "bytes_out", json_object_get(c, "bytes.out"));
	r->tree_degree += json_number_value(json_object_get(
	    json_object_get(m, "gauges"), "push.tree_degree"));
	g->frames_out += json_number_value(json_object_get(c, "frames.out"));
	g->bytes_out += json_number_value(json_object_get(c, "bytes.out"));
	json_object_foreach(json_object_get(c, "frames.bad"), k, v)
		g->bad += json_number_value(v);
	kinds_add(r->counters, c);
	g->cpu_s += json_number_value(json_object_get(proc, "cpu_s"));
	g->wakeups += json_number_value(json_object_get(proc, "wakeups"));
	g->answered++;
	json_object_foreach(c, k, v) {
		json_t *sum = json_object_get(r->counters, k);

		if (json_is_number(v))
			json_object_set_new(r->counters, k, json_real(
			    json_number_value(v) + (sum ?
			    json_number_value(sum) : 0)));
	}
	metrics_hists_init(&one);
	if (metrics_hists_from_json(&one, json_object_get(m, "latency")) == 0)
		metrics_hists_merge(&g->all, &one);
	g->have_metrics = true;
}

/* What the floor of a window was timed from, in the notes. */
static void
floor_note(struct run *r, const char *window, const struct floor_cost *fc)
{
	engine_note(r, "the %s floor: %zu batches of 10 timed in the window "
	    "and %zu at its end, a sign %.1f us, a verify %.1f us (the median "
	    "batch; verify batches %.1f to %.1f us)", window,
	    fc->batches - fc->late, fc->late, fc->sign_s * 1e6,
	    fc->verify_s * 1e6, fc->verify_lo_s * 1e6, fc->verify_hi_s * 1e6);
}

/*
 * gossip.cpu_*: the fleet's CPU seconds in the write window per write,
 * beside its floor: every peer but the writer verifies each entry once.
 */
static void
cpu_measures(struct run *r, const struct gather *g, double writes)
{
	struct floor_cost fc;
	double cpu, floor, timed, in_peers, verify_s;

	cpu = (g->cpu_s - json_number_value(json_object_get(r->write_base,
	    "process.cpu_s"))) * 1000.0 / writes;
	engine_measure(r, M_GOSSIP_CPU_MS_PER_WRITE, cpu);
	engine_measure(r, M_GOSSIP_WAKEUPS_PER_WRITE, (g->wakeups -
	    json_number_value(json_object_get(r->write_base,
	    "process.wakeups"))) / writes);
	if (g->answered < 2 || floor_cost(r, r->write_open_us, &fc) == -1)
		return;
	verify_s = fc.verify_s;
	floor_note(r, "write", &fc);
	floor = (double)(g->answered - 1) * verify_s * 1000.0;
	engine_measure(r, M_GOSSIP_CPU_FLOOR_MS_PER_WRITE, floor);
	if (floor > 0)
		engine_measure(r, M_GOSSIP_CPU_OVER_FLOOR, cpu / floor);
	/* The same verify, timed inside the peers while they worked. */
	timed = window_delta(r, "crypto.verify_timed");
	if (timed <= 0)
		return;
	in_peers = window_delta(r, "crypto.verify_timed_us") / timed;
	engine_measure(r, M_GOSSIP_VERIFY_US_IN_PEERS, in_peers);
	engine_measure(r, M_GOSSIP_VERIFY_CPU_MS_PER_WRITE, window_delta(r,
	    "crypto.verifies") * in_peers / 1000.0 / writes);
	engine_note(r, "a verify cost %.1f us inside the peers in the write "
	    "window, %.1f us in the engine's timings", in_peers,
	    verify_s * 1e6);
}

/*
 * Metrics of every live peer into its directory and the merged measures,
 * asked of all peers at once (engine_call_each); the rows stay in fleet order.
 */
/*
 * Say how often the control client forgave a late answer because its peer
 * was short of CPU (ctl.c, CTL_STARVED_MS): a run that passed on a host
 * too small for its fleet must say it was waiting its turn.
 */
static void
starved_note(struct run *r)
{
	uint64_t graces = 0, worst = 0;
	int npeers = 0, wi = -1;

	for (int i = 0; i < r->fleet.npeers; i++) {
		struct peer *p = r->fleet.peers[i];

		if (p->starved_graces == 0)
			continue;
		graces += p->starved_graces;
		npeers++;
		if (p->starved_max_ms > worst) {
			worst = p->starved_max_ms;
			wi = i;
		}
	}
	if (graces > 0)
		engine_note(r, "watchdog: %llu late control answers from %d peers "
		    "were waited for because those peers were runnable or using "
		    "CPU, short of a core (the host is oversubscribed); the "
		    "longest wait beyond a bound was %llu ms (%s)",
		    (unsigned long long)graces, npeers,
		    (unsigned long long)worst, r->fleet.peers[wi]->name);
}

void
gather_run(struct run *r)
{
	struct gather g;

	memset(&g, 0, sizeof(g));
	metrics_hists_init(&g.all);
	g.rows = xcalloc((size_t)r->fleet.npeers + 1, sizeof(*g.rows));
	for (int i = 0; i < r->fleet.npeers; i++) {
		struct peer *p = r->fleet.peers[i];

		if (p->state == PEER_PAUSED)
			fleet_signal(p, SIGCONT);
		g.rows[i] = json_pack("{s:s, s:i, s:s}", "name", p->name,
		    "index", i, "state", fleet_state_name(p->state));
		if (p->pid > 0)
			json_object_set_new(g.rows[i], "pid",
			    json_integer(p->pid));
	}
	engine_call_each(r, "metrics", NULL, CALL_MS, gather_one, &g);
	for (int i = 0; i < r->fleet.npeers; i++)
		json_array_append_new(r->peer_rows, g.rows[i]);
	free(g.rows);
	starved_note(r);
	engine_measure_hist(r, M_GOSSIP_WRITE_TO_VISIBLE,
	    &g.all.write_to_visible);
	engine_measure_hist(r, M_THROUGHPUT_WRITE_TO_TAKE,
	    &g.all.write_to_take);
	engine_measure_hist(r, M_CONTROL_RTT, &g.all.control_rtt);
	if (g.have_metrics) {
		engine_measure(r, M_FLEET_FRAMES_OUT, g.frames_out);
		engine_measure(r, M_FLEET_BYTES_OUT, g.bytes_out);
		engine_measure(r, M_FLEET_BAD_FRAMES, g.bad);
		if (json_object_size(r->writes) > 0 && r->write_base != NULL) {
			double w = (double)json_object_size(r->writes);

			engine_measure(r, M_GOSSIP_FRAMES_PER_WRITE,
			    window_delta(r, "frames.out") / w);
			engine_measure(r, M_GOSSIP_RUMOR_FRAMES_PER_WRITE,
			    window_delta(r, "frames.out_by_kind.rumor") / w);
			engine_measure(r, M_GOSSIP_IHAVE_FRAMES_PER_WRITE,
			    window_delta(r, "frames.out_by_kind.ihave") / w);
			kinds_note(r, w);
			cpu_measures(r, &g, w);
		}
		push_measures(r);
	}
}

/*
 * The fleet's CPU seconds now (take.cpu_s_per_take counts from here); each
 * peer's metrics answer is kept as peers/<k>/metrics.take_start.json, so
 * the take window's counters are the end's minus these.
 */
void
gather_take_cpu_mark(struct run *r)
{
	char err[256], path[700];

	r->take_cpu0 = 0;
	r->take_wake0 = 0;
	r->take_cpu0_ok = true;
	r->take_open_us = clock_mono_us();
	for (int i = 0; i < r->fleet.npeers; i++) {
		json_t *m = NULL;

		if (fleet_live(r->fleet.peers[i]))
			m = engine_call(r, r->fleet.peers[i], "metrics", NULL,
			    CALL_MS, err, sizeof(err));
		if (m == NULL) {
			r->take_cpu0_ok = false;
			continue;
		}
		r->take_cpu0 += json_number_value(json_object_get(
		    json_object_get(m, "process"), "cpu_s"));
		r->take_wake0 += json_number_value(json_object_get(
		    json_object_get(m, "process"), "wakeups"));
		snprintf(path, sizeof(path), "%s/metrics.take_start.json",
		    r->fleet.peers[i]->dir);
		(void)json_dump_file(m, path, JSON_COMPACT);
		json_decref(m);
	}
}

/*
 * The take measures, from the metrics.json gather() wrote for each peer:
 * take.claim_to_visible (a claim's monotonic stamp to each other peer
 * holding it), take.retries, take.no_quorum, and the fleet's CPU seconds
 * from the take step's start to the end of the run, per take, beside its
 * floor (one claim sign plus one verify per other peer).  Runs after
 * check_history (it needs history.takes).
 */
void
gather_takes(struct run *r)
{
	struct metrics_hists all, one;
	double cpu = 0, wakeups = 0, retries = 0, noq = 0, takes, floor;
	struct floor_cost fc;
	json_t *m, *c, *tk;
	char path[700];
	int have = 0;

	if (!r->had_take_step)
		return;
	metrics_hists_init(&all);
	for (int i = 0; i < r->fleet.npeers; i++) {
		snprintf(path, sizeof(path), "%s/metrics.json",
		    r->fleet.peers[i]->dir);
		if ((m = json_load_file(path, 0, NULL)) == NULL)
			continue;
		c = json_object_get(m, "counters");
		cpu += json_number_value(json_object_get(json_object_get(m,
		    "process"), "cpu_s"));
		wakeups += json_number_value(json_object_get(json_object_get(m,
		    "process"), "wakeups"));
		retries += json_number_value(json_object_get(c,
		    "takes.retried"));
		noq += json_number_value(json_object_get(c, "takes.no_quorum"));
		metrics_hists_init(&one);
		if (metrics_hists_from_json(&one, json_object_get(m, "latency"))
		    == 0)
			metrics_hists_merge(&all, &one);
		have++;
		json_decref(m);
	}
	if (have == 0)
		return;
	engine_measure_hist(r, M_TAKE_CLAIM_TO_VISIBLE, &all.claim_to_visible);
	engine_measure(r, M_TAKE_RETRIES, retries);
	engine_measure(r, M_TAKE_NO_QUORUM, noq);
	tk = json_object_get(json_object_get(r->measures, "history.takes"),
	    "value");
	takes = json_number_value(tk);
	/* Only when every peer reported: a partial sum is no figure. */
	if (takes <= 0 || have != r->fleet.npeers || !r->take_cpu0_ok ||
	    floor_cost(r, r->take_open_us, &fc) == -1)
		return;
	floor_note(r, "take", &fc);
	cpu -= r->take_cpu0;
	floor = fc.sign_s + (double)(r->fleet.npeers - 1) * fc.verify_s;
	engine_measure(r, M_TAKE_CPU_MS_PER_TAKE, cpu / takes * 1e3);
	engine_measure(r, M_TAKE_CPU_FLOOR_MS_PER_TAKE, floor * 1e3);
	engine_measure(r, M_TAKE_CPU_OVER_FLOOR, cpu / takes / floor);
	engine_measure(r, M_TAKE_WAKEUPS_PER_TAKE, (wakeups - r->take_wake0) /
	    takes);
}

