/*
 * fleet.c: spawning, signalling, reaping and talking to peerd processes
 * (see fleet.h).  The engine talks to peers through ctl.c on its loop;
 * fleet_call() here is the synchronous form (a poll() bound, its own
 * connection) for the hang capture and the kept-fleet tools, which run
 * when the loop does not.
 */
#include <sys/prctl.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <wordexp.h>

#include "clock.h"
#include "ctl.h"
#include "fleet.h"
#include "knob.h"
#include "launch.h"
#include "log.h"
#include "unixsock.h"
#include "xmalloc.h"

volatile sig_atomic_t fleet_sigchld;
int fleet_wake_fd = -1;			/* the wake pipe's read end */
static int wake_wr = -1;

static const char *const peer_state_names[] = { "new", "running", "paused",
    "stopped", "killed", "crashed" };

const char *
fleet_state_name(enum peer_state s)
{
	return (unsigned)s <= PEER_CRASHED ? peer_state_names[s] : "unknown";
}

void
fleet_wake(void)
{
	int saved = errno;

	if (wake_wr >= 0)
		(void)!write(wake_wr, "", 1);	/* full: a wake is pending */
	errno = saved;
}

static void
sigchld_handler(int sig)
{
	(void)sig;
	fleet_sigchld = 1;
	fleet_wake();
}

void
fleet_init(struct fleet *f, const char *run_dir, const char *peerd,
    json_t *knobs)
{
	struct sigaction sa;

	memset(f, 0, sizeof(*f));
	snprintf(f->run_dir, sizeof(f->run_dir), "%s", run_dir);
	snprintf(f->peerd, sizeof(f->peerd), "%s", peerd);
	f->knobs = knobs ? json_incref(knobs) : json_object();
	f->ready_timeout_ms = 15000;
	f->launch = launch_default();
	if (wake_wr < 0) {
		int fds[2];

		if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0) {
			fleet_wake_fd = fds[0];
			wake_wr = fds[1];
		}
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sigchld_handler;
	sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
}

bool
fleet_live(const struct peer *p)
{
	return p->state == PEER_RUNNING || p->state == PEER_PAUSED;
}

struct peer *
fleet_add(struct fleet *f, json_t *knobs)
{
	struct peer *p;
	char peers_dir[280];

	if (f->npeers >= FLEET_MAX_PEERS)
		return NULL;
	p = xcalloc(1, sizeof(*p));
	p->index = f->npeers;
	snprintf(p->name, sizeof(p->name), "p%d", p->index);
	snprintf(peers_dir, sizeof(peers_dir), "%s/peers", f->run_dir);
	mkdir(peers_dir, 0755);
	snprintf(p->dir, sizeof(p->dir), "%s/%d", peers_dir, p->index);
	mkdir(p->dir, 0700);
	snprintf(p->control, sizeof(p->control), "%s/control.sock", p->dir);
	if (strlen(p->control) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		/* sun_path is short: fall back to a private temp directory. */
		char tmpl[] = "/tmp/orch-XXXXXX";

		if (mkdtemp(tmpl) != NULL)
			snprintf(p->control, sizeof(p->control), "%s/%d.sock",
			    tmpl, p->index);
	}
	p->ctl_fd = -1;
	p->ready_fd = -1;
	p->next_id = 1;
	p->knobs = knobs ? json_incref(knobs) : NULL;
	f->peers[f->npeers++] = p;
	return p;
}

static void
argv_push(char ***argv, int *n, const char *s)
{
	*argv = xreallocarray(*argv, (size_t)*n + 2, sizeof(**argv));
	(*argv)[(*n)++] = xstrdup(s);
	(*argv)[*n] = NULL;
}

