// SPDX-License-Identifier: GPL-2.0
/*
 * Host test (no kernel): the fetch expressions of the everyday one-liners
 * (tools/pea/kfetch.c), resolved against a BTF built here with libbpf
 * into the exact struct pea_fetch the kernel evaluates, and their values
 * printed from a block as text and JSON: [N] on a pointer (argv[1]: one
 * pointer read, as ->) and on an array in memory; join(argv) and
 * join(argv,N) as N string fetches bounded by the probe's fetches left,
 * printed space-joined up to the first NULL; ntop() of a 4-byte integer
 * and of 16 bytes in memory; ntohs(), ntohl() and bswap() by width; a
 * --filter on them compiled to the bytes the kernel reads; and every
 * refusal with its message. TAP on stdout.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include "pea_tool.h"
#include "kfetch.h"
#include "kfilter.h"

#define HOST_TAP_NAME "kfetch_fn"
#include "host_tap.h"
#include "host_fetch.h"

static struct ksig sig;

/*
 * typedef u32 __be32; typedef u16 __be16;
 * struct in6 { u8 s6[16]; };
 * struct sk { __be32 daddr; __be16 dport; u16 pad; struct in6 v6;
 *	       u8 v4[4]; u64 x; s32 sv; };			44 -> 48 bytes
 * long pea_net(struct sk *sk, const char *const *argv, int n);
 */
static struct btf *build(void)
{
	struct btf *b = btf__new_empty();
	int u8, u16, u32, u64, s32, s64, chr, be32, be16, a16, a4, in6, sk,
	    sk_p, cchr_p, argv_t, proto;

	u8 = btf__add_int(b, "unsigned char", 1, 0);
	u16 = btf__add_int(b, "short unsigned int", 2, 0);
	u32 = btf__add_int(b, "unsigned int", 4, 0);
	u64 = btf__add_int(b, "long long unsigned int", 8, 0);
	s32 = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	s64 = btf__add_int(b, "long int", 8, BTF_INT_SIGNED);
	chr = btf__add_int(b, "char", 1, BTF_INT_SIGNED | BTF_INT_CHAR);
	be32 = btf__add_typedef(b, "__be32", u32);
	be16 = btf__add_typedef(b, "__be16", u16);
	a16 = btf__add_array(b, u32, u8, 16);
	a4 = btf__add_array(b, u32, u8, 4);
	in6 = btf__add_struct(b, "in6", 16);
	btf__add_field(b, "s6", a16, 0, 0);
	sk = btf__add_struct(b, "sk", 48);
	btf__add_field(b, "daddr", be32, 0, 0);
	btf__add_field(b, "dport", be16, 32, 0);
	btf__add_field(b, "pad", u16, 48, 0);
	btf__add_field(b, "v6", in6, 64, 0);
	btf__add_field(b, "v4", a4, 192, 0);
	btf__add_field(b, "x", u64, 256, 0);
	btf__add_field(b, "sv", s32, 320, 0);
	sk_p = btf__add_ptr(b, sk);
	cchr_p = btf__add_ptr(b, btf__add_const(b, chr));
	argv_t = btf__add_ptr(b, btf__add_const(b, cchr_p));
	proto = btf__add_func_proto(b, s64);
	btf__add_func_param(b, "sk", sk_p);
	btf__add_func_param(b, "argv", argv_t);
	btf__add_func_param(b, "n", s32);
	btf__add_func(b, "pea_net", BTF_FUNC_GLOBAL, proto);
	return b;
}

#define F	host_fetch
#define A	PEA_FETCH_BASE_ARG
#define L	PEA_FETCH_F_LOAD

/* Resolve @expr; compare with @want and the conversion @conv. */
static void check(const char *expr, struct pea_fetch want, bool str,
		  unsigned char conv)
{
	struct kfetch k;
	char why[256] = "";
	int err = kfetch_parse(&sig, expr, false, &k, why, sizeof(why));

	ok(!err && !memcmp(&k.f, &want, sizeof(want)) && k.str == str &&
	   k.conv == conv,
	   "'%s': deref %u type %u size %u flags %u off %d,%d conv %u (got %s%s: %u %u %u %u %d,%d %u)",
	   expr, want.nr_deref, want.type, want.size, want.flags,
	   want.offset[0], want.offset[1], conv, err ? "error " : "", why,
	   k.f.nr_deref, k.f.type, k.f.size, k.f.flags, k.f.offset[0],
	   k.f.offset[1], k.conv);
	if (!err)
		kfetch_release(&k);
}

