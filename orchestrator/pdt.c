/*
 * pdt.c: build/pdt, a small standalone tool for people who debug the
 * content layer (docs/pdt.md): BLAKE3 sums to diff against b3sum, FastCDC
 * chunk lists, Bao outboards and slices, and slice verification.
 *
 *   pdt COMMAND [ARGS...]      one row of the command table below
 *   pdt COMMAND --help         that command's usage
 *   pdt --help | --version
 *
 * It links only libcommon (blake3, bao, fastcdc, sha256, hex, fileio).
 * Exit status: 0 success; 1 a slice that failed verification; 2 bad usage
 * (unknown command or option, a malformed number or hash) or an input or
 * output that cannot be read or written.  Every error is one line on
 * standard error, "pdt: COMMAND: what".
 */
#include <sys/mman.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "bao.h"
#include "blake3.h"
#include "fastcdc.h"
#include "fileio.h"
#include "hex.h"
#include "sha256.h"
#include "version.h"

#define EXIT_VERIFY	1
#define EXIT_USAGE	2
#define READ_BUF	(1u << 20)

struct pdt_cmd {
	const char	*name;
	const char	*args;		/* the synopsis after the name */
	const char	*help;		/* one line */
	int		(*run)(const struct pdt_cmd *, int, char **);
};

/* One option a command takes: --name N, a number in [lo, hi]. */
struct pdt_opt {
	const char	*name;
	uint64_t	*val;
	uint64_t	 lo, hi;
	bool		 seen;
};

/* A file's bytes: mapped when it is a regular file, else read whole. */
struct pdt_input {
	const uint8_t	*p;
	size_t		 len;
	bool		 mapped;
};

static const struct pdt_cmd *cur;	/* for error lines */

static void
errline(const char *fmt, va_list ap)
{
	fprintf(stderr, "pdt: %s%s", cur != NULL ? cur->name : "",
	    cur != NULL ? ": " : "");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

/* Bad usage: one line with the command's synopsis; exit 2. */
static void __attribute__((noreturn, format(printf, 1, 2)))
usage_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "pdt: %s%s", cur != NULL ? cur->name : "",
	    cur != NULL ? ": " : "");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (cur != NULL)
		fprintf(stderr, " (usage: pdt %s %s)", cur->name, cur->args);
	fputc('\n', stderr);
	exit(EXIT_USAGE);
}

/* An input or output that failed: one line; exit 2. */
static void __attribute__((noreturn, format(printf, 1, 2)))
io_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	errline(fmt, ap);
	va_end(ap);
	exit(EXIT_USAGE);
}

/* A decimal number in [lo, hi], digits only (no sign, space or suffix). */
static int
parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	uint64_t n = 0;

	if (*s == '\0')
		return -1;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		if (n > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -1;
		n = n * 10 + (uint64_t)(*s - '0');
	}
	if (n < lo || n > hi)
		return -1;
	*out = n;
	return 0;
}

static uint64_t
number_arg(const char *what, const char *s, uint64_t lo, uint64_t hi)
{
	uint64_t v;

	if (parse_u64(s, lo, hi, &v) == -1)
		usage_fail("%s: want a decimal number %llu..%llu, not '%s'",
		    what, (unsigned long long)lo, (unsigned long long)hi, s);
	return v;
}

/*
 * Split argv (argv[0] is the command) into the options in opts and
 * positionals.  "--" ends the options; "-" is a positional (standard
 * input or output).  Returns the number of positionals, which must be
 * npos_min..npos_max.
 */
