/*
 * log.h: the one logging facility (after OpenBSD bgpd's log.c).
 *
 * Lines go to stderr or to a file chosen with log_init(); never to stdout,
 * which belongs to protocol output such as peerd's ready line.
 * log_warn appends strerror(errno); fatal/fatalx log and exit(1) and are for
 * start-up errors and broken invariants only, never for a misbehaving peer.
 */
#ifndef LOG_H
#define LOG_H

#include <stdarg.h>

enum log_level { LOG_LVL_ERROR = 0, LOG_LVL_WARN, LOG_LVL_INFO, LOG_LVL_DEBUG };

/* Set the process tag, the level and the file (NULL: stderr). 0 or -1. */
int	log_init(const char *tag, enum log_level level, const char *path);
/* Parse "error", "warn", "info", "debug"; -1 if unknown. */
int	log_level_parse(const char *name);
void	log_set_level(enum log_level level);
enum log_level log_get_level(void);

void	log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	fatal(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2), noreturn));

#endif