static void refused(const char *expr, const char *msg)
{
	struct kfetch k;
	char why[256] = "";
	int err = kfetch_parse(&sig, expr, false, &k, why, sizeof(why));

	ok(err == -EINVAL && !strcmp(why, msg), "'%s' refused: %s (got %d %s)",
	   expr, msg, err, why);
	if (!err)
		kfetch_release(&k);
}

static void test_resolve(void)
{
	/* argv[1]: the register, then the pointer at +8, then the string. */
	check("argv[1]", F(A, 1, 1, PEA_FETCH_STR, 64, 0, 8, 0, 0, 0, 0),
	      true, KFETCH_PLAIN);
	check("argv[0]", F(A, 1, 1, PEA_FETCH_STR, 64, 0, 0, 0, 0, 0, 0),
	      true, KFETCH_PLAIN);
	check("str(argv[2],16)",
	      F(A, 1, 1, PEA_FETCH_STR, 16, 0, 16, 0, 0, 0, 0), true,
	      KFETCH_PLAIN);
	/* An array in memory: no read more, the element's offset. */
	check("sk->v4[2]", F(A, 0, 0, PEA_FETCH_U8, 0, L, 26, 0, 0, 0, 0),
	      false, KFETCH_PLAIN);
	check("sk->v6.s6[15]",
	      F(A, 0, 0, PEA_FETCH_U8, 0, L, 23, 0, 0, 0, 0), false,
	      KFETCH_PLAIN);
	/* A pointer to structs indexed: sk[1] is the struct 48 bytes on. */
	check("sk[1].dport", F(A, 0, 0, PEA_FETCH_U16, 0, L, 52, 0, 0, 0, 0),
	      false, KFETCH_PLAIN);
	check("ntop(sk->daddr)",
	      F(A, 0, 0, PEA_FETCH_U32, 0, L, 0, 0, 0, 0, 0), false,
	      KFETCH_NTOP);
	check("ntop(sk->v6)",
	      F(A, 0, 0, PEA_FETCH_ARRAY, 16, 0, 8, 0, 0, 0, 0), false,
	      KFETCH_NTOP);
	check("ntop(sk->v4)",
	      F(A, 0, 0, PEA_FETCH_ARRAY, 4, 0, 24, 0, 0, 0, 0), false,
	      KFETCH_NTOP);
	check("ntohs(sk->dport)",
	      F(A, 0, 0, PEA_FETCH_U16, 0, L, 4, 0, 0, 0, 0), false,
	      KFETCH_BSWAP);
	check("ntohl(sk->daddr)",
	      F(A, 0, 0, PEA_FETCH_U32, 0, L, 0, 0, 0, 0, 0), false,
	      KFETCH_BSWAP);
	check("bswap(sk->x)", F(A, 0, 0, PEA_FETCH_U64, 0, L, 32, 0, 0, 0, 0),
	      false, KFETCH_BSWAP);
	check("bswap(n)", F(A, 2, 0, PEA_FETCH_S32, 0, 0, 0, 0, 0, 0, 0),
	      false, KFETCH_BSWAP);
	refused("n[1]", "'n[1]': [1] on int, which is no pointer or array");
	refused("sk->v4[4]", "'sk->v4[4]': [4] is past the 4 elements of unsigned char[4]");
	refused("argv[70000]",
		"'argv[70000]': [N] with N 0..65535 expected at '[70000]'");
	refused("argv[x]", "'argv[x]': [N] with N 0..65535 expected at '[x]'");
	refused("ntohs(sk->daddr)", "ntohs(): __be32 is no integer of 2 bytes");
	refused("ntohl(sk->dport)", "ntohl(): __be16 is no integer of 4 bytes");
	refused("bswap(sk->v4[0])",
		"bswap(): unsigned char is no integer of 2, 4 or 8 bytes");
	refused("ntop(sk->x)",
		"ntop(): long long unsigned int is 8 bytes; an IPv4 address is 4, an IPv6 one 16");
	refused("ntop(n,2)", "'ntop(n,2)': ntop() takes one expression");
	refused("ntohs(sk->dport", "'ntohs(sk->dport': ntohs( without its closing )");
	refused("join(argv)",
		"'join(argv)': join() prints a probe's strings; it is no filter term, key or part of another expression");
	ok(kfetch_is_expr("argv[1]") && kfetch_is_expr("join(argv)") &&
	   kfetch_is_expr("ntop(sk->daddr)") && kfetch_is_expr("sk->v4[2]") &&
	   !kfetch_is_expr("argv[") && !kfetch_is_expr("sysenter:execve") &&
	   !kfetch_is_expr("argv[1"),
	   "fetch expressions are told from probes");
}

