/*
 * action.h: the one list of scenario actions, the one table of each
 * action's fields and the one list of wait conditions.  Each row of
 * ACTIONS() is
 *
 *   X(NAME, FIELDS, CHECK)
 *
 * NAME the action ("write"); FIELDS its field table below, FIELDS_FIELDS()
 * (several actions may share one); CHECK the parser's cross-field check
 * after the fields (post_NAME in scstep.c) or NULL.  The parser validates
 * a step against its field table (scstep.c); the engine reads the
 * resolved step into struct step (step.h), whose members the same tables
 * declare, and runs it with act_NAME() (act.c), which reads those members:
 * a field renamed here fails the build where it is used.  The scenario
 * fuzzer knows the actions from the same list.  Adding an action is one
 * row here, its field table and its act_ function.
 *
 * A field table's rows are
 *
 *   F(KEY, KIND, FLAGS, MIN, MAX, DEFAULT, CHOICES)
 *
 * KEY the JSON key and the C member; KIND what the value is (enum fkind:
 * the member's C type in step.h); FLAGS F_REQ, F_NULL, F_ABOVE; MIN and
 * MAX the range (FK_INT, FK_NUM) or the length (FK_STR); DEFAULT JSON text
 * or NULL; CHOICES an FK_ENUM's NULL-ended list (named in scstep.c).
 *
 * Each row of CONDITIONS() is X(NAME): a wait step's "until"; the engine
 * evaluates it with cond_NAME() (cond.c), one function per condition.
 */
#ifndef ACTION_H
#define ACTION_H

enum fkind {
	FK_INT, FK_NUM, FK_BOOL, FK_STR, FK_ENUM, FK_TYPE, FK_SEL, FK_START,
	FK_INDEX, FK_TARGET, FK_KNOBS, FK_GROUPS, FK_TRUE,
};

#define F_REQ	0x1			/* required */
#define F_NULL	0x2			/* absent: null */
#define F_ABOVE	0x4			/* FK_NUM: > min, not >= */

#define ACTIONS(X) \
	X(start, start, NULL) \
	X(stop, peer, NULL) \
	X(kill, peer, NULL) \
	X(pause, peer, NULL) \
	X(resume, peer, NULL) \
	X(restart, peer, NULL) \
	X(join, join, post_join) \
	X(connect, connect, post_connect) \
	X(write, write, NULL) \
	X(take, take, NULL) \
	X(fault, fault, post_fault) \
	X(wait, wait, post_wait) \
	X(sleep, sleep, NULL) \
	X(rest, sleep, NULL) \
	X(mark, mark, NULL) \
	X(publish, publish, NULL) \
	X(fetch, fetch, NULL) \
	X(reconcile, reconcile, NULL)

/* ACTION_start, ACTION_stop, ...: a step's action, in the order above. */
#define ACTION_ENUM(n, f, c) ACTION_##n,
enum action { ACTIONS(ACTION_ENUM) ACTION_COUNT };
#undef ACTION_ENUM

/* Every step has these. */
#define FIELDS_COMMON(F) \
	F(action, FK_STR, F_REQ, 0, 0, NULL, NULL) \
	F(name, FK_STR, 0, 0, LABEL_MAX, NULL, NULL) \
	F(at_ms, FK_INT, F_NULL, 0, (double)TIME_MS_MAX, NULL, NULL) \
	F(timeout_s, FK_NUM, F_ABOVE, 0, TIME_S_MAX, "60.0", NULL)

/* The field tables ACTIONS() names, each FIELDS_NAME(). */
#define FIELD_TABLES(X) \
	X(start) X(peer) X(join) X(connect) X(write) X(take) X(fault) \
	X(wait) X(publish) X(fetch) X(reconcile) X(sleep) X(mark)

#define FIELDS_start(F) \
	F(peers, FK_START, 0, 0, 0, "\"all\"", NULL)
#define FIELDS_peer(F) \
	F(peer, FK_SEL, F_REQ, 0, 0, NULL, NULL)
#define FIELDS_join(F) \
	F(knobs, FK_KNOBS, 0, 0, 0, "{}", NULL)
#define FIELDS_connect(F) \
	F(from, FK_INDEX, F_REQ, 0, 0, NULL, NULL) \
	F(to, FK_INDEX, F_REQ, 0, 0, NULL, NULL)