static int
parse_args(int argc, char **argv, struct pdt_opt *opts, size_t nopts,
    char **pos, int npos_min, int npos_max)
{
	bool only_pos = false;
	int npos = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		struct pdt_opt *o = NULL;
		size_t n;

		if (only_pos || a[0] != '-' || strcmp(a, "-") == 0) {
			if (npos == npos_max)
				usage_fail("too many arguments");
			pos[npos++] = argv[i];
			continue;
		}
		if (strcmp(a, "--") == 0) {
			only_pos = true;
			continue;
		}
		for (size_t k = 0; k < nopts && o == NULL; k++) {
			n = strlen(opts[k].name);
			if (strncmp(a, opts[k].name, n) == 0 &&
			    (a[n] == '\0' || a[n] == '='))
				o = &opts[k];
		}
		if (o == NULL)
			usage_fail("unknown option %s", a);
		if (o->seen)
			usage_fail("%s given twice", o->name);
		n = strlen(o->name);
		if (a[n] == '=')
			v = a + n + 1;
		else if (i + 1 < argc)
			v = argv[++i];
		else
			usage_fail("%s wants a value", o->name);
		*o->val = number_arg(o->name, v, o->lo, o->hi);
		o->seen = true;
	}
	if (npos < npos_min)
		usage_fail("missing arguments");
	return npos;
}

/* --group-kib N: a power of two 1..64 MiB/KiB; g = log2(N). */
static unsigned
group_log(uint64_t kib)
{
	unsigned g = 0;

	if ((kib & (kib - 1)) != 0)
		usage_fail("--group-kib: want a power of two, not %llu",
		    (unsigned long long)kib);
	while ((UINT64_C(1) << g) < kib)
		g++;
	return g;
}

static int
in_open(const char *path)
{
	int fd;

	if (strcmp(path, "-") == 0)
		return STDIN_FILENO;
	if ((fd = open(path, O_RDONLY)) == -1)
		io_fail("%s: %s", path, strerror(errno));
	return fd;
}

static void
in_close(int fd)
{
	if (fd != STDIN_FILENO)
		close(fd);
}

/* Flush what went to standard output; a failed write is an I/O error. */
static void
stdout_flush(void)
{
	if (fflush(stdout) != 0)
		io_fail("standard output: %s", strerror(errno));
}

static void
input_load(const char *path, struct pdt_input *in)
{
	static const uint8_t empty[1];
	struct stat st;
	int fd = in_open(path);
	size_t cap = 0;
	uint8_t *buf = NULL;
	ssize_t r;

	memset(in, 0, sizeof(*in));
	in->p = empty;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		in->len = (size_t)st.st_size;
		if (in->len > 0) {
			void *m = mmap(NULL, in->len, PROT_READ, MAP_PRIVATE,
			    fd, 0);

			if (m == MAP_FAILED)
				io_fail("%s: mmap: %s", path, strerror(errno));
			in->p = m;
			in->mapped = true;
		}
		in_close(fd);
		return;
	}
	for (;;) {
		if (cap - in->len < READ_BUF) {
			cap = cap ? cap * 2 : 4 * READ_BUF;
			if ((buf = realloc(buf, cap)) == NULL)
				io_fail("%s: out of memory", path);
		}
		r = read(fd, buf + in->len, cap - in->len);
		if (r == 0)
			break;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			io_fail("%s: %s", path, strerror(errno));
		}
		in->len += (size_t)r;
	}
	in_close(fd);
	if (buf != NULL)
		in->p = buf;
}

static void
input_free(struct pdt_input *in)
{
	if (in->mapped)
		munmap((void *)(uintptr_t)in->p, in->len);
	else if (in->len > 0)
		free((void *)(uintptr_t)in->p);
	memset(in, 0, sizeof(*in));
}

static int
out_open(const char *path)
{
	int fd;

	if (strcmp(path, "-") == 0)
		return STDOUT_FILENO;
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) == -1)
		io_fail("%s: %s", path, strerror(errno));
	return fd;
}

static void
out_write(int fd, const char *path, const void *p, size_t n)
{
	if (fileio_write_all(fd, p, n) == -1)
		io_fail("%s: write: %s", path, strerror(errno));
}

static void
out_close(int fd, const char *path)
{
	if (fd != STDOUT_FILENO && close(fd) == -1)
		io_fail("%s: close: %s", path, strerror(errno));
}

/* ---- b3sum ------------------------------------------------------------ */