/* join(): N strings, each argv[i], bounded by the fetches left. */
static void test_join(void)
{
	struct kfetch k[PEA_FETCH_MAX];
	char why[256] = "";
	unsigned int n = 0, i;
	bool same = true;
	int err;

	err = kfetch_parse_n(&sig, "join(argv)", false, k, 5, &n, why,
			     sizeof(why));
	ok(!err && n == 5, "join(argv) with 5 fetches left: 5 strings (%d %u %s)",
	   err, n, why);
	for (i = 0; !err && i < n; i++) {
		struct pea_fetch w = F(A, 1, 1, PEA_FETCH_STR, 64, 0, 8 * i, 0,
				       0, 0, 0);

		same &= !memcmp(&k[i].f, &w, sizeof(w)) && k[i].str &&
			k[i].joined == (i > 0) && k[i].join == (i ? 0 : 5);
	}
	ok(!err && same && !strcmp(k[0].expr, "join(argv)") &&
	   !strcmp(k[1].expr, "argv[1]"),
	   "join(argv): argv[0..4], each a string behind one pointer read, the first printing them (%s %s)",
	   k[0].expr, k[1].expr);
	for (i = 0; !err && i < n; i++)
		kfetch_release(&k[i]);
	err = kfetch_parse_n(&sig, "join(argv,3)", false, k, 8, &n, why,
			     sizeof(why));
	ok(!err && n == 3 && k[0].join == 3 && k[2].joined &&
	   k[2].f.offset[0] == 16,
	   "join(argv,3): 3 strings (%d %u %s)", err, n, why);
	for (i = 0; !err && i < n; i++)
		kfetch_release(&k[i]);
	err = kfetch_parse_n(&sig, "join(argv,4)", false, k, 3, &n, why,
			     sizeof(why));
	ok(err == -EINVAL && n == 0 &&
	   !strcmp(why, "'join(argv,4)': 4 strings, one fetch each, and the probe's other fetches are more than 8 (write join(EXPR,N) with N at most 3)"),
	   "join(argv,4) with 3 fetches left refused: %s", why);
	err = kfetch_parse_n(&sig, "join(argv,9)", false, k, 8, &n, why,
			     sizeof(why));
	ok(err == -EINVAL &&
	   !strcmp(why, "'join(argv,9)': join(EXPR,N): N is 1..8 strings (one fetch each)"),
	   "join(argv,9) refused: %s", why);
	err = kfetch_parse_n(&sig, "join(argv)", false, k, 0, &n, why,
			     sizeof(why));
	ok(err == -EINVAL &&
	   !strcmp(why, "'join(argv)': the probe has no fetch left for it (8 at most)"),
	   "join(argv) with no fetch left refused: %s", why);
	err = kfetch_parse_n(&sig, "join(sk)", false, k, 8, &n, why,
			     sizeof(why));
	ok(err == -EINVAL &&
	   !strcmp(why, "struct sk is not fetched as a value (integers, enums, bool, pointers and strings are; name one of its fields)"),
	   "join(sk) refused: %s", why);
	err = kfetch_parse_n(&sig, "join(argv", false, k, 8, &n, why,
			     sizeof(why));
	ok(err == -EINVAL &&
	   !strcmp(why, "'join(argv': join( without its closing )"),
	   "join(argv refused: %s", why);
	err = kfetch_parse_n(&sig, "n", false, k, 8, &n, why, sizeof(why));
	ok(!err && n == 1 && !k[0].join && !k[0].joined,
	   "another expression: one fetch");
	if (!err)
		kfetch_release(&k[0]);
	err = kfetch_parse_n(&sig, "n", false, k, 0, &n, why, sizeof(why));
	ok(err == -EINVAL && !strcmp(why, "'n': more than 8 fetches"),
	   "another expression with no fetch left refused: %s", why);
}

