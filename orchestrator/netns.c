/*
 * netns.c: the "netns" launcher (launch.h; root only).  A run gets a short
 * id ("fl" and six hex digits); its switch namespace ID-sw holds a bridge,
 * and peer k its own namespace ID-k, joined to the bridge by a veth pair
 * (eth0 inside, 10.77.0.0/16, host k+2), made with iproute2 on first use.
 * The peer enters its namespace with setns(2) in the forked child
 * (fleet_exec), not through "ip netns exec", which remounts /sys.  Every
 * interface lives inside a namespace of the run, so concurrent runs never
 * collide; deleting the namespaces removes the veths and the nft tables
 * with them.
 *
 * Faults at the network layer are nft rules in the peer's namespace (table
 * inet fleetlab): a partition drops what goes to or comes from the cut
 * addresses (TCP sees real timeouts), a drop discards that share of what
 * the peer sends.  No delay: netem is not in this kernel, and launch.c
 * refuses a scenario that asks for it.
 *
 * Cleaning: before it makes anything a run writes NETNS_STATE_DIR/ID.json
 * (its pid and start time); teardown removes its namespaces and that file.
 * A run killed before its teardown leaves the file, and the next netns run
 * (netns_clean_stale) removes the namespaces of every run whose process is
 * gone, by their ids.  The peers of a killed run die with it (PDEATHSIG).
 */
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <sched.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "clock.h"
#include "fleet.h"
#include "launch.h"
#include "xmalloc.h"

#define NETNS_RUN_DIR	"/run/netns"
#define NETNS_CMD_MS	10000		/* bound on one ip or nft */

struct netns {
	char		 id[16];	/* "fl" + 6 hex digits */
	char		 log[600];	/* RUN/netns.log: the commands' output */
	char		 state[320];	/* NETNS_STATE_DIR/ID.json */
	bool		 made[FLEET_MAX_PEERS];	/* peer k's namespace exists */
	bool		 nft[FLEET_MAX_PEERS];	/* and its nft table */
};

/* The start time of pid (field 22 of /proc/PID/stat); 0 if gone. */
static unsigned long long
proc_start(pid_t pid)
{
	char path[64], buf[1024], *c;
	unsigned long long t = 0;
	FILE *fp;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fp = fopen(path, "r")) == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	if ((c = strrchr(buf, ')')) == NULL ||
	    sscanf(c + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u "
	    "%*u %*d %*d %*d %*d %*d %*d %llu", &t) != 1)
		return 0;
	return t;
}

/* argv inside namespace ns (NULL: ours), its output appended to log,
 * bounded: its exit status, or -1. */
static int
netns_run(const char *ns, char *const argv[], const char *log)
{
	char path[128];
	int fd = -1, rc;

	if (ns != NULL) {
		snprintf(path, sizeof(path), NETNS_RUN_DIR "/%s", ns);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
			return -1;
	}
	rc = fleet_run_bounded(argv, log, true, fd, NETNS_CMD_MS);
	if (fd != -1)
		close(fd);
	return rc;
}

/* ip [-n NS] -batch FILE with the lines of text; 0 or -1 with err. */
static int
ip_batch(struct netns *n, const char *ns, const char *text, char *err,
    size_t len)
{
	char file[700];
	FILE *fp;
	int rc;

	snprintf(file, sizeof(file), "%s.batch", n->log);
	if ((fp = fopen(file, "w")) == NULL) {
		snprintf(err, len, "%s: %s", file, strerror(errno));
		return -1;
	}
	fputs(text, fp);
	fclose(fp);
	{
		char *argv[] = { (char *)"ip", (char *)"-n", (char *)ns,
		    (char *)"-batch", file, NULL };
		char *plain[] = { (char *)"ip", (char *)"-batch", file, NULL };

		rc = netns_run(NULL, ns != NULL ? argv : plain, n->log);
	}
	unlink(file);
	if (rc != 0) {
		snprintf(err, len, "ip%s%s -batch failed (%d): see %s",
		    ns ? " -n " : "", ns ? ns : "", rc, n->log);
		return -1;
	}
	return 0;
}

/* Unmount and unlink one named namespace (what "ip netns del" does). */
static void
ns_remove(const char *name)
{
	char path[300];

	snprintf(path, sizeof(path), NETNS_RUN_DIR "/%s", name);
	umount2(path, MNT_DETACH);
	unlink(path);
}

