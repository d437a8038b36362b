/*
 * test_docs_content.c: the worked examples of docs/content.md are what the
 * code produces, byte for byte (tests/unit/doc_blocks.h does the
 * comparing; DOCS_PRINT=1 prints the blocks).
 *
 * The example blob is 100 bytes, byte i = i: one chunk under one level-1
 * b node, built by blobtree_build into a fresh store whose pack and index
 * records are shown too; a one-byte edit of it (byte 50 set to 0xff) as a
 * z frame; a map of two entries and a level-1 node above that leaf; the
 * bo nodes of 40,000 bytes (byte i = i mod 251) at 16 KiB groups.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bao.h"
#include "blobtree.h"
#include "bonode.h"
#include "doc_blocks.h"
#include "nodestore.h"
#include "pmap.h"
#include "pnode.h"
#include "zdelta.h"

#define DOC	"docs/content.md"

static void
file_bytes(const char *path, long off, size_t n, const char *name)
{
	FILE *fp = fopen(path, "rb");
	uint8_t buf[512];

	ck_assert_ptr_nonnull(fp);
	ck_assert_uint_le(n, sizeof(buf));
	fseek(fp, off, SEEK_SET);
	ck_assert_uint_eq(fread(buf, 1, n, fp), n);
	fclose(fp);
	ex_bytes(name, buf, n);
}

static void
make_examples(const char *dir)
{
	struct blobtree_info info;
	struct nodestore *s;
	struct dcbor_buf b, node;
	struct pmap_info mi;
	uint8_t blob[100], edited[100], id[PNODE_ID_LEN], *ob, *content;
	struct pmap_kv kv[2] = {
		{ (const uint8_t *)"a", 1, (const uint8_t *)"1", 1 },
		{ (const uint8_t *)"b", 1, (const uint8_t *)"22", 2 },
	};
	struct pnode_mentry up;
	char err[256], path[300];
	size_t oblen;
	int kind;

	s = nodestore_open(dir, err, sizeof(err));
	ck_assert_msg(s != NULL, "%s", err);
	dcbor_buf_init(&b);
	dcbor_buf_init(&node);
	for (size_t i = 0; i < sizeof(blob); i++)
		blob[i] = (uint8_t)i;
	ck_assert_int_eq(blobtree_build(s, NULL, blob, sizeof(blob), &info,
	    err, sizeof(err)), 0);
	pnode_id(blob, sizeof(blob), id);
	ex_bytes("chunk_id", id, sizeof(id));
	ck_assert_int_eq(nodestore_get(s, info.root, &b, &kind), 0);
	ex_bytes("b_node", b.data, b.len);
	ex_bytes("b_node_id", info.root, PNODE_ID_LEN);
	ex_bytes("blob_blake3", info.blake3, 32);
	/* The pack: its header, the chunk's record, then the b node's. */
	snprintf(path, sizeof(path), "%s/pack-00000000", dir);
	file_bytes(path, 0, NODESTORE_PACK_HDR, "pack_header");
	file_bytes(path, NODESTORE_PACK_HDR + NODESTORE_REC_HDR + 100,
	    NODESTORE_REC_HDR + b.len, "pack_record_b");
	snprintf(path, sizeof(path), "%s/index", dir);
	file_bytes(path, NODESTORE_IDX_HDR + NODESTORE_IDX_REC,
	    NODESTORE_IDX_REC, "index_record_b");

	memcpy(edited, blob, sizeof(blob));
	edited[50] = 0xff;
	zdelta_make(ex_new("z_frame"), id, blob, sizeof(blob), edited,
	    sizeof(edited));

	ck_assert_int_eq(pmap_build(s, kv, 2, &mi, err, sizeof(err)), 0);
	ck_assert_int_eq(nodestore_get(s, mi.root, &b, &kind), 0);
	ex_bytes("m_leaf", b.data, b.len);
	up = (struct pnode_mentry){ .key = (const uint8_t *)"b", .klen = 1,
	    .id = mi.root, .count = 2 };
	pnode_m_encode(ex_new("m_node"), 1, &up, 1);

	content = malloc(40000);
	for (size_t i = 0; i < 40000; i++)
		content[i] = (uint8_t)(i % 251);
	oblen = (size_t)bao_outboard_len(40000, 4);
	ob = malloc(oblen);
	bao_outboard(content, 40000, 4, id, ob);
	ck_assert_int_eq(bonode_split(s, ob, oblen, 4, 10, id, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(nodestore_get(s, id, &b, &kind), 0);
	ex_bytes("bo_top", b.data, b.len);
	{
		struct pnode_bo top;

		ck_assert_int_eq(pnode_bo_decode(b.data, b.len, &top), 0);
		ck_assert_int_eq(nodestore_get(s, pnode_bo_leaf_id(&top, 0),
		    &node, &kind), 0);
		ex_bytes("bo_leaf", node.data, node.len);
	}
	free(ob);
	free(content);
	dcbor_buf_free(&b);
	dcbor_buf_free(&node);
	nodestore_close(s);
}

START_TEST(examples_match_the_code)
{
	char dir[64], cmd[128];

	snprintf(dir, sizeof(dir), "/tmp/test_docs_content.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	make_examples(dir);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	doc_blocks_check(DOC);
}
END_TEST

int
main(void)
{
	return doc_blocks_main("docs_content", examples_match_the_code);
}
