/* tests/errors_test.c: iwarp_strerror, iwarp_error_to_term,
 * iwarp_term_strerror. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "iwarp/iwarp.h"
#include "testutil.h"

#define NO_TERM 0xFF /* marks codes without a TERMINATE cause */

/* Every enum iwarp_error value with the cause it must map to. */
static const struct {
	int err;
	uint8_t layer, etype, ecode;
} codes[] = {
	{IWARP_ERR_TRUNCATED, NO_TERM, 0, 0},
	{IWARP_ERR_MPA_KEY, 2, 0, 0x04},
	{IWARP_ERR_MPA_REV, 2, 0, 0x04},
	{IWARP_ERR_MPA_PD_LENGTH, 2, 0, 0x04},
	{IWARP_ERR_MPA_ENHANCED_PD, 2, 0, 0x04},
	{IWARP_ERR_MPA_RESERVED, 2, 0, 0x04},
	{IWARP_ERR_MPA_REJECTED, NO_TERM, 0, 0},
	{IWARP_ERR_MPA_MARKERS, 2, 0, 0x04},
	{IWARP_ERR_MPA_CRC_REQUIRED, 2, 0, 0x04},
	{IWARP_ERR_MPA_IRD, 2, 0, 0x06},
	{IWARP_ERR_MPA_RTR, 2, 0, 0x07},
	{IWARP_ERR_MPA_REQ_REP, 2, 0, 0x04},
	{IWARP_ERR_MPA_CRC, 2, 0, 0x02},
	{IWARP_ERR_MPA_MARKER, 2, 0, 0x03},
	{IWARP_ERR_MPA_ULPDU_LENGTH, 2, 0, 0x03},
	{IWARP_ERR_MPA_STREAM_LOST, 2, 0, 0x01},
	{IWARP_ERR_DDP_TAGGED_VERSION, 1, 1, 0x04},
	{IWARP_ERR_DDP_UNTAGGED_VERSION, 1, 2, 0x06},
	{IWARP_ERR_DDP_STAG, 1, 1, 0x00},
	{IWARP_ERR_DDP_BOUNDS, 1, 1, 0x01},
	{IWARP_ERR_DDP_STAG_STREAM, 1, 1, 0x02},
	{IWARP_ERR_DDP_TO_WRAP, 1, 1, 0x03},
	{IWARP_ERR_DDP_QN, 1, 2, 0x01},
	{IWARP_ERR_DDP_MSN_NO_BUFFER, 1, 2, 0x02},
	{IWARP_ERR_DDP_MSN_RANGE, 1, 2, 0x03},
	{IWARP_ERR_DDP_MO, 1, 2, 0x04},
	{IWARP_ERR_DDP_MSG_TOO_LONG, 1, 2, 0x05},
	{IWARP_ERR_DDP_RESERVED, 1, 0, 0x00},
	{IWARP_ERR_RDMAP_VERSION, 0, 2, 0x05},
	{IWARP_ERR_RDMAP_OPCODE, 0, 2, 0x06},
	{IWARP_ERR_RDMAP_STAG, 0, 1, 0x00},
	{IWARP_ERR_RDMAP_BOUNDS, 0, 1, 0x01},
	{IWARP_ERR_RDMAP_ACCESS, 0, 1, 0x02},
	{IWARP_ERR_RDMAP_STAG_STREAM, 0, 1, 0x03},
	{IWARP_ERR_RDMAP_TO_WRAP, 0, 1, 0x04},
	{IWARP_ERR_RDMAP_IRD, 0, 2, 0x07},
	{IWARP_ERR_RDMAP_INVALIDATE, 0, 1, 0x09},
	{IWARP_ERR_RDMAP_TERMINATE, NO_TERM, 0, 0},
	{IWARP_ERR_RDMAP_RESPONSE, 0, 2, 0x06},
	{IWARP_ERR_RDMAP_ATOMIC_ALIGN, 0, 1, 0x01},
	{IWARP_ERR_RDMAP_ATOMIC_OP, 0, 2, 0x06},
	{IWARP_ERR_RDMAP_INVALIDATE_OP, 0, 2, 0x09},
};

#define NCODES (sizeof(codes) / sizeof(codes[0]))

/* Every library code has its own specific text. */
START_TEST(test_strerror_codes)
{
	size_t i, j;

	for (i = 0; i < NCODES; i++) {
		const char *s = iwarp_strerror(codes[i].err);

		ck_assert_ptr_nonnull(s);
		ck_assert_msg(strlen(s) > 8, "short text for %d", codes[i].err);
		ck_assert_msg(strstr(s, "unknown") == NULL &&
				      strstr(s, "Unknown") == NULL,
			      "generic text for %d: %s", codes[i].err, s);
		/* a stable pointer: not the per-thread buffer */
		ck_assert_ptr_eq(s, iwarp_strerror(codes[i].err));
		for (j = 0; j < i; j++)
			ck_assert_str_ne(s, iwarp_strerror(codes[j].err));
	}
	ck_assert_str_eq(iwarp_strerror(IWARP_ERR_MPA_CRC),
			 "MPA: FPDU CRC error");
}
END_TEST

/* Codes in the library range that are not in the enum. */
START_TEST(test_strerror_unknown_codes)
{
	int err;
	size_t i;
	bool known;

	for (err = -1999; err <= -1000; err++) {
		known = false;
		for (i = 0; i < NCODES; i++)
			known = known || codes[i].err == err;
		if (known)
			continue;
		ck_assert_ptr_nonnull(
			strstr(iwarp_strerror(err), "unknown libiwarp error"));
		ck_assert_int_eq(iwarp_error_to_term(err, NULL), -EINVAL);
	}
	ck_assert_str_eq(iwarp_strerror(-1001), "unknown libiwarp error -1001");
}
END_TEST