static void
argv_knobs(char ***argv, int *n, json_t *knobs)
{
	const char *k;
	json_t *v;
	char flag[128], val[64];

	if (knobs == NULL)
		return;
	json_object_foreach(knobs, k, v) {
		snprintf(flag, sizeof(flag), "--%s", k);
		/* A switch without a value: 1 passes it, 0 leaves it out. */
		if (knob_find(k) != NULL && knob_find(k)->type == KNOB_SWITCH) {
			if (json_integer_value(v) == 1)
				argv_push(argv, n, flag);
			continue;
		}
		argv_push(argv, n, flag);
		if (json_is_integer(v))
			snprintf(val, sizeof(val), "%lld",
			    (long long)json_integer_value(v));
		else if (json_is_string(v))
			snprintf(val, sizeof(val), "%s", json_string_value(v));
		else
			snprintf(val, sizeof(val), "%g", json_number_value(v));
		argv_push(argv, n, val);
	}
}

static void
argv_free(char **argv)
{
	if (argv == NULL)
		return;
	for (char **a = argv; *a != NULL; a++)
		free(*a);
	free(argv);
}

static char **
peer_argv(struct fleet *f, struct peer *p, char **seeds, int nseeds)
{
	char **argv = NULL, listen[64];
	int n = 0;

	f->launch->endpoint(f, p, listen, sizeof(listen));
	if (p->wrap != NULL)
		for (char **w = p->wrap; *w != NULL; w++)
			argv_push(&argv, &n, *w);
	argv_push(&argv, &n, f->peerd);
	argv_push(&argv, &n, "--name");
	argv_push(&argv, &n, p->name);
	argv_push(&argv, &n, "--dir");
	argv_push(&argv, &n, p->dir);
	argv_push(&argv, &n, "--listen");
	argv_push(&argv, &n, listen);
	argv_push(&argv, &n, "--control");
	argv_push(&argv, &n, p->control);
	if (f->binding[0] != '\0') {
		argv_push(&argv, &n, "--binding");
		argv_push(&argv, &n, f->binding);
	}
	/* A joiner's knobs are complete (the fleet's with its own laid over). */
	argv_knobs(&argv, &n, p->knobs != NULL ? p->knobs : f->knobs);
	for (int i = 0; i < nseeds; i++) {
		argv_push(&argv, &n, "--seed");
		argv_push(&argv, &n, seeds[i]);
	}
	if (p->hold)
		argv_push(&argv, &n, "--hold");
	if (f->seed != 0) {
		char fs[32];

		/* Per peer, from the run's seed: replay draws the same drops. */
		snprintf(fs, sizeof(fs), "%llu",
		    (unsigned long long)(f->seed + (uint64_t)p->index));
		argv_push(&argv, &n, "--fault-seed");
		argv_push(&argv, &n, fs);
	}
	return argv;
}

static char *
subst(const char *in, const char *key, const char *val)
{
	const char *at;
	char *out;

	if ((at = strstr(in, key)) == NULL)
		return xstrdup(in);
	xasprintf(&out, "%.*s%s%s", (int)(at - in), in, val, at + strlen(key));
	return out;
}

/* s in single quotes, for wordexp (malloc'd). */
static char *
shell_quote(const char *s)
{
	char *out = xmalloc(4 * strlen(s) + 3), *w = out;

	*w++ = '\'';
	for (; *s != '\0'; s++) {
		if (*s == '\'')
			w = stpcpy(w, "'\\''");
		else
			*w++ = *s;
	}
	*w++ = '\'';
	*w = '\0';
	return out;
}

int
fleet_set_wrap(struct peer *p, const char *prefix)
{
	char *qdir = shell_quote(p->dir), *qname = shell_quote(p->name);
	char *text = xstrdup(prefix), *next;
	wordexp_t we;
	char **argv = NULL;
	int n = 0;

	/* {dir} and {name} first (wordexp refuses braces), quoted. */
	while (strstr(text, "{dir}") || strstr(text, "{name}")) {
		next = subst(text, "{dir}", qdir);
		free(text);
		text = subst(next, "{name}", qname);
		free(next);
	}
	free(qdir);
	free(qname);
	if (wordexp(text, &we, WRDE_NOCMD | WRDE_UNDEF) != 0) {
		free(text);
		return -1;
	}
	free(text);
	for (size_t i = 0; i < we.we_wordc; i++)
		argv_push(&argv, &n, we.we_wordv[i]);
	wordfree(&we);
	if (n == 0)
		return -1;
	argv_free(p->wrap);
	p->wrap = argv;
	return 0;
}

