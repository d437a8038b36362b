/*
 * conf.c: the daemon's defaults, from the one knob list (common/knob.h):
 * the timing constants and the limits.  main.c lays the command line over
 * them; the fuzz harnesses start from them too.
 */
#include <string.h>

#include "knob.h"
#include "peerd.h"
#include "recon.h"

/* Every knob at its documented default (peerd --help). */
void
conf_defaults(struct peerd_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->listen = "127.0.0.1:0";
	c->group = "fleet";
	c->binding = "tcp";
#define KNOB_SET_U32(f, d)	c->f = (d)
#define KNOB_SET_SWITCH(f, d)	c->f = (d) != 0
#define KNOB_SET_LEVEL(f, d)	c->f = knob_levels[d]
#define KNOB_SET_METHOD(f, d)	c->f = (d)
#define KNOB_SET_TAKEMODE(f, d)	c->f = (d)
#define KNOB_SET_LINKAUTH(f, d)	c->f = (d)
#define KNOB_DEFAULT(flag, field, type, min, max, def, help) \
	KNOB_SET_##type(field, def);
	KNOBS(KNOB_DEFAULT)
#undef KNOB_DEFAULT
}
