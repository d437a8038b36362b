/*
 * catalog.h: the scenarios a user can name, and what each one is:
 * `orchestrate list`, `orchestrate describe NAME`, and the lookup of a
 * bare name (with "did you mean" when it names none).
 */
#ifndef CATALOG_H
#define CATALOG_H

#include <stddef.h>

/*
 * The path of SCENARIO into out: itself when it is a file or has a '/';
 * for a bare name, NAME.json in the first scenario directory that has it
 * (catalog_dirs).  NULL with err (the names it might have meant, and how
 * to list them) when a bare name names nothing.
 */
const char	*catalog_find(const char *arg, char *out, size_t len, char *err,
		    size_t errlen);
/* `orchestrate list`: every scenario found, its name and first sentence,
 * on stdout.  The exit status. */
int		 catalog_list(void);
/* `orchestrate describe NAME`: parameters (type, default, range, help),
 * steps and checks, on stdout.  The exit status. */
int		 catalog_describe(const char *arg);

#endif
