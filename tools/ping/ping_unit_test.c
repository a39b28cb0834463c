/*
 * tools/ping/ping_unit_test.c: Check suite for the pure parts of iwarp_ping:
 * rping's payload, the 16-byte control message, round-trip statistics and
 * the command line.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "testutil.h"
#include "tools/ping/ping.h"

/* rping.c rping_test_client's fill, re-derived from its description:
 * prefix, then 'A'..'z' cycling from 'A' + ping % 58, NUL last. */
static void ref_fill(char *b, uint32_t size, uint32_t ping)
{
	int cc = snprintf(b, size, "rdma-ping-%u: ", ping);
	uint32_t i;
	int c = 'A' + (int)(ping % 58);

	for (i = (uint32_t)cc; i < size; i++) {
		b[i] = (char)c;
		if (++c > 'z')
			c = 'A';
	}
	b[size - 1] = '\0';
}

static char buf_a[PING_MAX_SIZE], buf_b[PING_MAX_SIZE];

START_TEST(payload_matches_rping)
{
	static const uint32_t sizes[] = {26, 27, 64, 100, 1000, 4096, 65535};
	static const uint32_t pings[] = {0,  1,	 9,    10,	   57,
					 58, 59, 1000, 2147483647u};
	size_t i, j;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (j = 0; j < sizeof(pings) / sizeof(pings[0]); j++) {
			ref_fill(buf_a, sizes[i], pings[j]);
			ping_payload_fill(buf_b, sizes[i], pings[j]);
			ck_assert_mem_eq(buf_a, buf_b, sizes[i]);
			ck_assert_int_eq(
				ping_payload_check(buf_b, sizes[i], pings[j]),
				-1);
			/* the echo is strlen + 1 = the whole buffer */
			ck_assert_uint_eq(strlen(buf_b) + 1, sizes[i]);
		}
	}
}
END_TEST

START_TEST(payload_text)
{
	ping_payload_fill(buf_b, 32, 3);
	ck_assert_str_eq(buf_b, "rdma-ping-3: DEFGHIJKLMNOPQRSTU");
}
END_TEST

START_TEST(payload_check_finds_first_difference)
{
	uint32_t off;

	ping_payload_fill(buf_b, 4096, 7);
	for (off = 0; off < 4096; off += 251) {
		buf_b[off] ^= 0x20;
		ck_assert_int_eq(ping_payload_check(buf_b, 4096, 7), (long)off);
		buf_b[off] ^= 0x20;
	}
	/* the wrong ping number differs in the prefix */
	ck_assert_int_eq(ping_payload_check(buf_b, 4096, 8), 10);
	/* a missing NUL at the end */
	buf_b[4095] = 'x';
	ck_assert_int_eq(ping_payload_check(buf_b, 4096, 7), 4095);
}
END_TEST

START_TEST(ctrl_roundtrip_big_endian)
{
	static const uint8_t want[PING_CTRL_LEN] = {
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
		0xaa, 0xbb, 0xcc, 0xdd, 0x00, 0x00, 0xff, 0xff,
	};
	uint8_t m[PING_CTRL_LEN];
	uint64_t addr;
	uint32_t rkey, size;

	ping_ctrl_encode(m, UINT64_C(0x0102030405060708), 0xaabbccdd, 65535);
	ck_assert_mem_eq(m, want, sizeof(want));
	ping_ctrl_decode(m, &addr, &rkey, &size);
	ck_assert_uint_eq(addr, UINT64_C(0x0102030405060708));
	ck_assert_uint_eq(rkey, 0xaabbccdd);
	ck_assert_uint_eq(size, 65535);
}
END_TEST

START_TEST(stats_percentiles)
{
	struct ping_stats st;
	uint64_t i;

	ping_stats_init(&st);
	ck_assert_uint_eq(ping_stats_percentile(&st, 50.0), 0);
	/* added in reverse: percentile must sort */
	for (i = 100; i >= 1; i--)
		ck_assert_int_eq(ping_stats_add(&st, i * 1000), 0);
	ck_assert_uint_eq(st.count, 100);
	ck_assert_uint_eq(st.min_ns, 1000);
	ck_assert_uint_eq(st.max_ns, 100000);
	ck_assert_uint_eq(ping_stats_percentile(&st, 50.0), 50000);
	ck_assert_uint_eq(ping_stats_percentile(&st, 99.0), 99000);
	ck_assert_uint_eq(ping_stats_percentile(&st, 100.0), 100000);
	ck_assert_uint_eq(ping_stats_percentile(&st, 0.0), 1000);
	ping_stats_free(&st);
	ck_assert_ptr_null(st.sample);
}
END_TEST

START_TEST(stats_one_sample)
{
	struct ping_stats st;

	ping_stats_init(&st);
	ck_assert_int_eq(ping_stats_add(&st, 1234), 0);
	ck_assert_uint_eq(ping_stats_percentile(&st, 50.0), 1234);
	ck_assert_uint_eq(ping_stats_percentile(&st, 99.0), 1234);
	ping_stats_free(&st);
}
END_TEST

