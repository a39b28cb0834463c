/*
 * util/errors.c: iwarp_strerror, iwarp_error_to_term, iwarp_term_strerror.
 *
 * Library error codes (enum iwarp_error) and TERMINATE causes
 * (RFC 5040 §4.8/§7, RFC 5041 §7, RFC 5044 §8, RFC 6581 §6) as text, and
 * the mapping from one to the other. Self-contained: util/ depends on no
 * protocol layer.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "iwarp/iwarp.h"

#define TEXT_BUF_LEN 96

/* Per-thread buffer for texts that are formatted (errno, unknown codes). */
static _Thread_local char text_buf[TEXT_BUF_LEN];

struct err_entry {
	int err;
	const char *text;
	uint8_t layer;
	uint8_t etype;
	uint8_t ecode;
	bool has_term; /* the RFCs assign a TERMINATE cause */
};

#define T(e, txt, l, et, ec)                                                   \
	{                                                                      \
		(e), (txt), (l), (et), (ec), true                              \
	}
#define N(e, txt)                                                              \
	{                                                                      \
		(e), (txt), 0, 0, 0, false                                     \
	}

#define RDMAP  IWARP_TERM_LAYER_RDMAP
#define DDP    IWARP_TERM_LAYER_DDP
#define LLP    IWARP_TERM_LAYER_LLP
#define R_PROT IWARP_RDMAP_ETYPE_REMOTE_PROTECTION
#define R_OP   IWARP_RDMAP_ETYPE_REMOTE_OPERATION
#define D_CAT  IWARP_DDP_ETYPE_CATASTROPHIC
#define D_TAG  IWARP_DDP_ETYPE_TAGGED_BUFFER
#define D_UNT  IWARP_DDP_ETYPE_UNTAGGED_BUFFER
#define MPA    IWARP_LLP_ETYPE_MPA

/*
 * Every enum iwarp_error value, its text and its TERMINATE cause.
 * Choices where the RFCs leave room (documented here, tested in
 * tests/errors_test.c):
 * - MPA Req/Rep errors that make the connection unusable (bad key, rev,
 *   PD_Length, reserved bits, marker or CRC refusal) are "invalid MPA
 *   Request/Reply" 0x04 (RFC 5044 §8, RFC 6581 §6); a Reply with R set
 *   was the peer's rejection: nothing to send, no cause.
 * - ULPDU_Length beyond the limit: the length field does not frame a
 *   valid FPDU, reported as 0x03 "marker and ULPDU length mismatch".
 * - DDP reserved bits: no RFC code; DDP local catastrophic 0x00.
 * - Read Request beyond IRD: RDMAP/RemoteOp 0x07 catastrophic stream
 *   error, as siw sends (docs/interop-notes.md §1.4).
 * - Read Response without a Read Request: RDMAP/RemoteOp 0x06 unexpected
 *   opcode (RFC 5040 §7).
 * - A malformed Terminate is never answered with a Terminate
 *   (RFC 5040 §4.8, §5): no cause. Truncated input is not a protocol error.
 */
