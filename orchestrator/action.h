/*
 * action.h: the one list of scenario actions and the one list of wait
 * conditions.  Each row of ACTIONS() is
 *
 *   X(NAME, FIELDS, CHECK)
 *
 * NAME the action ("write"); FIELDS the prefix of its field table in
 * scstep.c (FIELDS_fields[]: keys, kinds, ranges, defaults); CHECK the
 * parser's cross-field check after the fields (post_NAME in scstep.c) or
 * NULL.  The engine runs a step of action NAME with act_NAME() (run.c), and
 * the scenario fuzzer knows the actions from the same list.  Adding an
 * action is one row here, its fields and its act_ function.
 *
 * Each row of CONDITIONS() is X(NAME): a wait step's "until"; the engine
 * evaluates it with cond_NAME() (run.c), one function per condition.
 */
#ifndef ACTION_H
#define ACTION_H

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

#define CONDITIONS(X) \
	X(connected) \
	X(converged) \
	X(visible) \
	X(taken) \
	X(fetched) \
	X(metric)

#endif