char *
fleet_cmdline(const struct peer *p)
{
	size_t len = 1;
	char *s, *w;

	for (char **a = p->argv; a && *a; a++)
		len += 4 * strlen(*a) + 3;
	s = w = xmalloc(len);
	*w = '\0';
	for (char **a = p->argv; a && *a; a++) {
		bool plain = strpbrk(*a, " '\"\\$`*?[]{}();&|<>!#~") == NULL &&
		    **a != '\0';

		if (a != p->argv)
			*w++ = ' ';
		if (plain) {
			w = stpcpy(w, *a);
			continue;
		}
		*w++ = '\'';
		for (const char *c = *a; *c; c++) {
			if (*c == '\'')
				w = stpcpy(w, "'\\''");
			else
				*w++ = *c;
		}
		*w++ = '\'';
		*w = '\0';
	}
	*w = '\0';
	return s;
}

int
fleet_run_bounded(char *const argv[], const char *path, bool append,
    int netns_fd, int timeout_ms)
{
	uint64_t deadline = clock_mono_ms() + (uint64_t)timeout_ms;
	int fd, status;
	pid_t pid;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (append ?
	    O_APPEND : O_TRUNC), 0644)) == -1)
		return -1;
	fflush(NULL);
	if ((pid = fork()) == -1) {
		close(fd);
		return -1;
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);

		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		if (nul != -1)
			dup2(nul, STDIN_FILENO);
		if (netns_fd >= 0 && setns(netns_fd, CLONE_NEWNET) == -1)
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(fd);
	for (;;) {
		struct timespec ts = { 0, 2 * 1000 * 1000 };
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		if (w == -1 && errno != EINTR)
			return -1;
		if (clock_mono_ms() >= deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -1;
		}
		nanosleep(&ts, NULL);
	}
}

int
fleet_spawn(struct fleet *f, struct peer *p, char **seeds, int nseeds,
    char *err, size_t errlen)
{
	argv_free(p->argv);
	p->argv = peer_argv(f, p, seeds, nseeds);
	return f->launch->spawn(f, p, err, errlen);
}

int
fleet_exec(struct fleet *f, struct peer *p, int netns_fd, char *err,
    size_t errlen)
{
	int out[2], errfd;
	char path[700];
	pid_t parent = getpid(), pid;

	if (pipe2(out, O_CLOEXEC) == -1) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/stderr.log", p->dir);
	if ((errfd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
	    0644)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(out[0]);
		close(out[1]);
		return -1;
	}
	fflush(NULL);
	if ((pid = fork()) == -1) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(out[0]);
		close(out[1]);
		close(errfd);
		return -1;
	}
	if (pid == 0) {
		/* Own process group: a terminal's ^C reaches only us. */
		setpgid(0, 0);
		if (!f->keep) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent)
				_exit(127);
		}
		signal(SIGCHLD, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		dup2(out[1], STDOUT_FILENO);
		dup2(errfd, STDERR_FILENO);
		/* The peer's own network (netns launcher), not ip netns exec. */
		if (netns_fd >= 0 && setns(netns_fd, CLONE_NEWNET) == -1) {
			dprintf(errfd, "setns: %s\n", strerror(errno));
			_exit(127);
		}
		int nul = open("/dev/null", O_RDONLY);
		if (nul != -1)
			dup2(nul, STDIN_FILENO);
		execvp(p->argv[0], p->argv);
		dprintf(errfd, "exec %s: %s\n", p->argv[0], strerror(errno));
		_exit(127);
	}
	close(out[1]);
	close(errfd);
	fcntl(out[0], F_SETFL, fcntl(out[0], F_GETFL) | O_NONBLOCK);
	p->ready_fd = out[0];
	p->ready_len = 0;
	p->listen[0] = '\0';
	p->pid = pid;
	p->state = PEER_RUNNING;
	p->expect_exit = false;
	p->stuck = false;
	p->watch_inflight = false;
	p->takes_inflight = false;
	p->started_ms = clock_mono_ms();
	fleet_disconnect(p);
	return 0;
}