static char out[1024];

static const char *put(const struct kfetch *k, const void *b, __u32 i,
		       bool json)
{
	FILE *f = fmemopen(out, sizeof(out), "w");

	if (json)
		kfetch_put_json(f, k, b, i);
	else
		kfetch_put(f, k, b, i);
	fclose(f);
	return out;
}

/* A block of @nr values, value i's @len bytes of @data[i] at 8-aligned. */
static void block(__u64 *blk, unsigned int nr, const char *const *data,
		  const unsigned int *len, const __u8 *status)
{
	struct pea_fetch_block *b = (void *)blk;
	unsigned int i, off = sizeof(*b) + nr * sizeof(b->values[0]);

	memset(blk, 0, 512);
	b->nr = nr;
	for (i = 0; i < nr; i++) {
		off = (off + 7) & ~7U;
		b->values[i] = (struct pea_fetch_value){
			.offset = off, .status = status[i],
			.len = status[i] == PEA_FETCH_FAULT ? 0 : len[i],
			.step = status[i] == PEA_FETCH_FAULT ? 1 : 0 };
		if (status[i] != PEA_FETCH_FAULT)
			memcpy((char *)b + off, data[i], len[i]);
		off += len[i];
	}
	b->size = (off + 7) & ~7U;
}

static void test_print(void)
{
	struct kfetch k[PEA_FETCH_MAX], kd, kp, k6, kx;
	__u64 blk[64];
	char why[256];
	unsigned int n, i;
	static const __u8 ok4[] = { 0, 0, 0, 1 }, cut[] = { 0, 2, 0, 1 },
			  first[] = { 1, 1, 1, 1 }, all[] = { 0, 0, 0, 0 };

	kfetch_parse_n(&sig, "join(argv,4)", false, k, 8, &n, why,
		       sizeof(why));
	block(blk, 4, (const char *const[]){ "ls", "-l", "/tmp", "" },
	      (const unsigned int[]){ 2, 2, 4, 0 }, ok4);
	ok(kfetch_block_ok(blk, 512, 4), "the join's block is well-formed");
	ok(!strcmp(put(&k[0], blk, 0, false), "join(argv,4)=\"ls -l /tmp\""),
	   "join text, up to the NULL: %s", put(&k[0], blk, 0, false));
	ok(!strcmp(put(&k[0], blk, 0, true), "\"join(argv,4)\":\"ls -l /tmp\""),
	   "join JSON: %s", put(&k[0], blk, 0, true));
	block(blk, 4, (const char *const[]){ "a", "b", "", "d" },
	      (const unsigned int[]){ 1, 1, 0, 1 }, all);
	ok(!strcmp(put(&k[0], blk, 0, false), "join(argv,4)=\"a b  d\""),
	   "join of 4 with an empty string kept: %s",
	   put(&k[0], blk, 0, false));
	block(blk, 4, (const char *const[]){ "echo", "abc", "x", "" },
	      (const unsigned int[]){ 4, 3, 1, 0 }, cut);
	ok(!strcmp(put(&k[0], blk, 0, false), "join(argv,4)=\"echo abc x\"..."),
	   "join with a string cut: %s", put(&k[0], blk, 0, false));
	ok(!strcmp(put(&k[0], blk, 0, true),
		   "\"join(argv,4)\":{\"str\":\"echo abc x\",\"truncated\":true}"),
	   "join JSON with a string cut: %s", put(&k[0], blk, 0, true));
	block(blk, 4, (const char *const[]){ "", "", "", "" },
	      (const unsigned int[]){ 0, 0, 0, 0 }, first);
	ok(!strcmp(put(&k[0], blk, 0, false), "join(argv,4)=(fault@1)"),
	   "join whose first string failed: %s", put(&k[0], blk, 0, false));
	ok(!strcmp(put(&k[0], blk, 0, true), "\"join(argv,4)\":{\"fault\":1}"),
	   "join JSON whose first failed: %s", put(&k[0], blk, 0, true));
	for (i = 0; i < n; i++)
		kfetch_release(&k[i]);

	kfetch_parse(&sig, "ntop(sk->daddr)", false, &kd, why, sizeof(why));
	kfetch_parse(&sig, "ntohs(sk->dport)", false, &kp, why, sizeof(why));
	kfetch_parse(&sig, "ntop(sk->v6)", false, &k6, why, sizeof(why));
	kfetch_parse(&sig, "bswap(sk->x)", false, &kx, why, sizeof(why));
	block(blk, 4, (const char *const[]){
		"\x7f\x00\x00\x01", "\x1f\x90",
		"\xfe\x80\0\0\0\0\0\0\0\0\0\0\0\0\0\x01",
		"\x01\x02\x03\x04\x05\x06\x07\x08" },
	      (const unsigned int[]){ 4, 2, 16, 8 }, all);
	ok(!strcmp(put(&kd, blk, 0, false), "ntop(sk->daddr)=127.0.0.1"),
	   "ntop of a __be32: %s", put(&kd, blk, 0, false));
	ok(!strcmp(put(&kd, blk, 0, true), "\"ntop(sk->daddr)\":\"127.0.0.1\""),
	   "ntop JSON: %s", put(&kd, blk, 0, true));
	ok(!strcmp(put(&kp, blk, 1, false), "ntohs(sk->dport)=8080"),
	   "ntohs of a __be16: %s", put(&kp, blk, 1, false));
	ok(!strcmp(put(&kp, blk, 1, true), "\"ntohs(sk->dport)\":8080"),
	   "ntohs JSON: %s", put(&kp, blk, 1, true));
	ok(!strcmp(put(&k6, blk, 2, false), "ntop(sk->v6)=fe80::1"),
	   "ntop of 16 bytes: %s", put(&k6, blk, 2, false));
	ok(!strcmp(put(&kx, blk, 3, false), "bswap(sk->x)=72623859790382856"),
	   "bswap of 8 bytes (0x0102030405060708): %s",
	   put(&kx, blk, 3, false));
	ok(kfetch_conv_int(&kp, 0x901f) == 0x1f90 &&
	   kfetch_conv_int(&kd, 0x0100007f) == 0x0100007f,
	   "kfetch_conv_int: swapped by ntohs, not by ntop");
	block(blk, 4, (const char *const[]){ "", "", "", "" },
	      (const unsigned int[]){ 0, 0, 0, 0 }, first);
	ok(!strcmp(put(&kd, blk, 0, false), "ntop(sk->daddr)=(fault@1)"),
	   "ntop of a failed read: %s", put(&kd, blk, 0, false));
	kfetch_release(&kd);
	kfetch_release(&kp);
	kfetch_release(&k6);
	kfetch_release(&kx);
}

