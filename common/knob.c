/*
 * knob.c: the table form of KNOBS() (see knob.h), for the code that walks
 * the knobs by name: the scenario parser, the fleet's command lines, the
 * docs check.
 */
#include <string.h>

#include "knob.h"

#define KNOB_ROW(flag, field, type, min, max, def, help) \
	{ flag, KNOB_##type, min, max, def, help },

const struct knob knob_table[] = {
	KNOBS(KNOB_ROW)
};
#undef KNOB_ROW

const size_t knob_count = sizeof(knob_table) / sizeof(knob_table[0]);

const char *const knob_levels[] = { "error", "warn", "info", "debug", NULL };
const char *const knob_methods[] = { "digest", "negentropy", "riblt", NULL };
const char *const knob_take_modes[] = { "lease", "quorum", NULL };
const char *const knob_link_auths[] = { "sig", "mac", NULL };

const char *const *
knob_words(const struct knob *k)
{
	switch (k->type) {
	case KNOB_LEVEL:	return knob_levels;
	case KNOB_METHOD:	return knob_methods;
	case KNOB_TAKEMODE:	return knob_take_modes;
	case KNOB_LINKAUTH:	return knob_link_auths;
	default:		return NULL;
	}
}

int
knob_word(const struct knob *k, const char *word)
{
	const char *const *w = knob_words(k);

	for (int i = 0; w != NULL && w[i] != NULL; i++)
		if (strcmp(w[i], word) == 0)
			return i;
	return -1;
}

const struct knob *
knob_find(const char *name)
{
	for (size_t i = 0; i < knob_count; i++)
		if (strcmp(knob_table[i].name, name) == 0)
			return &knob_table[i];
	return NULL;
}