static const struct err_entry err_table[] = {
	N(IWARP_ERR_TRUNCATED, "input truncated (more bytes needed)"),
	T(IWARP_ERR_MPA_KEY, "MPA: invalid Request/Reply key", LLP, MPA,
	  IWARP_LLP_ECODE_INVALID_REQ_REP),
	T(IWARP_ERR_MPA_REV, "MPA: unsupported revision", LLP, MPA,
	  IWARP_LLP_ECODE_INVALID_REQ_REP),
	T(IWARP_ERR_MPA_PD_LENGTH, "MPA: private data length above 512", LLP,
	  MPA, IWARP_LLP_ECODE_INVALID_REQ_REP),
	T(IWARP_ERR_MPA_ENHANCED_PD,
	  "MPA: enhanced mode with private data shorter than IRD/ORD", LLP, MPA,
	  IWARP_LLP_ECODE_INVALID_REQ_REP),
	T(IWARP_ERR_MPA_RESERVED, "MPA: reserved Request/Reply bits set", LLP,
	  MPA, IWARP_LLP_ECODE_INVALID_REQ_REP),
	N(IWARP_ERR_MPA_REJECTED, "MPA: connection rejected by the peer"),
	T(IWARP_ERR_MPA_MARKERS, "MPA: marker negotiation failed", LLP, MPA,
	  IWARP_LLP_ECODE_INVALID_REQ_REP),
	T(IWARP_ERR_MPA_CRC_REQUIRED,
	  "MPA: CRC required but refused by the peer", LLP, MPA,
	  IWARP_LLP_ECODE_INVALID_REQ_REP),
	T(IWARP_ERR_MPA_IRD, "MPA: insufficient IRD resources", LLP, MPA,
	  IWARP_LLP_ECODE_INSUFFICIENT_IRD),
	T(IWARP_ERR_MPA_RTR, "MPA: no matching RTR option", LLP, MPA,
	  IWARP_LLP_ECODE_NO_MATCHING_RTR),
	T(IWARP_ERR_MPA_REQ_REP, "MPA: invalid Request/Reply frame", LLP, MPA,
	  IWARP_LLP_ECODE_INVALID_REQ_REP),
	T(IWARP_ERR_MPA_CRC, "MPA: FPDU CRC error", LLP, MPA,
	  IWARP_LLP_ECODE_CRC),
	T(IWARP_ERR_MPA_MARKER, "MPA: marker and ULPDU_Length mismatch", LLP,
	  MPA, IWARP_LLP_ECODE_MARKER_MISMATCH),
	T(IWARP_ERR_MPA_ULPDU_LENGTH, "MPA: ULPDU_Length beyond the limit", LLP,
	  MPA, IWARP_LLP_ECODE_MARKER_MISMATCH),
	T(IWARP_ERR_MPA_STREAM_LOST, "MPA: TCP stream closed or lost", LLP, MPA,
	  IWARP_LLP_ECODE_STREAM_LOST),
	T(IWARP_ERR_DDP_TAGGED_VERSION, "DDP: invalid version (tagged segment)",
	  DDP, D_TAG, IWARP_DDP_ECODE_T_INVALID_VERSION),
	T(IWARP_ERR_DDP_UNTAGGED_VERSION,
	  "DDP: invalid version (untagged segment)", DDP, D_UNT,
	  IWARP_DDP_ECODE_UT_INVALID_VERSION),
	T(IWARP_ERR_DDP_STAG, "DDP: invalid STag", DDP, D_TAG,
	  IWARP_DDP_ECODE_T_INVALID_STAG),
	T(IWARP_ERR_DDP_BOUNDS, "DDP: base or bounds violation", DDP, D_TAG,
	  IWARP_DDP_ECODE_T_BASE_BOUNDS),
	T(IWARP_ERR_DDP_STAG_STREAM, "DDP: STag not associated with the stream",
	  DDP, D_TAG, IWARP_DDP_ECODE_T_STAG_NOT_ASSOC),
	T(IWARP_ERR_DDP_TO_WRAP, "DDP: tagged offset wrap", DDP, D_TAG,
	  IWARP_DDP_ECODE_T_TO_WRAP),
	T(IWARP_ERR_DDP_QN, "DDP: invalid queue number", DDP, D_UNT,
	  IWARP_DDP_ECODE_UT_INVALID_QN),
	T(IWARP_ERR_DDP_MSN_NO_BUFFER, "DDP: invalid MSN, no buffer available",
	  DDP, D_UNT, IWARP_DDP_ECODE_UT_INVALID_MSN_NO_BUF),
	T(IWARP_ERR_DDP_MSN_RANGE, "DDP: invalid MSN, out of range", DDP, D_UNT,
	  IWARP_DDP_ECODE_UT_INVALID_MSN_RANGE),
	T(IWARP_ERR_DDP_MO, "DDP: invalid message offset", DDP, D_UNT,
	  IWARP_DDP_ECODE_UT_INVALID_MO),
	T(IWARP_ERR_DDP_MSG_TOO_LONG,
	  "DDP: message too long for the receive buffer", DDP, D_UNT,
	  IWARP_DDP_ECODE_UT_MSG_TOO_LONG),
	T(IWARP_ERR_DDP_RESERVED, "DDP: reserved header bits set", DDP, D_CAT,
	  0x00),
	T(IWARP_ERR_RDMAP_VERSION, "RDMAP: invalid version", RDMAP, R_OP,
	  IWARP_RDMAP_ECODE_INVALID_VERSION),
	T(IWARP_ERR_RDMAP_OPCODE, "RDMAP: unexpected opcode", RDMAP, R_OP,
	  IWARP_RDMAP_ECODE_UNEXPECTED_OPCODE),
	T(IWARP_ERR_RDMAP_STAG, "RDMAP: invalid STag", RDMAP, R_PROT,
	  IWARP_RDMAP_ECODE_INVALID_STAG),
	T(IWARP_ERR_RDMAP_BOUNDS, "RDMAP: base or bounds violation", RDMAP,
	  R_PROT, IWARP_RDMAP_ECODE_BASE_BOUNDS),
	T(IWARP_ERR_RDMAP_ACCESS, "RDMAP: access rights violation", RDMAP,
	  R_PROT, IWARP_RDMAP_ECODE_ACCESS_RIGHTS),
	T(IWARP_ERR_RDMAP_STAG_STREAM,
	  "RDMAP: STag not associated with the RDMAP stream", RDMAP, R_PROT,
	  IWARP_RDMAP_ECODE_STAG_NOT_ASSOC),
	T(IWARP_ERR_RDMAP_TO_WRAP, "RDMAP: tagged offset wrap", RDMAP, R_PROT,
	  IWARP_RDMAP_ECODE_TO_WRAP),
	T(IWARP_ERR_RDMAP_IRD, "RDMAP: Read Request beyond IRD", RDMAP, R_OP,
	  IWARP_RDMAP_ECODE_CATASTROPHIC_STREAM),
	T(IWARP_ERR_RDMAP_INVALIDATE, "RDMAP: STag cannot be invalidated",
	  RDMAP, R_PROT, IWARP_RDMAP_ECODE_CANT_INVALIDATE),
	N(IWARP_ERR_RDMAP_TERMINATE, "RDMAP: malformed Terminate message"),
	T(IWARP_ERR_RDMAP_RESPONSE,
	  "RDMAP: Read Response without a matching Read Request", RDMAP, R_OP,
	  IWARP_RDMAP_ECODE_UNEXPECTED_OPCODE),
	/* RFC 7306 atomics: an unaligned target is outside any valid
	 * 8-octet atomic range (remote protection, base/bounds); an Atomic
	 * Operation Code we do not know is an unexpected operation */
	T(IWARP_ERR_RDMAP_ATOMIC_ALIGN,
	  "RDMAP: Atomic Request target not 8-octet aligned", RDMAP, R_PROT,
	  IWARP_RDMAP_ECODE_BASE_BOUNDS),
	T(IWARP_ERR_RDMAP_ATOMIC_OP, "RDMAP: unsupported Atomic Operation Code",
	  RDMAP, R_OP, IWARP_RDMAP_ECODE_UNEXPECTED_OPCODE),
	T(IWARP_ERR_RDMAP_INVALIDATE_OP,
	  "RDMAP: STag may not be invalidated remotely", RDMAP, R_OP,
	  IWARP_RDMAP_ECODE_CANT_INVALIDATE),
};

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static const struct err_entry *err_find(int err)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(err_table); i++)
		if (err_table[i].err == err)
			return &err_table[i];
	return NULL;
}