/* Compile @text; its error (0) and the first comparison's value. */
static int filter(const char *text, __u64 *value, char *msg, size_t len)
{
	static struct kfetch f[PEA_FETCH_MAX];
	static struct pea_pred preds[PEA_PRED_MAX];
	struct kfilter_ctx c = {
		.sig = &sig, .fetches = f, .max = PEA_FETCH_MAX,
		.preds = preds,
	};
	unsigned int i;
	int err;

	memset(preds, 0, sizeof(preds));
	*msg = '\0';
	err = kfilter_compile(&c, text, msg, len);
	*value = preds[0].value;
	for (i = 0; i < c.nfetches; i++)
		kfetch_release(&f[i]);
	return err;
}

/*
 * A filter on ntohs()/ntop(): the operand turned into the bytes the
 * kernel reads; orders and 16-byte addresses refused.
 */
static void test_filter(void)
{
	char msg[256];
	__u64 v = 0;
	int err;

	err = filter("ntohs(sk->dport) == 8080", &v, msg, sizeof(msg));
	ok(!err && v == 0x901f, "ntohs(sk->dport) == 8080: compares 0x901f (%d %s 0x%llx)",
	   err, msg, (unsigned long long)v);
	err = filter("ntop(sk->daddr) != \"127.0.0.1\"", &v, msg, sizeof(msg));
	ok(!err && v == 0x0100007f,
	   "ntop(sk->daddr) != \"127.0.0.1\": compares the bytes 7f 00 00 01 (%d %s 0x%llx)",
	   err, msg, (unsigned long long)v);
	err = filter("bswap(n) == 1", &v, msg, sizeof(msg));
	ok(!err && v == 0x01000000, "bswap(n) == 1: 0x01000000 (%d %s 0x%llx)",
	   err, msg, (unsigned long long)v);
	err = filter("bswap(n) == 128", &v, msg, sizeof(msg));
	ok(!err && v == 0xffffffff80000000ULL,
	   "bswap(n) == 128 of an int: sign-extended as the kernel reads it (0x%llx)",
	   (unsigned long long)v);
	err = filter("ntohs(sk->dport) & 80", &v, msg, sizeof(msg));
	ok(!err && v == 0x5000, "ntohs(sk->dport) & 80: the mask swapped (0x%llx)",
	   (unsigned long long)v);
	err = filter("ntop(sk->daddr) & \"1.2.3.4\"", &v, msg, sizeof(msg));
	ok(err == -EINVAL &&
	   !strcmp(msg, "'ntop(sk->daddr)': an address takes ==, !=, <, <=, > and >= only"),
	   "ntop() & refused: %s", msg);
	err = filter("ntohs(sk->dport) == 70000", &v, msg, sizeof(msg));
	ok(err == -EINVAL &&
	   !strcmp(msg, "'ntohs(sk->dport)': 70000 is out of range for u16 (0..65535)"),
	   "ntohs() == 70000 refused: %s", msg);
	err = filter("ntop(sk->daddr) == \"::1\"", &v, msg, sizeof(msg));
	ok(err == -EINVAL &&
	   !strcmp(msg, "'ntop(sk->daddr)': '::1' is no IPv4 address"),
	   "ntop(4 bytes) == \"::1\" refused: %s", msg);
	err = filter("ntop(sk->v6) == \"::1\"", &v, msg, sizeof(msg));
	ok(err == -EINVAL &&
	   !strcmp(msg, "'ntop(sk->v6)': the kernel compares the bytes it reads: ntop() of 16 bytes takes no comparison (compare the expression inside)"),
	   "ntop(16 bytes) refused: %s", msg);
	err = filter("argv[1] == \"-l\" && sk->v4[0] == 127", &v, msg,
		     sizeof(msg));
	ok(!err, "indexed terms: argv[1] == \"-l\" && sk->v4[0] == 127 (%s)",
	   msg);
}

