/*
 * cmd.h: the one command table of the control socket (docs/control.md; after tmux's cmd_table).
 *
 * Each entry names a command, its argument spec and its handler.  Lookup
 * and argument checks (an object, known names only, required ones present,
 * each of its JSON type) happen once in cmd_dispatch, before any handler
 * runs; a handler receives arguments it can trust and answers the request
 * with ctl_ok or ctl_fail, now or later.
 */
#ifndef CMD_H
#define CMD_H

#include <stdbool.h>

#include <jansson.h>

struct ctl_req;
struct ctl_client;

enum cmd_type {
	CMD_T_STR = 1, CMD_T_INT = 2, CMD_T_NUM = 4, CMD_T_BOOL = 8,
	CMD_T_OBJ = 16, CMD_T_ARR = 32,
	CMD_T_ANY = 63,
};

struct cmd_arg {
	const char	*name;
	unsigned	 types;		/* mask of enum cmd_type */
	bool		 required;
	const char	*help;
};

struct cmd_entry {
	const char		*name;
	const struct cmd_arg	*args;		/* NULL-terminated */
	void			(*exec)(struct ctl_req *, struct ctl_client *,
				    json_t *);
	const char		*help;
};

/* Look the command up, check args, run the handler or answer the error. */
void	cmd_dispatch(struct ctl_req *req, struct ctl_client *c,
	    const char *name, json_t *args);
/* Check args against an entry's spec; NULL if fine, else a message. */
const char *cmd_check_args(const struct cmd_entry *ce, json_t *args,
	    char *buf, size_t len);
/* Integer argument or a default. */
json_int_t cmd_int(json_t *args, const char *name, json_int_t dflt);
/* String argument or a default. */
const char *cmd_str(json_t *args, const char *name, const char *dflt);
/* Bool argument or a default. */
bool	cmd_bool(json_t *args, const char *name, bool dflt);

#endif
