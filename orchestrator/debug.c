/*
 * debug.c: hang capture and kept fleets (see debug.h).
 *
 * Stacks come from gdb (gdb -batch -p PID -ex 'thread apply all bt') where
 * it exists, else from /proc/PID/{stack,wchan,status}.  Every external
 * command is bounded in time.  "down" ends only processes this project
 * started: a pid from run.json is signalled only if its command line is
 * peerd's with that run's directory.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "debug.h"
#include "fleet.h"
#include "log.h"
#include "run.h"
#include "xmalloc.h"

#define GDB_TIMEOUT_MS	30000
#define CAPTURE_GDB_MAX	16	/* gdb for at most this many unnamed peers */
#define CAPTURE_MS	60000	/* then only /proc views, no questions */

static bool
have_gdb(char *path, size_t len)
{
	const char *dirs[] = { "/usr/bin", "/usr/local/bin", "/bin" };

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, len, "%s/gdb", dirs[i]);
		if (access(path, X_OK) == 0)
			return true;
	}
	return false;
}

static void
append_file(FILE *out, const char *path, const char *title)
{
	char buf[4096];
	size_t n;
	FILE *in;

	fprintf(out, "== %s (%s)\n", title, path);
	if ((in = fopen(path, "r")) == NULL) {
		fprintf(out, "(unreadable: %s)\n", strerror(errno));
		return;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, out);
	fclose(in);
	fputc('\n', out);
}

/* True if pid is stopped (state T or t in /proc/PID/stat). */
static bool
stopped(pid_t pid)
{
	char st;

	fleet_proc(pid, &st);
	return st == 'T' || st == 't';
}

static void
capture_stacks(const struct peer *p, const char *dir, bool use_gdb)
{
	pid_t pid = p->peerd_pid > 0 ? p->peerd_pid : p->pid;
	char path[700], gdb[64], pidtext[32], procp[64];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%d.stack.txt", dir, p->index);
	snprintf(pidtext, sizeof(pidtext), "%d", (int)pid);
	/* gdb cannot make a stopped process run to show its threads. */
	if (use_gdb && !stopped(pid) && have_gdb(gdb, sizeof(gdb))) {
		char *argv[] = { gdb, (char *)"-batch", (char *)"-nx",
		    (char *)"-p", pidtext, (char *)"-ex",
		    (char *)"thread apply all bt full", NULL };

		if (fleet_run_bounded(argv, path, false, -1,
		    GDB_TIMEOUT_MS) == 0)
			return;
	}
	/* No gdb (or it failed): what the kernel says. */
	if ((fp = fopen(path, "a")) == NULL)
		return;
	fprintf(fp, "%s; kernel view of pid %d\n", stopped(pid) ?
	    "the process is stopped (SIGSTOP), so no gdb" : !use_gdb ?
	    "gdb is kept for the named peers and the first few (a big fleet)" :
	    "gdb was not available or failed", (int)pid);
	snprintf(procp, sizeof(procp), "/proc/%d/wchan", (int)pid);
	append_file(fp, procp, "wchan");
	snprintf(procp, sizeof(procp), "/proc/%d/stack", (int)pid);
	append_file(fp, procp, "kernel stack");
	snprintf(procp, sizeof(procp), "/proc/%d/status", (int)pid);
	append_file(fp, procp, "status");
	fclose(fp);
}

void
debug_capture_hang(struct run *r, const char *why)
{
	char dir[600], path[700], err[256];
	FILE *sum;
	uint64_t t0 = clock_mono_ms();

	snprintf(dir, sizeof(dir), "%s/hang", r->dir);
	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/README.txt", dir);
	sum = fopen(path, "w");
	if (sum != NULL)
		fprintf(sum, "Hang captured %.1f s into the run: %s.\n"
		    "Per peer: <k>.stack.txt (gdb backtraces of every thread, or "
		    "the kernel's view), <k>.dump.json and <k>.trace.json (if "
		    "it still answered).\n\n", (double)(clock_mono_ms() -
		    r->t0_ms) / 1000.0, why);
	for (int i = 0, ngdb = 0; i < r->fleet.npeers; i++) {
		struct peer *p = r->fleet.peers[i];
		json_t *args, *res;
		bool answered = false, in_time, use_gdb;

		if (!fleet_live(p))
			continue;
		/*
		 * A big fleet's capture stays bounded: gdb for the peers the
		 * watchdog named and the first CAPTURE_GDB_MAX others, the
		 * kernel's view for the rest; no questions once the capture
		 * has run CAPTURE_MS (every peer still gets its stack file).
		 */
		in_time = clock_mono_ms() < t0 + CAPTURE_MS;
		use_gdb = in_time && (p->stuck || ngdb < CAPTURE_GDB_MAX);
		if (use_gdb && !p->stuck)
			ngdb++;
		capture_stacks(p, dir, use_gdb);
		args = json_pack("{s:i}", "limit", 20);
		if (in_time && !stopped(p->peerd_pid > 0 ? p->peerd_pid : p->pid) &&
		    (res = fleet_call(p, "dump", args, 2000, err,
		    sizeof(err))) != NULL) {
			snprintf(path, sizeof(path), "%s/%d.dump.json", dir, i);
			json_dump_file(res, path, JSON_INDENT(2));
			json_decref(res);
			answered = true;
		}
		json_decref(args);
		args = json_pack("{s:i}", "n", 200);
		if (answered && (res = fleet_call(p, "trace", args, 2000, err,
		    sizeof(err))) != NULL) {
			snprintf(path, sizeof(path), "%s/%d.trace.json", dir, i);
			json_dump_file(res, path, JSON_INDENT(2));
			json_decref(res);
		}
		json_decref(args);
		if (sum != NULL)
			fprintf(sum, "%s  pid %d  %s  %s%s%s\n", p->name,
			    (int)(p->peerd_pid > 0 ? p->peerd_pid : p->pid),
			    fleet_state_name(p->state), answered ?
			    "answered" : "DID NOT ANSWER", p->verdict[0] ?
			    "  " : "", p->verdict);
	}
	if (sum != NULL)
		fclose(sum);
	fprintf(stderr, "%shang captured in %s\n", r->tty ? "\r\033[K" : "",
	    dir);
}