/* ---- orders of converted values, evaluated as the kernel would ---- */

static struct kfetch of[PEA_FETCH_MAX];
static struct pea_pred op[PEA_PRED_MAX];
static unsigned int onf, onp;

/* Compile @text for order(); 0 or its error, the reason in @msg. */
static int order_compile(const char *text, char *msg, size_t len)
{
	struct kfilter_ctx c = {
		.sig = &sig, .fetches = of, .max = PEA_FETCH_MAX,
		.preds = op,
	};
	unsigned int i;
	int err;

	for (i = 0; i < onf; i++)
		kfetch_release(&of[i]);
	memset(op, 0, sizeof(op));
	*msg = '\0';
	err = kfilter_compile(&c, text, msg, len);
	onf = c.nfetches;
	onp = c.npreds;
	return err;
}

/*
 * The program's verdict on struct sk bytes @mem, as module/pea_pred.c
 * evaluates it: each fetch the integer of its width at its offset of
 * @mem (little-endian; signed types sign-extended), each comparison at
 * the fetch's signedness.
 */
static bool order_eval(const unsigned char *mem)
{
	bool st[PEA_PRED_DEPTH_MAX + 1];
	unsigned int i, d = 0;

	for (i = 0; i < onp; i++) {
		const struct pea_pred *p = &op[i];
		const struct pea_fetch *f;
		unsigned int w, b;
		__u64 raw = 0;
		__s64 sv, so;
		bool sgn, r;

		if (p->op == PEA_PRED_AND || p->op == PEA_PRED_OR) {
			d--;
			st[d - 1] = p->op == PEA_PRED_AND ?
				    st[d - 1] && st[d] : st[d - 1] || st[d];
			continue;
		}
		if (p->op == PEA_PRED_NOT) {
			st[d - 1] = !st[d - 1];
			continue;
		}
		f = &of[p->fetch].f;
		w = kfetch_bytes(&of[p->fetch]);
		for (b = 0; b < w; b++)
			raw |= (__u64)mem[f->offset[f->nr_deref] + b] << (8 * b);
		sgn = f->type >= PEA_FETCH_S8;
		sv = w < 8 && sgn ? (__s64)(raw << (64 - 8 * w)) >> (64 - 8 * w) :
		     (__s64)raw;
		so = (__s64)p->value;
		switch (p->cmp) {
		case PEA_TP_OP_EQ:
			r = raw == (p->value & (w < 8 ? (1ULL << 8 * w) - 1 : ~0ULL));
			break;
		case PEA_TP_OP_LT:
			r = sgn ? sv < so : raw < p->value;
			break;
		case PEA_TP_OP_GT:
			r = sgn ? sv > so : raw > p->value;
			break;
		case PEA_PRED_OP_LE:
			r = sgn ? sv <= so : raw <= p->value;
			break;
		case PEA_PRED_OP_GE:
			r = sgn ? sv >= so : raw >= p->value;
			break;
		default:
			r = false;
		}
		st[d++] = r;
	}
	return d == 1 && st[0];
}

