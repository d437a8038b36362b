/*
 * peerctl.c: a small human client for one peer's control socket.
 *
 *   peerctl SOCKET COMMAND [JSON-ARGS]   one request; prints the reply
 *   peerctl SOCKET watch [JSON-ARGS]     subscribe (notify) and stream
 *   peerctl --help | --version
 *
 * The reply's "result" (or "error") is printed as indented JSON; exit
 * status 0 on success, 1 on an error reply, 2 on a usage or I/O error.
 */
#include <sys/socket.h>

#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "unixsock.h"
#include "version.h"

static void
help(FILE *fp)
{
	fprintf(fp,
	    "usage: peerctl SOCKET COMMAND [JSON-ARGS]\n"
	    "       peerctl SOCKET watch [JSON-ARGS]\n"
	    "examples:\n"
	    "  peerctl results/latest/peers/0/control.sock hello\n"
	    "  peerctl SOCK write '{\"type\":\"task#v1\",\"fields\":{\"n\":1}}'\n"
	    "  peerctl SOCK take '{\"type\":\"task#v1\",\"timeout_ms\":1000}'\n"
	    "  peerctl SOCK help       (lists every command)\n"
	    "       peerctl --help | --version\n"
	    "exit status: 0 success, 1 an error reply, 2 a usage or I/O "
	    "error\n");
}

static void
usage(void)
{
	help(stderr);
	exit(2);
}

static int
ctl_connect(const char *path)
{
	int fd;

	if ((fd = unixsock_connect(path, 0)) == -1) {
		if (errno == ENAMETOOLONG)
			fprintf(stderr, "peerctl: socket path too long\n");
		else
			fprintf(stderr, "peerctl: %s: %s\n", path,
			    strerror(errno));
		exit(2);
	}
	return fd;
}

static void
send_line(int fd, json_t *req)
{
	char *s = json_dumps(req, JSON_COMPACT);
	size_t len = strlen(s), off = 0;

	while (off < len || off == len) {
		const char *p = off < len ? s + off : "\n";
		size_t n = off < len ? len - off : 1;
		ssize_t w = write(fd, p, n);

		if (w <= 0) {
			fprintf(stderr, "peerctl: write: %s\n", strerror(errno));
			exit(2);
		}
		if (off == len)
			break;
		off += (size_t)w;
	}
	free(s);
}

/* Read one line (up to 64 MiB); NULL at EOF. */
static char *
read_line(int fd)
{
	static char *buf;
	static size_t len, cap;
	char *nl, *line;

	for (;;) {
		if (buf != NULL && (nl = memchr(buf, '\n', len)) != NULL) {
			size_t n = (size_t)(nl - buf);

			line = malloc(n + 1);
			memcpy(line, buf, n);
			line[n] = '\0';
			memmove(buf, nl + 1, len - n - 1);
			len -= n + 1;
			return line;
		}
		if (cap - len < 65536) {
			cap = cap ? cap * 2 : 131072;
			if (cap > (64u << 20) || (buf = realloc(buf, cap)) == NULL) {
				fprintf(stderr, "peerctl: reply too long\n");
				exit(2);
			}
		}
		ssize_t r = read(fd, buf + len, cap - len);
		if (r <= 0)
			return NULL;
		len += (size_t)r;
	}
}

int
main(int argc, char **argv)
{
	json_t *args = NULL, *req, *reply, *v;
	json_error_t err;
	const char *cmd;
	bool watch;
	char *line;
	int fd;

	if (argc == 2 && (strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0)) {
		help(stdout);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		VERSION_PRINT("peerctl");
		return 0;
	}
	if (argc < 3 || argc > 4)
		usage();
	signal(SIGPIPE, SIG_IGN);
	cmd = argv[2];
	watch = strcmp(cmd, "watch") == 0;
	if (argc == 4 && (args = json_loads(argv[3], 0, &err)) == NULL) {
		fprintf(stderr, "peerctl: JSON-ARGS: column %d: %s\n",
		    err.column, err.text);
		return 2;
	}
	fd = ctl_connect(argv[1]);
	req = json_pack("{s:i, s:s}", "id", 1, "cmd", watch ? "notify" : cmd);
	if (args != NULL)
		json_object_set_new(req, "args", args);
	send_line(fd, req);
	json_decref(req);
	while ((line = read_line(fd)) != NULL) {
		reply = json_loads(line, 0, &err);
		free(line);
		if (reply == NULL) {
			fprintf(stderr, "peerctl: bad reply: %s\n", err.text);
			return 2;
		}
		if (json_object_get(reply, "event") != NULL) {
			json_dumpf(reply, stdout, JSON_COMPACT);
			putchar('\n');
			fflush(stdout);
			json_decref(reply);
			continue;
		}
		if (!json_is_true(json_object_get(reply, "ok"))) {
			v = json_object_get(reply, "error");
			fprintf(stderr, "peerctl: %s: %s\n",
			    json_string_value(json_object_get(v, "code")),
			    json_string_value(json_object_get(v, "message")));
			json_decref(reply);
			return 1;
		}
		if (!watch) {
			json_dumpf(json_object_get(reply, "result"), stdout,
			    JSON_INDENT(2) | JSON_SORT_KEYS);
			putchar('\n');
			json_decref(reply);
			return 0;
		}
		json_decref(reply);
		fprintf(stderr, "peerctl: watching (Ctrl-C to stop)\n");
	}
	if (watch)
		return 0;
	fprintf(stderr, "peerctl: connection closed before a reply\n");
	return 2;
}
