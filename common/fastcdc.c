/*
 * fastcdc.c: FastCDC cut points (fastcdc.h has the rule).
 *
 * The scan is the hot loop of every chunker client (pdt chunks, the blob
 * build, build/bench FastCdc), so it rolls two bytes a step (FastCDC 2020,
 * section 3.7): with GS[b] = G[b] << 1,
 *     h' = (h << 2) + GS[a]    is twice the hash after byte a, and
 *     h' + G[b]                is the hash after byte b,
 * so byte a is tested against mask << 1 (no mask bit is near the top, so
 * nothing shifts out) and byte b against mask: the same hashes and cuts as
 * one byte a step, with a shorter dependency chain (shift, add, add per
 * two bytes instead of shift, add per byte).
 *
 * fastcdc_next and the stream share scan(); the stream only splits the
 * skip / small-mask / large-mask spans at buffer edges and carries h.
 */
#include <stdio.h>

#include "fastcdc.h"

/*
 * The gear table: G[i] = the first 8 bytes, big-endian, of MD5 of 64
 * bytes all equal to i (the table of the public FastCDC implementations).
 * Shipped as data, generated once; tests/unit/test_fastcdc.c rebuilds it
 * with libcrypto's MD5 and compares every entry.  One list, two tables:
 * G and G << 1.
 */