/* The name as b3sum prints it: a backslash or newline escapes the line. */
static void
print_sum(const uint8_t hash[BLAKE3_OUT_LEN], const char *name)
{
	char hex[2 * BLAKE3_OUT_LEN + 1];
	bool esc = strpbrk(name, "\\\n") != NULL;

	hex_encode(hash, BLAKE3_OUT_LEN, hex);
	printf("%s%s  ", esc ? "\\" : "", hex);
	for (const char *c = name; *c != '\0'; c++) {
		if (esc && *c == '\\')
			fputs("\\\\", stdout);
		else if (esc && *c == '\n')
			fputs("\\n", stdout);
		else
			putchar(*c);
	}
	putchar('\n');
}

static int
cmd_b3sum(const struct pdt_cmd *c, int argc, char **argv)
{
	static char stdin_name[] = "-";
	char **pos = calloc((size_t)argc + 1, sizeof(*pos));
	uint8_t *buf = malloc(READ_BUF);
	int npos, rc = 0;

	(void)c;
	if (pos == NULL || buf == NULL)
		io_fail("out of memory");
	if ((npos = parse_args(argc, argv, NULL, 0, pos, 0, argc)) == 0)
		pos[npos++] = stdin_name;
	for (int i = 0; i < npos; i++) {
		const char *path = pos[i];
		struct blake3 h;
		uint8_t out[BLAKE3_OUT_LEN];
		ssize_t r = 0;
		int fd = strcmp(path, "-") == 0 ? STDIN_FILENO :
		    open(path, O_RDONLY);

		if (fd == -1) {
			fprintf(stderr, "pdt: b3sum: %s: %s\n", path,
			    strerror(errno));
			rc = EXIT_USAGE;
			continue;
		}
		blake3_init(&h);
		while ((r = read(fd, buf, READ_BUF)) != 0) {
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				break;
			blake3_update(&h, buf, (size_t)r);
		}
		if (r < 0) {
			fprintf(stderr, "pdt: b3sum: %s: %s\n", path,
			    strerror(errno));
			rc = EXIT_USAGE;
		} else {
			blake3_final(&h, out, sizeof(out));
			print_sum(out, path);
		}
		in_close(fd);
	}
	free(buf);
	free(pos);
	stdout_flush();
	return rc;
}

/* ---- chunks ----------------------------------------------------------- */

static void
chunk_print(EVP_MD_CTX *ctx, uint64_t off, uint64_t len)
{
	uint8_t md[SHA256_LEN];
	char hex[2 * SHA256_LEN + 1];
	unsigned mdlen = 0;

	if (EVP_DigestFinal_ex(ctx, md, &mdlen) != 1 ||
	    EVP_DigestInit_ex2(ctx, sha256_md(), NULL) != 1)
		io_fail("SHA-256 failed");
	hex_encode(md, SHA256_LEN, hex);
	printf("%llu %llu %s\n", (unsigned long long)off,
	    (unsigned long long)len, hex);
}