/* Every namespace named ID-*: removed; how many. */
static int
ns_remove_run(const char *id)
{
	size_t idlen = strlen(id);
	struct dirent *de;
	DIR *d;
	int k = 0;

	if ((d = opendir(NETNS_RUN_DIR)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL)
		if (strncmp(de->d_name, id, idlen) == 0 &&
		    de->d_name[idlen] == '-') {
			ns_remove(de->d_name);
			k++;
		}
	closedir(d);
	return k;
}

int
netns_clean_stale(void)
{
	struct dirent *de;
	DIR *d;
	int cleaned = 0;

	if ((d = opendir(NETNS_STATE_DIR)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		char path[300], id[16];
		json_t *st;
		pid_t pid;
		unsigned long long start;

		if (strncmp(de->d_name, "fl", 2) != 0 ||
		    strlen(de->d_name) != 13 ||
		    strcmp(de->d_name + 8, ".json") != 0)
			continue;
		snprintf(path, sizeof(path), NETNS_STATE_DIR "/%s", de->d_name);
		snprintf(id, sizeof(id), "%.8s", de->d_name);
		if ((st = json_load_file(path, 0, NULL)) == NULL)
			continue;
		pid = (pid_t)json_integer_value(json_object_get(st, "pid"));
		start = (unsigned long long)json_integer_value(
		    json_object_get(st, "start"));
		json_decref(st);
		/* Its run still goes on: leave it alone. */
		if (pid > 0 && start != 0 && proc_start(pid) == start)
			continue;
		ns_remove_run(id);
		unlink(path);
		cleaned++;
	}
	closedir(d);
	return cleaned;
}

int
netns_prepare(struct fleet *f, int npeers, char *err, size_t len)
{
	struct netns *n;
	char path[300], sw[32], text[256];
	json_t *st;
	struct stat sb;

	(void)npeers;
	if (geteuid() != 0) {
		snprintf(err, len, "the netns launcher needs root");
		return -1;
	}
	if (access("/sbin/ip", X_OK) != 0 && access("/usr/sbin/ip", X_OK) != 0
	    && access("/usr/bin/ip", X_OK) != 0) {
		snprintf(err, len, "the netns launcher needs iproute2 (ip)");
		return -1;
	}
	netns_clean_stale();
	n = xcalloc(1, sizeof(*n));
	for (int tries = 0; ; tries++) {
		uint32_t r = (uint32_t)getpid() * 2654435761u ^
		    (uint32_t)clock_mono_us() ^ (uint32_t)tries * 40503u;

		snprintf(n->id, sizeof(n->id), "fl%06x", r & 0xffffff);
		snprintf(path, sizeof(path), NETNS_STATE_DIR "/%s.json", n->id);
		if (stat(path, &sb) == -1 || tries > 100)
			break;
	}
	snprintf(n->state, sizeof(n->state), "%s", path);
	snprintf(f->launch_id, sizeof(f->launch_id), "%s", n->id);
	snprintf(n->log, sizeof(n->log), "%s/netns.log", f->run_dir);
	f->launch_state = n;
	/* The state file first: a kill from here on is cleaned next time. */
	mkdir(NETNS_STATE_DIR, 0755);
	st = json_pack("{s:i, s:I, s:s, s:s}", "pid", (int)getpid(), "start",
	    (json_int_t)proc_start(getpid()), "id", n->id, "run_dir",
	    f->run_dir);
	if (json_dump_file(st, n->state, JSON_COMPACT) != 0) {
		json_decref(st);
		snprintf(err, len, "cannot write %s", n->state);
		return -1;
	}
	json_decref(st);
	snprintf(sw, sizeof(sw), "%s-sw", n->id);
	snprintf(text, sizeof(text), "netns add %s\n", sw);
	if (ip_batch(n, NULL, text, err, len) == -1)
		return -1;
	snprintf(text, sizeof(text), "link set lo up\n"
	    "link add br0 type bridge\nlink set br0 up\n");
	return ip_batch(n, sw, text, err, len);
}

/* Peer k's address (no port) into buf: 10.77.0.0/16, host k + 2. */
static void
peer_addr(int k, char *buf, size_t len)
{
	snprintf(buf, len, "10.77.%d.%d", (k + 2) >> 8, (k + 2) & 0xff);
}

void
netns_endpoint(struct fleet *f, const struct peer *p, char *buf,
    size_t len)
{
	char ip[32];

	(void)f;
	peer_addr(p->index, ip, sizeof(ip));
	snprintf(buf, len, "%s:0", ip);
}

/* Peer k's namespace, veth and address, made once. */
static int
peer_make(struct netns *n, int k, char *err, size_t len)
{
	char ns[32], sw[32], ip[32], text[512];

	if (n->made[k])
		return 0;
	snprintf(ns, sizeof(ns), "%s-%d", n->id, k);
	snprintf(sw, sizeof(sw), "%s-sw", n->id);
	peer_addr(k, ip, sizeof(ip));
	snprintf(text, sizeof(text), "netns add %s\n", ns);
	if (ip_batch(n, NULL, text, err, len) == -1)
		return -1;
	snprintf(text, sizeof(text), "link add v%d type veth peer name eth0 "
	    "netns %s\nlink set v%d master br0 up\n", k, ns, k);
	if (ip_batch(n, sw, text, err, len) == -1)
		return -1;
	snprintf(text, sizeof(text), "link set lo up\naddr add %s/16 dev eth0\n"
	    "link set eth0 up\n", ip);
	if (ip_batch(n, ns, text, err, len) == -1)
		return -1;
	n->made[k] = true;
	return 0;
}

int
netns_spawn(struct fleet *f, struct peer *p, char *err, size_t len)
{
	struct netns *n = f->launch_state;
	char path[128];
	int fd, rc;

	if (n == NULL || p->index >= FLEET_MAX_PEERS) {
		snprintf(err, len, "netns: not prepared");
		return -1;
	}
	if (peer_make(n, p->index, err, len) == -1)
		return -1;
	snprintf(path, sizeof(path), NETNS_RUN_DIR "/%s-%d", n->id, p->index);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		snprintf(err, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	rc = fleet_exec(f, p, fd, err, len);
	close(fd);
	return rc;
}

/* *s = fmt of *s, a and b (three %s): a string grown (malloc'd). */
static void __attribute__((format(printf, 2, 0)))
cat(char **s, const char *fmt, const char *a, const char *b)
{
	char *next;

	xasprintf(&next, fmt, *s, a, b);
	free(*s);
	*s = next;
}

/*
 * The peer's nft table, made at its first fault: base chains in and out
 * jump to part_in and part_out (the partition) and loss (the drops), so
 * a partition step and a drop step each replace only their own rules.
 */
#define NFT_TABLE "add table inet fleetlab; " \
	"add chain inet fleetlab in { type filter hook input priority 0; }; " \
	"add chain inet fleetlab out { type filter hook output priority 0; }; " \
	"add chain inet fleetlab part_in; add chain inet fleetlab part_out; " \
	"add chain inet fleetlab loss; " \
	"add rule inet fleetlab in jump part_in; " \
	"add rule inet fleetlab out jump part_out; " \
	"add rule inet fleetlab out jump loss; "

int
netns_fault(struct fleet *f, struct peer *p, const struct launch_fault *nf,
    char *err, size_t len)
{
	struct netns *n = f->launch_state;
	char ns[32], *rules, *set = xstrdup(""), num[32];
	int rc;

	if (n == NULL || p->index >= FLEET_MAX_PEERS || !n->made[p->index]) {
		free(set);
		snprintf(err, len, "netns: %s has no namespace", p->name);
		return -1;
	}
	snprintf(ns, sizeof(ns), "%s-%d", n->id, p->index);
	for (int i = 0; i < nf->ncut; i++)
		cat(&set, "%s%s%s", i ? ", " : "", nf->cut[i]);
	rules = xstrdup("");
	if (nf->clear)
		cat(&rules, "%s%s%s", n->nft[p->index] ?
		    "delete table inet fleetlab" : "", "");
	else {
		if (!n->nft[p->index])
			cat(&rules, "%s%s%s", NFT_TABLE, "");
		if (nf->partition) {
			cat(&rules, "%s%s%s", "flush chain inet fleetlab "
			    "part_in; flush chain inet fleetlab part_out", "");
			if (nf->ncut > 0) {
				cat(&rules, "%s; add rule inet fleetlab part_in "
				    "ip saddr { %s } drop%s", set, "");
				cat(&rules, "%s; add rule inet fleetlab part_out "
				    "ip daddr { %s } drop%s", set, "");
			}
		} else {
			snprintf(num, sizeof(num), "%u", (unsigned)(nf->drop *
			    1000000.0 + 0.5));
			cat(&rules, "%s%s%s", "flush chain inet fleetlab loss",
			    "");
			if (nf->drop > 0) {
				cat(&rules, "%s; add rule inet fleetlab loss "
				    "%s%s", nf->target ? "ip daddr " : "",
				    nf->target ? nf->target : "");
				cat(&rules, "%s numgen random mod 1000000 < "
				    "%s drop%s", num, "");
			}
		}
	}
	free(set);
	if (rules[0] == '\0') {	/* clear with no table: nothing to do */
		free(rules);
		return 0;
	}
	{
		char *argv[] = { (char *)"nft", rules, NULL };

		rc = netns_run(ns, argv, n->log);
	}
	if (rc != 0)
		snprintf(err, len, "nft in %s failed (%d): %.200s; see %s", ns,
		    rc, rules, n->log);
	else
		n->nft[p->index] = !nf->clear;
	free(rules);
	return rc == 0 ? 0 : -1;
}

void
netns_teardown(struct fleet *f)
{
	struct netns *n = f->launch_state;

	if (n == NULL)
		return;
	ns_remove_run(n->id);
	unlink(n->state);
	free(n);
	f->launch_state = NULL;
}
