/*
 * jdump.c: the JSON writer of the report files (see jdump.h).  Strings
 * are escaped by jansson itself; only numbers are formatted here.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jdump.h"
#include "num.h"
#include "xmalloc.h"

static int
cmp_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void
indent(FILE *fp, int depth)
{
	fputc('\n', fp);
	for (int i = 0; i < depth; i++)
		fputs("  ", fp);
}

static void
dump(const json_t *j, FILE *fp, int depth)
{
	char buf[NUM_BUF], *s;
	const char **keys;
	const char *k;
	json_t *v;
	size_t i, n;

	switch (json_typeof(j)) {
	case JSON_OBJECT:
		if ((n = json_object_size(j)) == 0) {
			fputs("{}", fp);
			break;
		}
		keys = xcalloc(n, sizeof(*keys));
		i = 0;
		json_object_foreach((json_t *)j, k, v)
			if (i < n)
				keys[i++] = k;
		qsort(keys, i, sizeof(*keys), cmp_key);
		fputc('{', fp);
		for (size_t x = 0; x < i; x++) {
			indent(fp, depth + 1);
			v = json_string(keys[x]);
			s = json_dumps(v, JSON_ENCODE_ANY);
			json_decref(v);
			fputs(s != NULL ? s : "\"\"", fp);
			free(s);
			fputs(": ", fp);
			dump(json_object_get(j, keys[x]), fp, depth + 1);
			if (x + 1 < i)
				fputc(',', fp);
		}
		free(keys);
		indent(fp, depth);
		fputc('}', fp);
		break;
	case JSON_ARRAY:
		if (json_array_size(j) == 0) {
			fputs("[]", fp);
			break;
		}
		fputc('[', fp);
		json_array_foreach((json_t *)j, i, v) {
			indent(fp, depth + 1);
			dump(v, fp, depth + 1);
			if (i + 1 < json_array_size(j))
				fputc(',', fp);
		}
		indent(fp, depth);
		fputc(']', fp);
		break;
	case JSON_REAL:
	case JSON_INTEGER:
		fputs(num_exact_json(j, buf, sizeof(buf)), fp);
		break;
	default:
		s = json_dumps(j, JSON_ENCODE_ANY);
		fputs(s != NULL ? s : "null", fp);
		free(s);
		break;
	}
}

int
jdump_fp(const json_t *j, FILE *fp)
{
	dump(j, fp, 0);
	fputc('\n', fp);
	return ferror(fp) ? -1 : 0;
}

int
jdump_file(const json_t *j, const char *path)
{
	char tmp[1100];
	FILE *fp;
	int rc;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((fp = fopen(tmp, "w")) == NULL)
		return -1;
	rc = jdump_fp(j, fp);
	if (fclose(fp) != 0 || rc != 0 || rename(tmp, path) != 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}