#define FIELDS_write(F) \
	F(peer, FK_SEL, F_REQ, 0, 0, NULL, NULL) \
	F(count, FK_INT, F_REQ, 0, 1e9, NULL, NULL) \
	F(rate, FK_NUM, 0, 0, 1e9, "0.0", NULL) \
	F(type, FK_TYPE, 0, 0, 0, "\"task#v1\"", NULL) \
	F(payload_bytes, FK_INT, 0, 0, 65536, "64", NULL) \
	F(lease_ms, FK_INT, 0, 1, 2147483647.0, "3600000", NULL) \
	F(wait, FK_BOOL, 0, 0, 0, "true", NULL) \
	F(bulk_above, FK_INT, F_NULL, 0, 1e9, NULL, NULL)
#define FIELDS_take(F) \
	F(peer, FK_SEL, F_REQ, 0, 0, NULL, NULL) \
	F(workers, FK_INT, 0, 1, 1024, "1", NULL) \
	F(type, FK_TYPE, 0, 0, 0, "\"task#v1\"", NULL) \
	F(complete, FK_BOOL, 0, 0, 0, "true", NULL) \
	F(count, FK_INT, F_NULL, 0, 1e9, NULL, NULL) \
	F(timeout_ms, FK_INT, 0, 0, 3600000, "1000", NULL) \
	F(wait, FK_BOOL, 0, 0, 0, "true", NULL)
#define FIELDS_fault(F) \
	F(peer, FK_SEL, 0, 0, 0, "\"all\"", NULL) \
	F(drop, FK_NUM, 0, 0, 1, NULL, NULL) \
	F(delay_ms, FK_INT, 0, 0, 3600000, NULL, NULL) \
	F(jitter_ms, FK_INT, 0, 0, 3600000, NULL, NULL) \
	F(target, FK_TARGET, 0, 0, 0, NULL, NULL) \
	F(partition, FK_GROUPS, 0, 0, 0, NULL, NULL) \
	F(clear, FK_TRUE, 0, 0, 0, NULL, NULL) \
	F(layer, FK_ENUM, 0, 0, 0, NULL, fault_layers)
#define FIELDS_wait(F) \
	F(until, FK_ENUM, F_REQ, 0, 0, NULL, untils) \
	F(measure, FK_STR, F_NULL, 0, NAME_LEN, NULL, NULL) \
	F(metric, FK_STR, 0, 0, NAME_LEN, NULL, NULL) \
	F(op, FK_ENUM, 0, 0, 0, NULL, ops) \
	F(value, FK_NUM, 0, -INFINITY, INFINITY, NULL, NULL)
#define FIELDS_publish(F) \
	F(peer, FK_INDEX, 0, 0, 0, "0", NULL) \
	F(mebibytes, FK_NUM, F_REQ | F_ABOVE, 0, 65536, NULL, NULL) \
	F(piece_kib, FK_INT, 0, 1, 4096, "1024", NULL) \
	F(seed, FK_INT, 0, 0, 4294967295.0, "1", NULL)
#define FIELDS_fetch(F) \
	F(peer, FK_SEL, 0, 0, 0, "\"all\"", NULL) \
	F(wait, FK_BOOL, 0, 0, 0, "true", NULL)
#define FIELDS_reconcile(F) \
	F(peer, FK_INDEX, 0, 0, 0, "0", NULL) \
	F(with, FK_INDEX, 0, 0, 0, "1", NULL) \
	F(method, FK_ENUM, F_REQ, 0, 0, NULL, knob_methods) \
	F(common, FK_INT, 0, 0, 1e7, "0", NULL) \
	F(diff, FK_INT, 0, 0, 1e7, "0", NULL) \
	F(seed, FK_INT, 0, 0, 1e6, "1", NULL) \
	F(payload_bytes, FK_INT, 0, 0, 60000, "64", NULL)
#define FIELDS_sleep(F) \
	F(ms, FK_INT, F_REQ, 0, (double)TIME_MS_MAX, NULL, NULL)
#define FIELDS_mark(F) \
	F(label, FK_STR, F_REQ, 0, LABEL_MAX, NULL, NULL)

#define CONDITIONS(X) \
	X(connected) \
	X(converged) \
	X(visible) \
	X(taken) \
	X(fetched) \
	X(metric)

#endif