#define GEAR_LIST(X) \
	X(0x3b5d3c7d207e37dc) X(0x784d68ba91123086) X(0xcd52880f882e7298) \
	X(0xeacf8e4e19fdcca7) X(0xc31f385dfbd1632b) X(0x1d5f27001e25abe6) \
	X(0x83130bde3c9ad991) X(0xc4b225676e9b7649) X(0xaa329b29e08eb499) \
	X(0xb67fcbd21e577d58) X(0x0027baaada2acf6b) X(0xe3ef2d5ac73c2226) \
	X(0x0890f24d6ed312b7) X(0xa809e036851d7c7e) X(0xf0a6fe5e0013d81b) \
	X(0x1d026304452cec14) X(0x03864632648e248f) X(0xcdaacf3dcd92b9b4) \
	X(0xf5e012e63c187856) X(0x8862f9d3821c00b6) X(0xa82f7338750f6f8a) \
	X(0x1e583dc6c1cb0b6f) X(0x7a3145b69743a7f1) X(0xabb20fee404807eb) \
	X(0xb14b3cfe07b83a5d) X(0xb9dc27898adb9a0f) X(0x3703f5e91baa62be) \
	X(0xcf0bb866815f7d98) X(0x3d9867c41ea9dcd3) X(0x1be1fa65442bf22c) \
	X(0x14300da4c55631d9) X(0xe698e9cbc6545c99) X(0x4763107ec64e92a5) \
	X(0xc65821fc65696a24) X(0x76196c064822f0b7) X(0x485be841f3525e01) \
	X(0xf652bc9c85974ff5) X(0xcad8352face9e3e9) X(0x2a6ed1dceb35e98e) \
	X(0xc6f483badc11680f) X(0x3cfd8c17e9cf12f1) X(0x89b83c5e2ea56471) \
	X(0xae665cfd24e392a9) X(0xec33c4e504cb8915) X(0x3fb9b15fc9fe7451) \
	X(0xd7fd1fd1945f2195) X(0x31ade0853443efd8) X(0x255efc9863e1e2d2) \
	X(0x10eab6008d5642cf) X(0x46f04863257ac804) X(0xa52dc42a789a27d3) \
	X(0xdaaadf9ce77af565) X(0x6b479cd53d87febb) X(0x6309e2d3f93db72f) \
	X(0xc5738ffbaa1ff9d6) X(0x6bd57f3f25af7968) X(0x67605486d90d0a4a) \
	X(0xe14d0b9663bfbdae) X(0xb7bbd8d816eb0414) X(0xdef8a4f16b35a116) \
	X(0xe7932d85aaaffed6) X(0x08161cbae90cfd48) X(0x855507beb294f08b) \
	X(0x91234ea6ffd399b2) X(0xad70cf4b2435f302) X(0xd289a97565bc2d27) \
	X(0x8e558437ffca99de) X(0x96d2704b7115c040) X(0x0889bbcdfc660e41) \
	X(0x5e0d4e67dc92128d) X(0x72a9f8917063ed97) X(0x438b69d409e016e3) \
	X(0xdf4fed8a5d8a4397) X(0x00f41dcf41d403f7) X(0x4814eb038e52603f) \
	X(0x9dafbacc58e2d651) X(0xfe2f458e4be170af) X(0x4457ec414df6a940) \
	X(0x06e62f1451123314) X(0xbd1014d173ba92cc) X(0xdef318e25ed57760) \
	X(0x9fea0de9dfca8525) X(0x459de1e76c20624b) X(0xaeec189617e2d666) \
	X(0x126a2c06ab5a83cb) X(0xb1321532360f6132) X(0x65421503dbb40123) \
	X(0x2d67c287ea089ab3) X(0x6c93bff5a56bd6b6) X(0x4ffb2036cab6d98d) \
	X(0xce7b785b1be7ad4f) X(0xedb42ef6189fd163) X(0xdc905288703988f6) \
	X(0x365f9c1d2c691884) X(0xc640583680d99bfe) X(0x3cd4624c07593ec6) \
	X(0x7f1ea8d85d7c5805) X(0x014842d480b57149) X(0x0b649bcb5a828688) \
	X(0xbcd5708ed79b18f0) X(0xe987c862fbd2f2f0) X(0x982731671f0cd82c) \
	X(0xbaf13e8b16d8c063) X(0x8ea3109cbd951bba) X(0xd141045bfb385cad) \
	X(0x2acbc1a0af1f7d30) X(0xe6444d89df03bfdf) X(0xa18cc771b8188ff9) \
	X(0x9834429db01c39bb) X(0x214add07fe086a1f) X(0x8f07c19b1f6b3ff9) \
	X(0x56a297b1bf4ffe55) X(0x94d558e493c54fc7) X(0x40bfc24c764552cb) \
	X(0x931a706f8a8520cb) X(0x32229d322935bd52) X(0x2560d0f5dc4fefaf) \
	X(0x9dbcc48355969bb6) X(0x0fd81c3985c0b56a) X(0xe03817e1560f2bda) \
	X(0xc1bb4f81d892b2d5) X(0xb0c4864f4e28d2d7) X(0x3ecc49f9d9d6c263) \
	X(0x51307e99b52ba65e) X(0x8af2b688da84a752) X(0xf5d72523b91b20b6) \
	X(0x6d95ff1ff4634806) X(0x562f21555458339a) X(0xc0ce47f889336346) \
	X(0x487823e5089b40d8) X(0xe4727c7ebc6d9592) X(0x5a8f7277e94970ba) \
	X(0xfca2f406b1c8bb50) X(0x5b1f8a95f1791070) X(0xd304af9fc9028605) \
	X(0x5440ab7fc930e748) X(0x312d25fbca2ab5a1) X(0x10f4a4b234a4d575) \
	X(0x90301d55047e7473) X(0x3b6372886c61591e) X(0x293402b77c444e06) \
	X(0x451f34a4d3e97dd7) X(0x3158d814d81bc57b) X(0x034942425b9bda69) \
	X(0xe2032ff9e532d9bb) X(0x62ae066b8b2179e5) X(0x9545e10c2f8d71d8) \
	X(0x7ff7483eb2d23fc0) X(0x00945fcebdc98d86) X(0x8764bbbe99b26ca2) \
	X(0x1b1ec62284c0bfc3) X(0x58e0fcc4f0aa362b) X(0x5f4abefa878d458d) \
	X(0xfd74ac2f9607c519) X(0xa4e3fb37df8cbfa9) X(0xbf697e43cac574e5) \
	X(0x86f14a3f68f4cd53) X(0x24a23d076f1ce522) X(0xe725cd8048868cc8) \
	X(0xbf3c729eb2464362) X(0xd8f6cd57b3cc1ed8) X(0x6329e52425541577) \
	X(0x62aa688ad5ae1ac0) X(0x0a242566269bf845) X(0x168b1a4753aca74b) \
	X(0xf789afefff2e7e3c) X(0x6c3362093b6fccdb) X(0x4ce8f50bd28c09b2) \
	X(0x006a2db95ae8aa93) X(0x975b0d623c3d1a8c) X(0x18605d3935338c5b) \
	X(0x5bb6f6136cad3c71) X(0x0f53a20701f8d8a6) X(0xab8c5ad2e7e93c67) \
	X(0x40b5ac5127acaa29) X(0x8c7bf63c2075895f) X(0x78bd9f7e014a805c) \
	X(0xb2c9e9f4f9c8c032) X(0xefd6049827eb91f3) X(0x2be459f482c16fbd) \
	X(0xd92ce0c5745aaa8c) X(0x0aaa8fb298d965b9) X(0x2b37f92c6c803b15) \
	X(0x8c54a5e94e0f0e78) X(0x95f9b6e90c0a3032) X(0xe7939faa436c7874) \
	X(0xd16bfe8f6a8a40c9) X(0x44982b86263fd2fa) X(0xe285fb39f984e583) \
	X(0x779a8df72d7619d3) X(0xf2d79a8de8d5dd1e) X(0xd1037354d66684e2) \
	X(0x004c82a4e668a8e5) X(0x31d40a7668b044e6) X(0xd70578538bd02c11) \
	X(0xdb45431078c5f482) X(0x977121bb7f6a51ad) X(0x73d5ccbd34eff8dd) \
	X(0xe437a07d356e17cd) X(0x47b2782043c95627) X(0x9fb251413e41d49a) \
	X(0xccd70b60652513d3) X(0x1c95b31e8a1b49b2) X(0xcae73dfd1bcb4c1b) \
	X(0x34d98331b1f5b70f) X(0x784e39f22338d92f) X(0x18613d4a064df420) \
	X(0xf1d8dae25f0bcebe) X(0x33f77c15ae855efc) X(0x3c88b3b912eb109c) \
	X(0x956a2ec96bafeea5) X(0x1aa005b5e0ad0e87) X(0x5500d70527c4bb8e) \
	X(0xe36c57196421cc44) X(0x13c4d286cc36ee39) X(0x5654a23d818b2a81) \
	X(0x77b1dc13d161abdc) X(0x734f44de5f8d5eb5) X(0x60717e174a6c89a2) \
	X(0xd47d9649266a211e) X(0x5b13a4322bb69e90) X(0xf7669609f8b5fc3c) \
	X(0x21e6ac55bedcdac9) X(0x9b56b62b61166dea) X(0xf48f66b939797e9c) \
	X(0x35f332f9c0e6ae9a) X(0xcc733f6a9a878db0) X(0x3da161e41cc108c2) \
	X(0xb7d74ae535914d51) X(0x4d493b0b11d36469) X(0xce264d1dfba9741a) \
	X(0xa9d1f2dc7436dc06) X(0x70738016604c2a27) X(0x231d36e96e93f3d5) \
	X(0x7666881197838d19) X(0x4a2a83090aaad40c) X(0xf1e761591668b35d) \
	X(0x7363236497f730a7) X(0x301080e37379dd4d) X(0x502dea2971827042) \
	X(0xc2c5eb858f32625f) X(0x786afb9edfafbdff) X(0xdaee0d868490b2a4) \
	X(0x617366b3268609f6) X(0xae0e35a0fe46173e) X(0xd1a07de93e824f11) \
	X(0x079b8b115ea4cca8) X(0x93a99274558faebb) X(0xfb1e6e22e08a03b3) \
	X(0xea635fdba3698dd0) X(0xcf53659328503a5c) X(0xcde3b31e6fd5d780) \
	X(0x8e3e4221d3614413) X(0xef14d0d86bf1a22c) X(0xe1d830d3f16c5ddb) \
	X(0xaabd2b2a451504e1)