/* strerror_r into the thread-local buffer, GNU or XSI flavour. */
static const char *errno_text(int errnum)
{
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
	const char *s = strerror_r(errnum, text_buf, sizeof(text_buf));

	return s ? s : "unknown errno";
#else
	if (strerror_r(errnum, text_buf, sizeof(text_buf)) != 0)
		snprintf(text_buf, sizeof(text_buf), "errno %d", errnum);
	return text_buf;
#endif
}

IWARP_EXPORT const char *iwarp_strerror(int err)
{
	const struct err_entry *e;

	if (err == 0)
		return "success";
	e = err_find(err);
	if (e)
		return e->text;
	if (err <= -1000 && err >= -1999) {
		snprintf(text_buf, sizeof(text_buf),
			 "unknown libiwarp error %d", err);
		return text_buf;
	}
	/* -errno, or errno given positive (iwarp_strerror(3)); INT_MIN has
	 * no positive counterpart */
	if (err < 0 && err != INT_MIN)
		return errno_text(-err);
	if (err > 0)
		return errno_text(err);
	snprintf(text_buf, sizeof(text_buf), "not an error code (%d)", err);
	return text_buf;
}

IWARP_EXPORT int iwarp_error_to_term(int err, struct iwarp_term_cause *cause)
{
	const struct err_entry *e = err_find(err);

	if (!e || !e->has_term)
		return -EINVAL;
	if (cause) {
		cause->layer = e->layer;
		cause->etype = e->etype;
		cause->ecode = e->ecode;
	}
	return 0;
}

static const char *ddp_tagged_text(uint8_t ecode)
{
	switch (ecode) {
	case IWARP_DDP_ECODE_T_INVALID_STAG:
		return "DDP tagged buffer: invalid STag";
	case IWARP_DDP_ECODE_T_BASE_BOUNDS:
		return "DDP tagged buffer: base or bounds violation";
	case IWARP_DDP_ECODE_T_STAG_NOT_ASSOC:
		return "DDP tagged buffer: STag not associated with DDP stream";
	case IWARP_DDP_ECODE_T_TO_WRAP:
		return "DDP tagged buffer: TO wrap";
	case IWARP_DDP_ECODE_T_INVALID_VERSION:
		return "DDP tagged buffer: invalid DDP version";
	default:
		return NULL;
	}
}