/* Parses a NULL-terminated argument list. */
static int parse(struct ping_opts *o, const char **args)
{
	char *argv[32];
	int argc = 0;

	argv[argc++] = (char *)"iwarp_ping";
	while (*args && argc < 31)
		argv[argc++] = (char *)*args++;
	argv[argc] = NULL;
	return ping_opts_parse(o, argc, argv);
}

START_TEST(opts_defaults)
{
	const char *args[] = {"-c", "-a", "10.0.0.1", NULL};
	struct ping_opts o;

	ck_assert_int_eq(parse(&o, args), 0);
	ck_assert_int_eq(o.server, 0);
	ck_assert_str_eq(o.addr, "10.0.0.1");
	ck_assert_uint_eq(o.port, 7174);
	ck_assert_uint_eq(o.size, 64);
	ck_assert_uint_eq(o.count, 0);
	ck_assert_int_eq(o.timeout_ms, PING_DEFAULT_TIMEOUT_MS);
	ck_assert_int_eq(o.crc, -1);
	ck_assert_int_eq(o.markers, -1);
	ck_assert_int_eq(o.mpa_rev, -1);
	ck_assert_int_eq(o.p2p, -1);
}
END_TEST

START_TEST(opts_all)
{
	const char *args[] = {"-s",	   "-P",
			      "-p",	   "9999",
			      "-S",	   "65535",
			      "-C",	   "20",
			      "-vVdq",	   "--crc=require",
			      "--markers", "--mpa-rev",
			      "1",	   "--p2p",
			      "read",	   "--timeout",
			      "500",	   "--listen-timeout",
			      "7",	   NULL};
	struct ping_opts o;

	ck_assert_int_eq(parse(&o, args), 0);
	ck_assert_int_eq(o.server, 1);
	ck_assert_int_eq(o.persistent, 1);
	ck_assert_uint_eq(o.port, 9999);
	ck_assert_uint_eq(o.size, 65535);
	ck_assert_uint_eq(o.count, 20);
	ck_assert_int_eq(o.verbose, 1);
	ck_assert_int_eq(o.validate, 1);
	ck_assert_int_eq(o.debug, 1);
	ck_assert_int_eq(o.self_qp, 1);
	ck_assert_int_eq(o.crc, IWARP_CRC_REQUIRE);
	ck_assert_int_eq(o.markers, 1);
	ck_assert_int_eq(o.mpa_rev, 1);
	ck_assert_int_eq(o.p2p, IWARP_P2P_READ);
	ck_assert_int_eq(o.timeout_ms, 500);
	ck_assert_int_eq(o.listen_timeout_ms, 7);
}
END_TEST

START_TEST(opts_crc_plain_is_request)
{
	const char *args[] = {"-c", "-a", "h", "--crc", NULL};
	struct ping_opts o;

	ck_assert_int_eq(parse(&o, args), 0);
	ck_assert_int_eq(o.crc, IWARP_CRC_REQUEST);
}
END_TEST

START_TEST(opts_errors)
{
	static const char *bad[][6] = {
		{"-c", "-a", "h", "-S", "25", NULL},
		{"-c", "-a", "h", "-S", "65536", NULL},
		{"-c", "-a", "h", "-C", "-1", NULL},
		{"-c", "-a", "h", "-p", "65536", NULL},
		{"-c", "-a", "h", "--mpa-rev", "3", NULL},
		{"-c", "-a", "h", "--p2p", "rtr", NULL},
		{"-c", "-a", "h", "--crc=maybe", NULL},
		{"-c", NULL},		       /* client without -a */
		{"-a", "h", NULL},	       /* no role */
		{"-s", "-I", "h", NULL},       /* -I is a client option */
		{"-c", "-a", "h", "-P", NULL}, /* -P is a server option */
		{"-c", "-a", "h", "extra", NULL},
	};
	struct ping_opts o;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(parse(&o, bad[i]) < 0, "case %zu accepted", i);
}
END_TEST

static Suite *ping_suite(void)
{
	Suite *s = suite_create("ping");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, payload_matches_rping);
	tcase_add_test(tc, payload_text);
	tcase_add_test(tc, payload_check_finds_first_difference);
	tcase_add_test(tc, ctrl_roundtrip_big_endian);
	tcase_add_test(tc, stats_percentiles);
	tcase_add_test(tc, stats_one_sample);
	tcase_add_test(tc, opts_defaults);
	tcase_add_test(tc, opts_all);
	tcase_add_test(tc, opts_crc_plain_is_request);
	tcase_add_test(tc, opts_errors);
	suite_add_tcase(s, tc);
	return s;
}

IW_TEST_MAIN(ping_suite)