static bool truth(__s64 a, const char *opn, __s64 b)
{
	if (!strcmp(opn, "<"))
		return a < b;
	if (!strcmp(opn, "<="))
		return a <= b;
	if (!strcmp(opn, ">"))
		return a > b;
	return a >= b;
}

static const char *const ops4[] = { "<", "<=", ">", ">=" };

/*
 * ntohs(sk->dport) OP V for every port and each OP, V: the program's
 * verdict is the printed value's order, every time; its shape exact.
 */
static void test_order_ntohs(void)
{
	static const unsigned int vals[] = { 0, 1, 80, 255, 256, 1023, 0x1234,
					     0xff00, 0xfffe, 65535 };
	unsigned char mem[48];
	unsigned int o, k, port, wrong = 0, cases = 0;
	char text[128], msg[256];
	int err;

	err = order_compile("ntohs(sk->dport) > 80", msg, sizeof(msg));
	ok(!err && onf == 2 && onp == 5 &&
	   of[0].f.type == PEA_FETCH_U8 && of[0].f.offset[0] == 4 &&
	   of[1].f.type == PEA_FETCH_U8 && of[1].f.offset[0] == 5 &&
	   op[0].cmp == PEA_TP_OP_GT && op[0].value == 0 &&
	   op[1].cmp == PEA_TP_OP_EQ && op[1].value == 0 &&
	   op[2].cmp == PEA_TP_OP_GT && op[2].value == 80 &&
	   op[3].op == PEA_PRED_AND && op[4].op == PEA_PRED_OR,
	   "ntohs(sk->dport) > 80: bytes 4 and 5 fetched, B0 > 0 || (B0 == 0 && B1 > 80) (%d %s: %u fetches, %u instructions)",
	   err, msg, onf, onp);
	memset(mem, 0, sizeof(mem));
	for (o = 0; o < 4; o++)
		for (k = 0; k < sizeof(vals) / sizeof(vals[0]); k++) {
			snprintf(text, sizeof(text), "ntohs(sk->dport) %s %u",
				 ops4[o], vals[k]);
			if (order_compile(text, msg, sizeof(msg))) {
				wrong++;
				continue;
			}
			for (port = 0; port < 65536; port++) {
				mem[4] = port >> 8;	/* network order */
				mem[5] = port & 0xff;
				cases++;
				wrong += order_eval(mem) !=
					 truth(port, ops4[o], vals[k]);
			}
		}
	ok(!wrong, "ntohs(sk->dport) <, <=, >, >= of 10 values: the kernel's verdict is the port's order in all %u cases (%u wrong)",
	   cases, wrong);
}