static void
ready_close(struct peer *p)
{
	if (p->ready_fd != -1)
		close(p->ready_fd);
	p->ready_fd = -1;
}

int
fleet_ready_read(struct peer *p, char *err, size_t errlen)
{
	char *nl;
	json_t *ready;
	json_error_t jerr;

	for (;;) {
		ssize_t r;

		if ((nl = memchr(p->ready_buf, '\n', p->ready_len)) != NULL)
			break;
		if (p->ready_len >= sizeof(p->ready_buf) - 1) {
			snprintf(err, errlen, "%s: ready line too long", p->name);
			ready_close(p);
			return -1;
		}
		r = read(p->ready_fd, p->ready_buf + p->ready_len,
		    sizeof(p->ready_buf) - 1 - p->ready_len);
		if (r == -1 && (errno == EAGAIN || errno == EINTR))
			return 0;
		if (r <= 0) {
			snprintf(err, errlen, "%s: exited before its ready line "
			    "(see %s/stderr.log and peerd.log)", p->name, p->dir);
			ready_close(p);
			return -1;
		}
		p->ready_len += (size_t)r;
	}
	ready_close(p);
	*nl = '\0';
	if ((ready = json_loads(p->ready_buf, 0, &jerr)) == NULL ||
	    !json_is_true(json_object_get(ready, "ready"))) {
		snprintf(err, errlen, "%s: bad ready line: %.200s", p->name,
		    p->ready_buf);
		json_decref(ready);
		return -1;
	}
	snprintf(p->listen, sizeof(p->listen), "%s",
	    json_string_value(json_object_get(ready, "listen")));
	snprintf(p->peer_id, sizeof(p->peer_id), "%s",
	    json_string_value(json_object_get(ready, "peer_id")));
	p->peerd_pid = (pid_t)json_integer_value(json_object_get(ready, "pid"));
	p->answered_ms = clock_mono_ms();
	json_decref(ready);
	return 1;
}

void
fleet_ready_abandon(struct peer *p)
{
	ready_close(p);
}

int
fleet_start(struct fleet *f, struct peer *p, char **seeds, int nseeds,
    char *err, size_t errlen)
{
	uint64_t deadline;
	int rc;

	if (fleet_spawn(f, p, seeds, nseeds, err, errlen) == -1)
		return -1;
	deadline = clock_mono_ms() + (uint64_t)f->ready_timeout_ms;
	while ((rc = fleet_ready_read(p, err, errlen)) == 0) {
		struct pollfd pfd = { .fd = p->ready_fd, .events = POLLIN };
		uint64_t now = clock_mono_ms();

		if (now >= deadline) {
			snprintf(err, errlen, "%s: no ready line within %d ms",
			    p->name, f->ready_timeout_ms);
			ready_close(p);
			return -1;
		}
		poll(&pfd, 1, (int)(deadline - now));
	}
	return rc == 1 ? 0 : -1;
}

/*
 * Nanoseconds pid has run plus waited runnable for a CPU (schedstat);
 * -1: gone or not kept by this kernel.  Finer than clock ticks: a peer of
 * a thousand on two cores may run under 10 ms a second, which ticks miss.
 */
long long
fleet_sched(pid_t pid)
{
	char path[64];
	unsigned long long run, wait;
	FILE *fp;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	if ((fp = fopen(path, "r")) == NULL)
		return -1;
	n = fscanf(fp, "%llu %llu", &run, &wait);
	fclose(fp);
	return n == 2 ? (long long)(run + wait) : -1;
}

/*
 * How far pid has got, for telling a waiting peer from an asleep one: its
 * schedstat (ns run plus ns waited for a CPU) where the kernel keeps it,
 * else its CPU ticks; only ever compared with itself.  -1: gone.
 */
long long
fleet_progress(pid_t pid, char *state)
{
	long long t = fleet_proc(pid, state), ns;

	if (t >= 0 && (ns = fleet_sched(pid)) >= 0)
		return ns;
	return t;
}

