/*
 * log.c: timestamped log lines to stderr or a file (see log.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static const char *log_tag = "fleet";
static enum log_level log_lvl = LOG_LVL_INFO;
static FILE *log_fp;

static const char *const log_names[] = { "error", "warn", "info", "debug" };

int
log_init(const char *tag, enum log_level level, const char *path)
{
	FILE *fp;

	if (tag != NULL)
		log_tag = tag;
	log_lvl = level;
	if (path == NULL) {
		log_fp = NULL;
		return 0;
	}
	if ((fp = fopen(path, "a")) == NULL)
		return -1;
	setvbuf(fp, NULL, _IOLBF, 0);
	if (log_fp != NULL)
		fclose(log_fp);
	log_fp = fp;
	return 0;
}

int
log_level_parse(const char *name)
{
	for (size_t i = 0; i < sizeof(log_names) / sizeof(log_names[0]); i++)
		if (strcmp(name, log_names[i]) == 0)
			return (int)i;
	return -1;
}

void
log_set_level(enum log_level level)
{
	log_lvl = level;
}

enum log_level
log_get_level(void)
{
	return log_lvl;
}

static void
log_vline(enum log_level level, const char *errtext, const char *fmt,
    va_list ap)
{
	FILE *fp = log_fp != NULL ? log_fp : stderr;
	struct timespec ts;
	struct tm tm;
	char when[32];
	int saved = errno;

	if (level > log_lvl)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	flockfile(fp);
	fprintf(fp, "%s.%03ld %s[%d] %s: ", when, ts.tv_nsec / 1000000L,
	    log_tag, (int)getpid(), log_names[level]);
	vfprintf(fp, fmt, ap);
	if (errtext != NULL)
		fprintf(fp, ": %s", errtext);
	fputc('\n', fp);
	funlockfile(fp);
	errno = saved;
}

void
log_warn(const char *fmt, ...)
{
	va_list ap;
	const char *e = strerror(errno);

	va_start(ap, fmt);
	log_vline(LOG_LVL_WARN, e, fmt, ap);
	va_end(ap);
}

void
log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline(LOG_LVL_WARN, NULL, fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline(LOG_LVL_INFO, NULL, fmt, ap);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline(LOG_LVL_DEBUG, NULL, fmt, ap);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	va_list ap;
	const char *e = strerror(errno);

	va_start(ap, fmt);
	log_vline(LOG_LVL_ERROR, e, fmt, ap);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline(LOG_LVL_ERROR, NULL, fmt, ap);
	va_end(ap);
	exit(1);
}