static const char *ddp_untagged_text(uint8_t ecode)
{
	switch (ecode) {
	case IWARP_DDP_ECODE_UT_INVALID_QN:
		return "DDP untagged buffer: invalid QN";
	case IWARP_DDP_ECODE_UT_INVALID_MSN_NO_BUF:
		return "DDP untagged buffer: invalid MSN - no buffer available";
	case IWARP_DDP_ECODE_UT_INVALID_MSN_RANGE:
		return "DDP untagged buffer: invalid MSN - MSN range is not valid";
	case IWARP_DDP_ECODE_UT_INVALID_MO:
		return "DDP untagged buffer: invalid MO";
	case IWARP_DDP_ECODE_UT_MSG_TOO_LONG:
		return "DDP untagged buffer: DDP message too long for available buffer";
	case IWARP_DDP_ECODE_UT_INVALID_VERSION:
		return "DDP untagged buffer: invalid DDP version";
	default:
		return NULL;
	}
}

static const char *llp_text(uint8_t ecode)
{
	switch (ecode) {
	case IWARP_LLP_ECODE_STREAM_LOST:
		return "LLP/MPA: TCP connection closed, terminated or lost";
	case IWARP_LLP_ECODE_CRC:
		return "LLP/MPA: CRC error";
	case IWARP_LLP_ECODE_MARKER_MISMATCH:
		return "LLP/MPA: marker and ULPDU length field mismatch";
	case IWARP_LLP_ECODE_INVALID_REQ_REP:
		return "LLP/MPA: invalid MPA Request or Reply frame";
	case IWARP_LLP_ECODE_LOCAL_CATASTROPHIC:
		return "LLP/MPA: local catastrophic error";
	case IWARP_LLP_ECODE_INSUFFICIENT_IRD:
		return "LLP/MPA: insufficient IRD resources";
	case IWARP_LLP_ECODE_NO_MATCHING_RTR:
		return "LLP/MPA: no matching RTR option";
	default:
		return NULL;
	}
}

/* RDMAP texts (RFC 5040 §4.8, §7) for remote protection / operation. */
static const char *rdmap_text(uint8_t etype, uint8_t ecode)
{
	static const char *const prot[] = {
		[0x00] = "RDMAP remote protection: invalid STag",
		[0x01] = "RDMAP remote protection: base or bounds violation",
		[0x02] = "RDMAP remote protection: access rights violation",
		[0x03] =
			"RDMAP remote protection: STag not associated with RDMAP stream",
		[0x04] = "RDMAP remote protection: TO wrap",
		[0x09] = "RDMAP remote protection: STag cannot be invalidated",
	};
	static const char *const op[] = {
		[0x05] = "RDMAP remote operation: invalid RDMAP version",
		[0x06] = "RDMAP remote operation: unexpected opcode",
		[0x07] =
			"RDMAP remote operation: catastrophic error, localized to RDMAP stream",
		[0x08] = "RDMAP remote operation: catastrophic error, global",
		[0x09] = "RDMAP remote operation: STag cannot be invalidated",
	};

	if (ecode == IWARP_RDMAP_ECODE_UNSPECIFIED)
		return etype == R_PROT
			       ? "RDMAP remote protection: unspecified error"
			       : "RDMAP remote operation: unspecified error";
	if (etype == R_PROT && ecode < ARRAY_LEN(prot))
		return prot[ecode];
	if (etype == R_OP && ecode < ARRAY_LEN(op))
		return op[ecode];
	return NULL;
}

IWARP_EXPORT const char *iwarp_term_strerror(uint8_t layer, uint8_t etype,
					     uint8_t ecode)
{
	const char *s = NULL;

	switch (layer) {
	case IWARP_TERM_LAYER_RDMAP:
		if (etype == IWARP_RDMAP_ETYPE_LOCAL_CATASTROPHIC)
			s = ecode == 0x00 ? "RDMAP local catastrophic error"
					  : NULL;
		else if (etype == R_PROT || etype == R_OP)
			s = rdmap_text(etype, ecode);
		break;
	case IWARP_TERM_LAYER_DDP:
		if (etype == IWARP_DDP_ETYPE_CATASTROPHIC)
			s = ecode == 0x00 ? "DDP local catastrophic error"
					  : NULL;
		else if (etype == D_TAG)
			s = ddp_tagged_text(ecode);
		else if (etype == D_UNT)
			s = ddp_untagged_text(ecode);
		break;
	case IWARP_TERM_LAYER_LLP:
		if (etype == MPA)
			s = llp_text(ecode);
		break;
	default:
		break;
	}
	if (s)
		return s;
	snprintf(text_buf, sizeof(text_buf),
		 "unknown (layer 0x%x etype 0x%x ecode 0x%02x)", layer, etype,
		 ecode);
	return text_buf;
}