#define GEAR_PLAIN(v)	UINT64_C(v),
#define GEAR_SHL1(v)	(UINT64_C(v) << 1),
static const uint64_t gear[256] = { GEAR_LIST(GEAR_PLAIN) };
static const uint64_t gear_shl1[256] = { GEAR_LIST(GEAR_SHL1) };
#undef GEAR_PLAIN
#undef GEAR_SHL1

/*
 * masks[k] has k one-bits, spread over bits 16..47 (the FastCDC reference
 * masks: spreading the bits improves deduplication a little, per the
 * paper).  Entries 0-4 are unused; 5 and 25 serve only level 3 at the
 * smallest and largest avg.
 */
static const uint64_t masks[26] = {
	0, 0, 0, 0, 0,
	UINT64_C(0x0000000001804110),	/*  5 */
	UINT64_C(0x0000000001803110),	/*  6: 64 B */
	UINT64_C(0x0000000018035100),	/*  7 */
	UINT64_C(0x0000001800035300),	/*  8 */
	UINT64_C(0x0000019000353000),	/*  9 */
	UINT64_C(0x0000590003530000),	/* 10: 1 KiB */
	UINT64_C(0x0000d90003530000),	/* 11 */
	UINT64_C(0x0000d90103530000),	/* 12 */
	UINT64_C(0x0000d90303530000),	/* 13 */
	UINT64_C(0x0000d90313530000),	/* 14: 16 KiB */
	UINT64_C(0x0000d90f03530000),	/* 15 */
	UINT64_C(0x0000d90303537000),	/* 16: 64 KiB */
	UINT64_C(0x0000d90703537000),	/* 17 */
	UINT64_C(0x0000d90707537000),	/* 18: 256 KiB */
	UINT64_C(0x0000d91707537000),	/* 19 */
	UINT64_C(0x0000d91747537000),	/* 20: 1 MiB */
	UINT64_C(0x0000d91767537000),	/* 21 */
	UINT64_C(0x0000d93767537000),	/* 22 */
	UINT64_C(0x0000d93777537000),	/* 23 */
	UINT64_C(0x0000d93777577000),	/* 24: 16 MiB */
	UINT64_C(0x0000db3777577000),	/* 25 */
};