/* utime + stime of pid in clock ticks and its state letter; -1: gone. */
long long
fleet_proc(pid_t pid, char *state)
{
	char path[64], buf[1024], *c;
	unsigned long long ut, st;
	FILE *fp;
	size_t n;

	*state = '?';
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fp = fopen(path, "r")) == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	if ((c = strrchr(buf, ')')) == NULL || strlen(c) < 4)
		return -1;
	*state = c[2];
	/* After the state: ppid pgrp session tty tpgid flags minflt cminflt
	 * majflt cmajflt utime stime. */
	if (sscanf(c + 4, "%*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
	    &ut, &st) != 2)
		return -1;
	return (long long)(ut + st);
}

int
fleet_signal(struct peer *p, int sig)
{
	if (!fleet_live(p) || p->pid <= 0)
		return -1;
	if (sig == SIGTERM || sig == SIGKILL)
		p->expect_exit = true;
	/* The group: a wrapper (perf, strace) and peerd under it alike. */
	if (kill(-p->pid, sig) == -1 && kill(p->pid, sig) == -1)
		return -1;
	if (sig == SIGSTOP)
		p->state = PEER_PAUSED;
	else if (sig == SIGCONT)
		p->state = PEER_RUNNING;
	else if (sig == SIGTERM)
		kill(-p->pid, SIGCONT);	/* a stopped process cannot exit */
	return 0;
}

static struct peer *
peer_by_pid(struct fleet *f, pid_t pid)
{
	for (int i = 0; i < f->npeers; i++)
		if (f->peers[i]->pid == pid)
			return f->peers[i];
	return NULL;
}

int
fleet_reap(struct fleet *f)
{
	int status, crashed = 0;
	pid_t pid;

	fleet_sigchld = 0;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		struct peer *p = peer_by_pid(f, pid);

		if (p == NULL)
			continue;
		p->exit_status = status;
		p->pid = -1;
		fleet_disconnect(p);
		if (p->expect_exit)
			p->state = WIFSIGNALED(status) &&
			    WTERMSIG(status) == SIGKILL ? PEER_KILLED :
			    PEER_STOPPED;
		else {
			p->state = PEER_CRASHED;
			crashed++;
		}
	}
	return crashed;
}

bool
fleet_wait_exit(struct fleet *f, struct peer *p, int timeout_ms)
{
	uint64_t deadline = clock_mono_ms() + (uint64_t)timeout_ms;

	while (fleet_live(p)) {
		struct timespec ts = { 0, 5 * 1000 * 1000 };

		fleet_reap(f);
		if (!fleet_live(p))
			break;
		if (clock_mono_ms() >= deadline)
			return false;
		nanosleep(&ts, NULL);
	}
	return true;
}

void
fleet_teardown(struct fleet *f, int grace_ms)
{
	uint64_t deadline;
	bool any;

	for (int i = 0; i < f->npeers; i++)
		if (fleet_live(f->peers[i]))
			fleet_signal(f->peers[i], SIGTERM);
	deadline = clock_mono_ms() + (uint64_t)grace_ms;
	do {
		struct timespec ts = { 0, 5 * 1000 * 1000 };

		fleet_reap(f);
		any = false;
		for (int i = 0; i < f->npeers; i++)
			any |= fleet_live(f->peers[i]);
		if (any)
			nanosleep(&ts, NULL);
	} while (any && clock_mono_ms() < deadline);
	for (int i = 0; i < f->npeers; i++)
		if (fleet_live(f->peers[i])) {
			log_warnx("%s did not stop within %d ms: SIGKILL",
			    f->peers[i]->name, grace_ms);
			fleet_signal(f->peers[i], SIGKILL);
		}
	for (int i = 0; i < f->npeers; i++)
		if (f->peers[i]->pid > 0)
			fleet_wait_exit(f, f->peers[i], 5000);
}

void
fleet_disconnect(struct peer *p)
{
	if (p->ctl_fd != -1)
		close(p->ctl_fd);
	p->ctl_fd = -1;
	ctl_close(p);
	p->rlen = 0;
}