START_TEST(test_strerror_errno)
{
	ck_assert_str_eq(iwarp_strerror(0), "success");
	ck_assert_str_eq(iwarp_strerror(-EINVAL), strerror(EINVAL));
	ck_assert_str_eq(iwarp_strerror(-ENOMEM), strerror(ENOMEM));
	ck_assert_str_eq(iwarp_strerror(-ECONNRESET), strerror(ECONNRESET));
	ck_assert_ptr_nonnull(iwarp_strerror(-999));
	ck_assert_ptr_nonnull(iwarp_strerror(-2000));
	ck_assert_str_eq(iwarp_strerror(-2147483647 - 1),
			 "not an error code (-2147483648)");
	/* a positive errno reads like its negation (iwarp_strerror(3)) */
	ck_assert_str_eq(iwarp_strerror(EIO), strerror(EIO));
}
END_TEST

static void *thread_text(void *arg)
{
	const char *s = iwarp_strerror(-1002);

	(void)arg;
	return (void *)(strcmp(s, "unknown libiwarp error -1002") == 0 ? s
								       : NULL);
}

/* Formatted texts live in a per-thread buffer. */
START_TEST(test_strerror_thread_local)
{
	pthread_t th;
	void *other;
	const char *mine = iwarp_strerror(-1001);

	ck_assert_int_eq(pthread_create(&th, NULL, thread_text, NULL), 0);
	ck_assert_int_eq(pthread_join(th, &other), 0);
	ck_assert_ptr_nonnull(other);
	ck_assert_ptr_ne(other, mine);
	ck_assert_str_eq(mine, "unknown libiwarp error -1001");
}
END_TEST

START_TEST(test_error_to_term)
{
	struct iwarp_term_cause c;
	size_t i;

	for (i = 0; i < NCODES; i++) {
		memset(&c, 0xEE, sizeof(c));
		if (codes[i].layer == NO_TERM) {
			ck_assert_int_eq(iwarp_error_to_term(codes[i].err, &c),
					 -EINVAL);
			continue;
		}
		ck_assert_msg(iwarp_error_to_term(codes[i].err, &c) == 0,
			      "no cause for %d", codes[i].err);
		ck_assert_uint_eq(c.layer, codes[i].layer);
		ck_assert_uint_eq(c.etype, codes[i].etype);
		ck_assert_uint_eq(c.ecode, codes[i].ecode);
		/* every mapped cause is one the RFCs define (has a text) */
		ck_assert_ptr_null(
			strstr(iwarp_term_strerror(c.layer, c.etype, c.ecode),
			       "unknown"));
		ck_assert_int_eq(iwarp_error_to_term(codes[i].err, NULL), 0);
	}
	ck_assert_int_eq(iwarp_error_to_term(0, &c), -EINVAL);
	ck_assert_int_eq(iwarp_error_to_term(-EINVAL, &c), -EINVAL);
	ck_assert_int_eq(iwarp_error_to_term(-EPROTO, &c), -EINVAL);
	ck_assert_int_eq(iwarp_error_to_term(1, &c), -EINVAL);
}
END_TEST

START_TEST(test_term_strerror)
{
	ck_assert_str_eq(iwarp_term_strerror(2, 0, 0x02), "LLP/MPA: CRC error");
	ck_assert_str_eq(iwarp_term_strerror(2, 0, 0x07),
			 "LLP/MPA: no matching RTR option");
	ck_assert_str_eq(
		iwarp_term_strerror(1, 2, 0x03),
		"DDP untagged buffer: invalid MSN - MSN range is not valid");
	ck_assert_str_eq(iwarp_term_strerror(1, 1, 0x00),
			 "DDP tagged buffer: invalid STag");
	ck_assert_str_eq(iwarp_term_strerror(0, 1, 0x00),
			 "RDMAP remote protection: invalid STag");
	ck_assert_str_eq(iwarp_term_strerror(0, 2, 0x06),
			 "RDMAP remote operation: unexpected opcode");
	ck_assert_str_eq(iwarp_term_strerror(0, 2, 0x09),
			 "RDMAP remote operation: STag cannot be invalidated");
	ck_assert_str_eq(iwarp_term_strerror(0, 1, 0xFF),
			 "RDMAP remote protection: unspecified error");
	ck_assert_str_eq(iwarp_term_strerror(0, 0, 0x00),
			 "RDMAP local catastrophic error");
	ck_assert_str_eq(iwarp_term_strerror(1, 0, 0x00),
			 "DDP local catastrophic error");
	ck_assert_str_eq(iwarp_term_strerror(0, 2, 0x02),
			 "unknown (layer 0x0 etype 0x2 ecode 0x02)");
	ck_assert_str_eq(iwarp_term_strerror(15, 15, 0xFF),
			 "unknown (layer 0xf etype 0xf ecode 0xff)");
	ck_assert_str_eq(iwarp_term_strerror(1, 3, 0x00),
			 "unknown (layer 0x1 etype 0x3 ecode 0x00)");
}
END_TEST

static Suite *errors_suite(void)
{
	Suite *s = suite_create("errors");
	TCase *tc = tcase_create("errors");

	tcase_add_test(tc, test_strerror_codes);
	tcase_add_test(tc, test_strerror_unknown_codes);
	tcase_add_test(tc, test_strerror_errno);
	tcase_add_test(tc, test_strerror_thread_local);
	tcase_add_test(tc, test_error_to_term);
	tcase_add_test(tc, test_term_strerror);
	suite_add_tcase(s, tc);
	return s;
}

IW_TEST_MAIN(errors_suite)
