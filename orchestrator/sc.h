/*
 * sc.h: what the three files of the scenario parser share (scenario.c the
 * top level, parameters and entry points; scstep.c steps and checks; sc.c
 * the walk's helpers).  Private to orchestrator/: scenario.h is the API.
 *
 * struct sc is the state of one parse; struct at is one link of the chain
 * (parent container, key or index) the walk carries on the C stack, which
 * gives both the path of an error and, through jpos, its line.
 */
#ifndef SC_H
#define SC_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "action.h"

#define NAME_LEN	64		/* names of parameters and scenarios */
#define PARAM_STR_MAX	256		/* bounds what "$s" can multiply */
#define LABEL_MAX	1024
#define PEERS_MAX	1024
#define TIME_S_MAX	604800.0	/* a week */
#define TIME_MS_MAX	604800000ll
#define MSG_MAX		1024

struct at {
	const struct at	*up;
	const json_t	*parent;	/* NULL: the root */
	const char	*key;		/* NULL: an element */
	size_t		 index;
	const char	*from;		/* "$name" the value came from,
	    or NULL */
};

struct sc {
	const char	*file;
	struct jpos	*pos;
	char		*err;
	size_t		 errlen;
	bool		 failed;
	json_t		*decls;		/* name -> declaration (checked) */
	json_t		*params;	/* name -> resolved value */
	json_int_t	 npeers;	/* fleet.peers */
	json_int_t	 joins;		/* join steps seen so far */
	json_t		*knobs;		/* fleet.knobs, resolved */
	json_t		*measures;	/* wait measures so far: name -> true */
};

/* One row of a field table of action.h (FIELDS_*), for the walk. */
struct field {
	const char		*key;
	enum fkind		 kind;
	int			 flags;
	double			 min, max;	/* FK_INT, FK_NUM; FK_STR len */
	const char		*def;		/* JSON text, NULL: none */
	const char *const	*choices;	/* FK_ENUM */
};

#define nitems(a)	(sizeof(a) / sizeof((a)[0]))

#define MEASURES_TEXT_ALL "one listed in docs/report.md, counters.NAME " \
	"or an earlier wait step's measure"

/* Errors: the first wins; each returns -1 (or the caller returns NULL). */
int	 sc_fail(struct sc *, const struct at *, const char *, ...)
	    __attribute__((format(printf, 3, 4)));
int	 sc_fail_got(struct sc *, const struct at *, const json_t *,
	    const char *);
void	 sc_real_text(double, char *, size_t);
void	 sc_value_text(const json_t *, char *, size_t);
void	 sc_list_text(const char *const *, bool, char *, size_t);
void	 sc_params_text(const struct sc *, char *, size_t);

/* Substitution and lookup. */
bool	 sc_name_ok(const char *, size_t);
json_t	*sc_subst(struct sc *, struct at *, json_t *);
json_t	*sc_get(struct sc *, const struct at *, const json_t *, const char *,
	    struct at *);

/* Typed values. */
void	 sc_int_want(char *, size_t, const char *, json_int_t, json_int_t);
void	 sc_num_want(char *, size_t, double, double, bool);
int	 sc_want_int(struct sc *, const struct at *, const json_t *,
	    json_int_t, json_int_t, json_int_t *);
int	 sc_want_num(struct sc *, const struct at *, const json_t *, double,
	    double, bool, double *);
int	 sc_want_enum(struct sc *, const struct at *, const json_t *,
	    const char *const *);
int	 sc_want_str(struct sc *, const struct at *, const json_t *, size_t);
int	 sc_only_keys(struct sc *, const struct at *, const json_t *,
	    const char *const *, const struct field *, const char *);

/* Peers, knobs, measures. */
int	 sc_want_index(struct sc *, const struct at *, const json_t *,
	    json_int_t, json_int_t *);
json_t	*sc_want_sel(struct sc *, const struct at *, const json_t *,
	    json_int_t);
json_t	*sc_want_groups(struct sc *, const struct at *, const json_t *,
	    json_int_t);
json_t	*sc_want_knobs(struct sc *, const struct at *, const json_t *,
	    const json_t *);
bool	 sc_measure_name_ok(const char *);
int	 sc_measure_kind(const struct sc *, const char *);

/* Steps and checks (scstep.c). */
int	 scstep_steps(struct sc *, const struct at *, const json_t *, json_t *);
int	 scstep_checks(struct sc *, const struct at *, const json_t *,
    json_t *);

#endif /* SC_H */