uint64_t
fastcdc_gear(unsigned i)
{
	return gear[i & 255];
}

static unsigned
log2_u32(uint32_t v)
{
	unsigned b = 0;

	while (v > 1) {
		v >>= 1;
		b++;
	}
	return b;
}

int
fastcdc_params_check(const struct fastcdc_params *p, char *err,
    size_t errlen)
{
	const char *why = NULL;

	if (p->min < FASTCDC_MIN_LO || p->min > FASTCDC_MIN_HI)
		why = "min must be 64 .. 1048576";
	else if (p->avg < FASTCDC_AVG_LO || p->avg > FASTCDC_AVG_HI)
		why = "avg must be 256 .. 4194304";
	else if ((p->avg & (p->avg - 1)) != 0)
		why = "avg must be a power of two";
	else if (p->max < FASTCDC_MAX_LO || p->max > FASTCDC_MAX_HI)
		why = "max must be 1024 .. 16777216";
	else if (p->min > p->avg || p->avg > p->max)
		why = "want min <= avg <= max";
	else if (p->level > FASTCDC_LEVEL_HI)
		why = "level must be 0 .. 3";
	if (why == NULL)
		return 0;
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s", why);
	return -1;
}

/* The two masks for p (indexes clamped so a bad p reads no stray memory). */
static void
masks_for(const struct fastcdc_params *p, uint64_t *mask_s, uint64_t *mask_l)
{
	unsigned bits = log2_u32(p->avg), lv = p->level & 3;
	unsigned s = bits + lv, l = bits >= lv ? bits - lv : 0;

	*mask_s = masks[s < 25 ? s : 25];
	*mask_l = masks[l > 5 ? l : 5];
}

/*
 * Hash d[i..end) on from *hp with mask m.  Returns the first index whose
 * hash has no bit of m set (that byte starts the next chunk), or end with
 * *hp the hash after d[end - 1].  *hit says which.
 */
static inline size_t
scan(const uint8_t *d, size_t i, size_t end, uint64_t *hp, uint64_t m,
    int *hit)
{
	uint64_t h = *hp, m2 = m << 1;

	*hit = 1;
	for (; i + 2 <= end; i += 2) {
		h = (h << 2) + gear_shl1[d[i]];
		if ((h & m2) == 0)
			return i;
		h += gear[d[i + 1]];
		if ((h & m) == 0)
			return i + 1;
	}
	if (i < end) {
		h = (h << 1) + gear[d[i]];
		if ((h & m) == 0)
			return i;
		i++;
	}
	*hit = 0;
	*hp = h;
	return i;
}

size_t
fastcdc_next(const struct fastcdc_params *p, const uint8_t *data, size_t n)
{
	uint64_t ms, ml, h = 0;
	size_t lim, ctr, i;
	int hit;

	if (n <= p->min)
		return n;
	masks_for(p, &ms, &ml);
	lim = n < p->max ? n : p->max;
	ctr = p->avg < lim ? p->avg : lim;
	i = p->min;
	if (i < ctr) {
		i = scan(data, i, ctr, &h, ms, &hit);
		if (hit)
			return i;
	}
	if (i < lim) {
		i = scan(data, i, lim, &h, ml, &hit);
		if (hit)
			return i;
	}
	return lim;
}

void
fastcdc_init(struct fastcdc *c, const struct fastcdc_params *p)
{
	c->min = p->min;
	c->avg = p->avg;
	c->max = p->max;
	masks_for(p, &c->mask_s, &c->mask_l);
	c->h = 0;
	c->pos = 0;
}

size_t
fastcdc_update(struct fastcdc *c, const uint8_t *data, size_t n,
    size_t *chunk_len)
{
	size_t i = 0, step, j;
	uint32_t end;
	int hit;

	*chunk_len = 0;
	while (i < n) {
		if (c->pos < c->min) {
			/* Bytes before min are never hashed. */
			step = c->min - c->pos;
			step = step < n - i ? step : n - i;
		} else {
			end = c->pos < c->avg ? c->avg : c->max;
			step = end - c->pos;
			step = step < n - i ? step : n - i;
			j = scan(data, i, i + step, &c->h,
			    c->pos < c->avg ? c->mask_s : c->mask_l, &hit);
			if (hit) {
				*chunk_len = c->pos + (j - i);
				c->pos = 0;
				c->h = 0;
				return j;
			}
		}
		i += step;
		c->pos += (uint32_t)step;
		if (c->pos == c->max) {
			*chunk_len = c->max;
			c->pos = 0;
			c->h = 0;
			return i;
		}
	}
	return n;
}

size_t
fastcdc_final(struct fastcdc *c)
{
	size_t len = c->pos;

	c->pos = 0;
	c->h = 0;
	return len;
}