static int
cmd_chunks(const struct pdt_cmd *c, int argc, char **argv)
{
	struct fastcdc_params p = FASTCDC_PARAMS_DEFAULT;
	uint64_t mn = p.min, avg = p.avg, mx = p.max, level = p.level;
	struct pdt_opt opts[] = {
		{ "--min", &mn, 0, UINT32_MAX, false },
		{ "--avg", &avg, 0, UINT32_MAX, false },
		{ "--max", &mx, 0, UINT32_MAX, false },
		{ "--level", &level, 0, 255, false },
	};
	char *pos[1], err[80];
	uint8_t *buf;
	struct fastcdc cdc;
	EVP_MD_CTX *ctx;
	uint64_t off = 0;	/* where the current chunk starts */
	size_t len;
	ssize_t r;
	int fd;

	(void)c;
	parse_args(argc, argv, opts, 4, pos, 1, 1);
	p.min = (uint32_t)mn;
	p.avg = (uint32_t)avg;
	p.max = (uint32_t)mx;
	p.level = (unsigned)level;
	if (fastcdc_params_check(&p, err, sizeof(err)) == -1)
		usage_fail("%s", err);
	fd = in_open(pos[0]);
	if ((buf = malloc(READ_BUF)) == NULL ||
	    (ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex2(ctx, sha256_md(), NULL) != 1)
		io_fail("out of memory");
	fastcdc_init(&cdc, &p);
	while ((r = read(fd, buf, READ_BUF)) != 0) {
		size_t used = 0;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			io_fail("%s: %s", pos[0], strerror(errno));
		while (used < (size_t)r) {
			size_t t = fastcdc_update(&cdc, buf + used,
			    (size_t)r - used, &len);

			if (EVP_DigestUpdate(ctx, buf + used, t) != 1)
				io_fail("SHA-256 failed");
			used += t;
			if (len > 0) {
				chunk_print(ctx, off, len);
				off += len;
			}
		}
	}
	if ((len = fastcdc_final(&cdc)) > 0)
		chunk_print(ctx, off, len);
	in_close(fd);
	EVP_MD_CTX_free(ctx);
	free(buf);
	stdout_flush();
	return 0;
}

/* ---- outboard, slice, verify-slice ------------------------------------ */

static int
cmd_outboard(const struct pdt_cmd *c, int argc, char **argv)
{
	uint64_t kib = 1u << BAO_GROUP_LOG_DEFAULT;
	struct pdt_opt opts[] = {
		{ "--group-kib", &kib, 1, 1u << BAO_GROUP_LOG_MAX, false },
	};
	char *pos[2];
	struct pdt_input in;
	uint8_t root[BLAKE3_OUT_LEN], *ob;
	uint64_t oblen;
	unsigned g;
	int fd;

	(void)c;
	parse_args(argc, argv, opts, 1, pos, 2, 2);
	g = group_log(kib);
	input_load(pos[0], &in);
	oblen = bao_outboard_len(in.len, g);
	if ((ob = malloc((size_t)oblen)) == NULL)
		io_fail("out of memory");
	bao_outboard(in.p, in.len, g, root, ob);
	fd = out_open(pos[1]);
	out_write(fd, pos[1], ob, (size_t)oblen);
	out_close(fd, pos[1]);
	if (fd != STDOUT_FILENO)
		print_sum(root, pos[0]);
	free(ob);
	input_free(&in);
	return 0;
}

/* The group size of an outboard of oblen bytes for len content bytes. */
static unsigned
outboard_group(uint64_t len, uint64_t oblen, const char *path)
{
	for (unsigned g = 0; g <= BAO_GROUP_LOG_MAX; g++)
		if (bao_outboard_len(len, g) == oblen)
			return g;
	io_fail("%s: %llu bytes is no outboard of %llu content bytes at any "
	    "group size", path, (unsigned long long)oblen,
	    (unsigned long long)len);
}

static int
cmd_slice(const struct pdt_cmd *c, int argc, char **argv)
{
	uint64_t kib = 0, off, len, slen;
	struct pdt_opt opts[] = {
		{ "--group-kib", &kib, 1, 1u << BAO_GROUP_LOG_MAX, false },
	};
	char *pos[5];
	struct pdt_input in, ob;
	uint8_t *out;
	unsigned g;
	int fd;

	(void)c;
	parse_args(argc, argv, opts, 1, pos, 5, 5);
	off = number_arg("OFFSET", pos[2], 0, UINT64_MAX);
	len = number_arg("LEN", pos[3], 0, UINT64_MAX);
	g = kib != 0 ? group_log(kib) : 0;
	input_load(pos[0], &in);
	input_load(pos[1], &ob);
	if (ob.len < BAO_HEADER_LEN)
		io_fail("%s: %zu bytes is too short for an outboard", pos[1],
		    ob.len);
	if (bao_header_content_len(ob.p) != in.len)
		io_fail("%s is not the outboard of %s (its length field "
		    "says %llu bytes, the file has %zu)", pos[1], pos[0],
		    (unsigned long long)bao_header_content_len(ob.p), in.len);
	if (kib == 0)
		g = outboard_group(in.len, ob.len, pos[1]);
	else if (bao_outboard_len(in.len, g) != ob.len)
		io_fail("%s: %zu bytes is not an outboard of %zu bytes at "
		    "%llu KiB groups", pos[1], ob.len, in.len,
		    (unsigned long long)kib);
	slen = bao_slice_len(in.len, g, off, len);
	if ((out = malloc((size_t)slen)) == NULL)
		io_fail("out of memory for a %llu-byte slice",
		    (unsigned long long)slen);
	if (bao_slice(in.p, in.len, ob.p, g, off, len, out) == -1)
		io_fail("%s does not fit %s", pos[1], pos[0]);
	fd = out_open(pos[4]);
	out_write(fd, pos[4], out, (size_t)slen);
	out_close(fd, pos[4]);
	free(out);
	input_free(&in);
	input_free(&ob);
	return 0;
}

struct emit_out {
	int		 fd;		/* -1: a dry run */
	const char	*path;
};

static void
emit_bytes(void *arg, uint64_t content_off, const uint8_t *p, size_t n)
{
	struct emit_out *e = arg;

	(void)content_off;
	if (e->fd != -1)
		out_write(e->fd, e->path, p, n);
}

/* Verify the slice at group size g; 0 or -1 with the failure's words. */
static int
verify_run(const uint8_t root[32], unsigned g, uint64_t off, uint64_t len,
    const struct pdt_input *sl, struct emit_out *e, char *why, size_t whylen)
{
	struct bao_verify *v = bao_verify_new(root, g, off, len, emit_bytes, e);
	uint64_t bad_off = 0, bad_len = 0;
	const char *msg;
	int rc;

	if (v == NULL)
		io_fail("out of memory");
	rc = bao_verify_feed(v, sl->p, sl->len) == 0 &&
	    bao_verify_finish(v) == 0 ? 0 : -1;
	if (rc == -1) {
		msg = bao_verify_error(v, &bad_off, &bad_len);
		snprintf(why, whylen, "%s; first bad bytes [%llu, %llu) "
		    "at %u KiB groups", msg != NULL ? msg : "refused",
		    (unsigned long long)bad_off,
		    (unsigned long long)(bad_off + bad_len), 1u << g);
	}
	bao_verify_free(v);
	return rc;
}

static int
cmd_verify_slice(const struct pdt_cmd *c, int argc, char **argv)
{
	uint64_t kib = 0, off, len, clen;
	struct pdt_opt opts[] = {
		{ "--group-kib", &kib, 1, 1u << BAO_GROUP_LOG_MAX, false },
	};
	char *pos[5], why[256], first_why[256] = "";
	uint8_t root[BLAKE3_OUT_LEN];
	struct pdt_input sl;
	struct emit_out dry = { -1, NULL }, e;
	unsigned cand[BAO_GROUP_LOG_MAX + 1], ncand = 0;

	(void)c;
	parse_args(argc, argv, opts, 1, pos, 5, 5);
	if (strlen(pos[0]) != 2 * BLAKE3_OUT_LEN ||
	    hex_decode(pos[0], root, BLAKE3_OUT_LEN) == -1)
		usage_fail("ROOT: want 64 hex digits, not '%s'", pos[0]);
	off = number_arg("OFFSET", pos[1], 0, UINT64_MAX);
	len = number_arg("LEN", pos[2], 0, UINT64_MAX);
	input_load(pos[3], &sl);
	/*
	 * The group size: given, or each one at which a slice of this
	 * content length and range has this many bytes (the default first);
	 * none fits: the default, which names what is wrong.
	 */
	if (kib != 0) {
		cand[ncand++] = group_log(kib);
	} else if (sl.len >= BAO_HEADER_LEN) {
		clen = bao_header_content_len(sl.p);
		if (bao_slice_len(clen, BAO_GROUP_LOG_DEFAULT, off, len) ==
		    sl.len)
			cand[ncand++] = BAO_GROUP_LOG_DEFAULT;
		for (unsigned g = 0; g <= BAO_GROUP_LOG_MAX; g++)
			if (g != BAO_GROUP_LOG_DEFAULT &&
			    bao_slice_len(clen, g, off, len) == sl.len)
				cand[ncand++] = g;
	}
	if (ncand == 0)
		cand[ncand++] = BAO_GROUP_LOG_DEFAULT;
	/* A dry run first, so OUT is written only from a good slice. */
	for (unsigned k = 0; k < ncand; k++) {
		if (verify_run(root, cand[k], off, len, &sl, &dry, why,
		    sizeof(why)) == -1) {
			if (k == 0)
				snprintf(first_why, sizeof(first_why), "%s",
				    why);
			continue;
		}
		e.path = pos[4];
		e.fd = out_open(pos[4]);
		if (verify_run(root, cand[k], off, len, &sl, &e, why,
		    sizeof(why)) == -1)
			io_fail("%s: changed while read", pos[3]);
		out_close(e.fd, pos[4]);
		input_free(&sl);
		return 0;
	}
	fprintf(stderr, "pdt: verify-slice: %s: refused: %s\n", pos[3],
	    first_why);
	input_free(&sl);
	return EXIT_VERIFY;
}

/* ---- the command table -------------------------------------------------- */

static const struct pdt_cmd cmds[] = {
	{ "b3sum", "[FILE...]",
	    "BLAKE3 of each FILE (- or none: standard input), as b3sum "
	    "prints it", cmd_b3sum },
	{ "chunks", "[--min N] [--avg N] [--max N] [--level L] FILE",
	    "FastCDC chunks of FILE: offset, length, SHA-256 a line "
	    "(default 16384/65536/262144, level 2)", cmd_chunks },
	{ "outboard", "[--group-kib N] FILE OUT",
	    "write FILE's Bao outboard (N KiB groups, default 16) to OUT; "
	    "print the root", cmd_outboard },
	{ "slice", "[--group-kib N] FILE OUTBOARD OFFSET LEN OUT",
	    "write the Bao slice of FILE's bytes [OFFSET, OFFSET+LEN) to OUT",
	    cmd_slice },
	{ "verify-slice", "[--group-kib N] ROOT OFFSET LEN SLICE OUT",
	    "check SLICE against ROOT; write the verified bytes to OUT or "
	    "exit 1 naming the first bad range", cmd_verify_slice },
};
#define NCMDS	(sizeof(cmds) / sizeof(cmds[0]))

static void
help(FILE *fp)
{
	fprintf(fp, "usage: pdt COMMAND [ARGS...]   (pdt COMMAND --help)\n"
	    "commands:\n");
	for (size_t i = 0; i < NCMDS; i++)
		fprintf(fp, "  pdt %s %s\n      %s\n", cmds[i].name,
		    cmds[i].args, cmds[i].help);
	fprintf(fp, "  pdt --help | --version\n"
	    "numbers are decimal; FILE, OUTBOARD, SLICE may be - (standard "
	    "input), OUT may be - (standard output)\n"
	    "exit status: 0 success, 1 a slice failed verification, 2 bad "
	    "usage or an unreadable input\n");
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		help(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		help(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		VERSION_PRINT("pdt");
		return 0;
	}
	for (size_t i = 0; i < NCMDS; i++) {
		if (strcmp(argv[1], cmds[i].name) != 0)
			continue;
		cur = &cmds[i];
		if (argc == 3 && (strcmp(argv[2], "--help") == 0 ||
		    strcmp(argv[2], "-h") == 0)) {
			printf("usage: pdt %s %s\n  %s\n", cur->name,
			    cur->args, cur->help);
			return 0;
		}
		return cur->run(cur, argc - 1, argv + 1);
	}
	fprintf(stderr, "pdt: unknown command '%s' (pdt --help lists them)\n",
	    argv[1]);
	return EXIT_USAGE;
}