/* ntohl(), ntop() and a signed bswap() over sampled values. */
static void test_order_wide(void)
{
	static const __u32 v32[] = { 0, 1, 0x7f000001, 0x80000000, 0x0a000000,
				     0xc0a80101, 0xfffffffe, 0xffffffff };
	static const __s32 vs[] = { -2147483647 - 1, -129, -1, 0, 1, 127, 128,
				    2147483647 };
	unsigned char mem[48];
	unsigned int o, k, i, wrong = 0, cases = 0;
	char text[128], msg[256];
	__u64 x = 0x9e3779b97f4a7c15ULL;
	int err;

	for (o = 0; o < 4; o++)
		for (k = 0; k < 8; k++) {
			snprintf(text, sizeof(text), "ntohl(sk->daddr) %s %u",
				 ops4[o], v32[k]);
			if (order_compile(text, msg, sizeof(msg))) {
				wrong++;
				continue;
			}
			for (i = 0; i < 20000; i++) {
				__u32 a = i < 8 ? v32[i] : i < 16 ? v32[i - 8] + 1 :
					  (__u32)(x >> 32);

				x = x * 6364136223846793005ULL + 1442695040888963407ULL;
				if (i >= 16 && i % 3 == 0)	/* near V */
					a = v32[k] + (a & 7) - 3;
				mem[0] = a >> 24;
				mem[1] = a >> 16;
				mem[2] = a >> 8;
				mem[3] = a;
				cases++;
				wrong += order_eval(mem) !=
					 truth(a, ops4[o], v32[k]);
			}
		}
	ok(!wrong, "ntohl(sk->daddr) <, <=, >, >=: the address's order in all %u cases (%u wrong)",
	   cases, wrong);
	err = order_compile("ntop(sk->daddr) >= \"10.0.0.0\" && ntop(sk->daddr) < \"10.1.0.0\"",
			    msg, sizeof(msg));
	ok(!err && onf == 4 && onp == 27,
	   "ntop(sk->daddr) in 10.0.0.0/16: 4 byte fetches shared by both terms, 27 instructions (%d %s: %u, %u)",
	   err, msg, onf, onp);
	for (i = 0, wrong = 0; !err && i < 65536; i++) {
		__u32 a = (i & 0xff) << 24 | ((i >> 8) & 3) << 16 | (i >> 10);

		mem[0] = a >> 24;
		mem[1] = a >> 16;
		mem[2] = a >> 8;
		mem[3] = a;
		wrong += order_eval(mem) != (a >= 0x0a000000 && a < 0x0a010000);
	}
	ok(!err && !wrong, "ntop(sk->daddr) in 10.0.0.0/16: exact over 65536 addresses (%u wrong)",
	   wrong);
	for (o = 0, wrong = 0, cases = 0; o < 4; o++)
		for (k = 0; k < 8; k++) {
			snprintf(text, sizeof(text), "bswap(sk->sv) %s %d",
				 ops4[o], vs[k]);
			if (order_compile(text, msg, sizeof(msg))) {
				wrong++;
				printf("# %s\n", msg);
				continue;
			}
			for (i = 0; i < 20000; i++) {
				__s32 a = i < 8 ? vs[i] : (__s32)(x >> 32);

				x = x * 6364136223846793005ULL + 1442695040888963407ULL;
				if (i >= 8 && i % 3 == 0)
					a = vs[k] + (__s32)(a & 7) - 3;
				/* bswap(sv) == a: sv's bytes are a's, reversed */
				mem[40] = (__u32)a >> 24;
				mem[41] = (__u32)a >> 16;
				mem[42] = (__u32)a >> 8;
				mem[43] = (__u32)a;
				cases++;
				wrong += order_eval(mem) != truth(a, ops4[o], vs[k]);
			}
		}
	ok(!wrong && of[0].f.type == PEA_FETCH_S8 && of[1].f.type == PEA_FETCH_U8,
	   "bswap(sk->sv) of an s32 <, <=, >, >=: the signed order in all %u cases, its first byte an s8 (%u wrong)",
	   cases, wrong);
	err = order_compile("bswap(n) < 5", msg, sizeof(msg));
	ok(err == -EINVAL &&
	   !strcmp(msg, "'bswap(n)': the value is in a register, which the kernel compares whole: an order of its reversed bytes is none it can test (==, != and & only)"),
	   "bswap() of a register value: an order refused, why: %s", msg);
	err = order_compile("bswap(sk->x) < 5", msg, sizeof(msg));
	ok(!err && onf == 8 && onp == 29,
	   "bswap(sk->x) of 8 bytes: 8 byte fetches, 29 instructions (%d %s)",
	   err, msg);
	err = order_compile("sk->pad == 1 && bswap(sk->x) < 5", msg, sizeof(msg));
	ok(err == -EINVAL &&
	   !strcmp(msg, "'bswap(sk->x)': more than 8 fetches with the filter's (an order of a converted value fetches each of its bytes)"),
	   "bswap(sk->x) < 5 with another fetch: past the 8 fetches, said: %s",
	   msg);
	order_compile("", msg, sizeof(msg));
}

int main(void)
{
	struct btf *b = build();

	ok(b && !ksig_from_btf(b, "pea_net", &sig), "the test BTF and pea_net");
	test_resolve();
	test_join();
	test_order_ntohs();
	test_order_wide();
	test_print();
	test_filter();
	btf__free(b);
	return host_tap_done();
}
