/*
 * version.h: what every program prints for --version and run.json
 * records.  VERSION is the release; version_sha is the git commit the
 * build came from ("unknown" outside a git checkout), baked in by the
 * Makefile into $(O)/gen/version.c at build time.
 */
#ifndef VERSION_H
#define VERSION_H

#define VERSION	"0.1.0"

extern const char version_sha[];

/* "PROG 0.1.0 (git SHA)" on stdout, for --version. */
#define VERSION_PRINT(prog) \
	printf("%s %s (git %s)\n", (prog), VERSION, version_sha)

#endif