json_t *
fleet_call(struct peer *p, const char *cmd, json_t *args, int timeout_ms,
    char *err, size_t errlen)
{
	uint64_t deadline = clock_mono_ms() + (uint64_t)timeout_ms;
	json_t *req, *rep, *res;
	json_error_t jerr;
	char *line;
	size_t len, off = 0;
	int id;

	if (!fleet_live(p)) {
		snprintf(err, errlen, "%s is %s", p->name,
		    fleet_state_name(p->state));
		return NULL;
	}
	if (p->ctl_fd == -1 && (p->ctl_fd = unixsock_connect(p->control, 0)) == -1) {
		snprintf(err, errlen, "%s: connect %s: %s", p->name, p->control,
		    strerror(errno));
		return NULL;
	}
	id = p->next_id++;
	req = json_pack("{s:i, s:s}", "id", id, "cmd", cmd);
	if (args != NULL)
		json_object_set(req, "args", args);
	line = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	len = strlen(line);
	line = xreallocarray(line, len + 2, 1);
	line[len++] = '\n';
	while (off < len) {
		ssize_t w = send(p->ctl_fd, line + off, len - off, MSG_NOSIGNAL);

		if (w <= 0) {
			snprintf(err, errlen, "%s: send: %s", p->name,
			    strerror(errno));
			free(line);
			fleet_disconnect(p);
			return NULL;
		}
		off += (size_t)w;
	}
	free(line);
	for (;;) {
		char *nl = p->rbuf ? memchr(p->rbuf, '\n', p->rlen) : NULL;

		if (nl != NULL) {
			size_t n = (size_t)(nl - p->rbuf);

			rep = json_loadb(p->rbuf, n, 0, &jerr);
			memmove(p->rbuf, nl + 1, p->rlen - n - 1);
			p->rlen -= n + 1;
			if (rep == NULL) {
				snprintf(err, errlen, "%s: bad reply", p->name);
				fleet_disconnect(p);
				return NULL;
			}
			if (json_object_get(rep, "event") != NULL ||
			    json_integer_value(json_object_get(rep, "id")) != id) {
				json_decref(rep);
				continue;
			}
			break;
		}
		uint64_t now = clock_mono_ms();
		struct pollfd pfd = { .fd = p->ctl_fd, .events = POLLIN };

		if (now >= deadline) {
			snprintf(err, errlen, "timeout: %s did not answer %s "
			    "within %d ms", p->name, cmd, timeout_ms);
			fleet_disconnect(p);
			return NULL;
		}
		if (poll(&pfd, 1, (int)(deadline - now)) <= 0)
			continue;
		if (p->rcap - p->rlen < 65536) {
			p->rcap = p->rcap ? p->rcap * 2 : 262144;
			p->rbuf = xreallocarray(p->rbuf, p->rcap, 1);
		}
		ssize_t r = recv(p->ctl_fd, p->rbuf + p->rlen, p->rcap - p->rlen,
		    0);
		if (r <= 0) {
			snprintf(err, errlen, "%s: control connection closed",
			    p->name);
			fleet_disconnect(p);
			return NULL;
		}
		p->rlen += (size_t)r;
	}
	if (!json_is_true(json_object_get(rep, "ok"))) {
		json_t *e = json_object_get(rep, "error");

		snprintf(err, errlen, "%s: %s: %s", p->name,
		    json_string_value(json_object_get(e, "code")),
		    json_string_value(json_object_get(e, "message")));
		json_decref(rep);
		return NULL;
	}
	res = json_incref(json_object_get(rep, "result"));
	json_decref(rep);
	return res;
}

void
fleet_free(struct fleet *f)
{
	for (int i = 0; i < f->npeers; i++) {
		struct peer *p = f->peers[i];

		fleet_disconnect(p);
		ready_close(p);
		ctl_free(p);
		argv_free(p->argv);
		argv_free(p->wrap);
		json_decref(p->knobs);
		free(p->rbuf);
		free(p);
	}
	json_decref(f->knobs);
	f->npeers = 0;
}