/*
 * The program beside the running orchestrate, as a command that pastes
 * as it is: "build/peerctl" when orchestrate ran as build/orchestrate,
 * the bare name when it ran from PATH.
 */
static void
sibling(const struct run *r, const char *prog, char *buf, size_t len)
{
	const char *self = r->opts.argv != NULL ? r->opts.argv[0] : NULL;
	const char *slash = self != NULL ? strrchr(self, '/') : NULL;

	if (slash == NULL)
		snprintf(buf, len, "%s", prog);
	else
		snprintf(buf, len, "%.*s/%s", (int)(slash - self), self, prog);
}

void
debug_print_kept(const struct run *r)
{
	char orch[PATH_MAX], ctl[PATH_MAX];

	sibling(r, "orchestrate", orch, sizeof(orch));
	sibling(r, "peerctl", ctl, sizeof(ctl));
	fprintf(stderr, "The fleet is still up (--keep). Stop it with:\n"
	    "  %s down %s\n\n%-5s %-8s %-22s %s\n", orch, r->dir, "peer",
	    "pid", "listen", "control");
	for (int i = 0; i < r->fleet.npeers; i++) {
		const struct peer *p = r->fleet.peers[i];

		if (!fleet_live(p))
			continue;
		fprintf(stderr, "%-5s %-8d %-22s %s\n", p->name,
		    (int)(p->peerd_pid > 0 ? p->peerd_pid : p->pid), p->listen,
		    p->control);
	}
	for (int i = 0; i < r->fleet.npeers; i++)
		if (fleet_live(r->fleet.peers[i])) {
			fprintf(stderr, "\ne.g.  %s %s hello\n", ctl,
			    r->fleet.peers[i]->control);
			break;
		}
}

/* True if pid runs peerd with dir on its command line. */
static bool
is_our_peer(pid_t pid, const char *dir)
{
	char path[64], buf[8192];
	bool peerd = false, has_dir = false;
	size_t n, off = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	if ((fp = fopen(path, "r")) == NULL)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	while (off < n) {
		const char *arg = buf + off;
		const char *base = strrchr(arg, '/');

		if (strcmp(base ? base + 1 : arg, "peerd") == 0)
			peerd = true;
		if (strcmp(arg, dir) == 0)
			has_dir = true;
		off += strlen(arg) + 1;
	}
	return peerd && has_dir;
}

int
debug_down(const char *run_dir)
{
	char path[700];
	json_t *run, *peers, *p;
	json_error_t jerr;
	size_t i;
	int stopped = 0, killed = 0;

	snprintf(path, sizeof(path), "%s/run.json", run_dir);
	if ((run = json_load_file(path, 0, &jerr)) == NULL) {
		fprintf(stderr, "orchestrate down: %s: %s\n", path, jerr.text);
		return 2;
	}
	peers = json_object_get(run, "peers");
	json_array_foreach(peers, i, p) {
		pid_t pid = (pid_t)json_integer_value(json_object_get(p,
		    "peerd_pid"));
		const char *dir = json_string_value(json_object_get(p, "dir"));

		if (pid <= 0 || dir == NULL || !is_our_peer(pid, dir))
			continue;
		kill(pid, SIGCONT);
		if (kill(pid, SIGTERM) == 0)
			stopped++;
	}
	for (int wait = 0; wait < 250; wait++) {
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		bool any = false;

		json_array_foreach(peers, i, p) {
			pid_t pid = (pid_t)json_integer_value(json_object_get(p,
			    "peerd_pid"));
			const char *dir = json_string_value(json_object_get(p,
			    "dir"));

			if (pid > 0 && dir != NULL && is_our_peer(pid, dir))
				any = true;
		}
		if (!any)
			break;
		nanosleep(&ts, NULL);
	}
	json_array_foreach(peers, i, p) {
		pid_t pid = (pid_t)json_integer_value(json_object_get(p,
		    "peerd_pid"));
		const char *dir = json_string_value(json_object_get(p, "dir"));

		if (pid > 0 && dir != NULL && is_our_peer(pid, dir) &&
		    kill(pid, SIGKILL) == 0)
			killed++;
	}
	printf("stopped %d peer(s)%s\n", stopped, killed ?
	    " (some needed SIGKILL)" : "");
	json_decref(run);
	return 0;
}
