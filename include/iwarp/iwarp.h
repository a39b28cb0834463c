/*
 * libiwarp: iWARP (RDMAP RFC 5040, DDP RFC 5041, MPA RFC 5044 / RFC 6581)
 * in user space over TCP.
 *
 * This is the one installed header. Functions return 0 (or a positive count)
 * on success and a negative error on failure: either -errno or one of the
 * library codes below (enum iwarp_error, all in [-1999, -1000]).
 * iwarp_strerror() names both kinds. Constructors return NULL and set errno.
 */
#ifndef IWARP_IWARP_H
#define IWARP_IWARP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && __GNUC__ >= 4
#define IWARP_EXPORT __attribute__((visibility("default")))
#else
#define IWARP_EXPORT
#endif

/* ------------------------------------------------------------------------
 * Library error codes (negative; -errno values are used as well).
 * Each protocol violation has its own code; iwarp_error_to_term() gives the
 * TERMINATE layer/etype/ecode the RFCs assign to it.
 * ---------------------------------------------------------------------- */
enum iwarp_error {
	/* input ended before the unit it describes (stream callers: need more) */
	IWARP_ERR_TRUNCATED = -1000,

	/* MPA Request/Reply (RFC 5044 §7.1, RFC 6581 §5) */
	IWARP_ERR_MPA_KEY = -1010,          /* neither "MPA ID Req Frame" nor "...Rep..." */
	IWARP_ERR_MPA_REV = -1011,          /* Rev > 2 */
	IWARP_ERR_MPA_PD_LENGTH = -1012,    /* PD_Length > 512 */
	IWARP_ERR_MPA_ENHANCED_PD = -1013,  /* enhanced (rev 2, 0x10) with PD_Length < 4 */
	IWARP_ERR_MPA_RESERVED = -1014,     /* reserved flag bits set */
	IWARP_ERR_MPA_REJECTED = -1015,     /* R bit set in the Reply */
	IWARP_ERR_MPA_MARKERS = -1016,      /* markers required but refused (or vice versa) */
	IWARP_ERR_MPA_CRC_REQUIRED = -1017, /* we require CRC, the peer will not */
	IWARP_ERR_MPA_IRD = -1018,          /* insufficient IRD resources (RFC 6581) */
	IWARP_ERR_MPA_RTR = -1019,          /* no matching RTR option (RFC 6581) */
	IWARP_ERR_MPA_REQ_REP = -1020,      /* otherwise invalid Req/Rep frame */

	/* MPA FPDU (RFC 5044 §4-6) */
	IWARP_ERR_MPA_CRC = -1030,          /* CRC mismatch */
	IWARP_ERR_MPA_MARKER = -1031,       /* marker and ULPDU_Length mismatch */
	IWARP_ERR_MPA_ULPDU_LENGTH = -1032, /* ULPDU_Length beyond the limit */
	IWARP_ERR_MPA_STREAM_LOST = -1033,  /* TCP stream lost / closed */

	/* DDP (RFC 5041 §7) */
	IWARP_ERR_DDP_TAGGED_VERSION = -1040,
	IWARP_ERR_DDP_UNTAGGED_VERSION = -1041,
	IWARP_ERR_DDP_STAG = -1042,          /* invalid STag */
	IWARP_ERR_DDP_BOUNDS = -1043,        /* base or bounds violation */
	IWARP_ERR_DDP_STAG_STREAM = -1044,   /* STag not associated with stream */
	IWARP_ERR_DDP_TO_WRAP = -1045,       /* TO wrap */
	IWARP_ERR_DDP_QN = -1046,            /* invalid QN */
	IWARP_ERR_DDP_MSN_NO_BUFFER = -1047, /* invalid MSN: no buffer available */
	IWARP_ERR_DDP_MSN_RANGE = -1048,     /* invalid MSN: MSN range not valid */
	IWARP_ERR_DDP_MO = -1049,            /* invalid MO */
	IWARP_ERR_DDP_MSG_TOO_LONG = -1050,  /* message too long for the receive buffer */
	IWARP_ERR_DDP_RESERVED = -1051,      /* reserved bits set in the DDP header */

	/* RDMAP (RFC 5040 §7) */
	IWARP_ERR_RDMAP_VERSION = -1060,
	IWARP_ERR_RDMAP_OPCODE = -1061,      /* unexpected (reserved or out-of-place) opcode */
	IWARP_ERR_RDMAP_STAG = -1062,        /* invalid STag (remote protection) */
	IWARP_ERR_RDMAP_BOUNDS = -1063,      /* base or bounds violation */
	IWARP_ERR_RDMAP_ACCESS = -1064,      /* access rights violation */
	IWARP_ERR_RDMAP_STAG_STREAM = -1065, /* STag not associated with RDMAP stream */
	IWARP_ERR_RDMAP_TO_WRAP = -1066,
	IWARP_ERR_RDMAP_IRD = -1067,         /* Read Request beyond IRD (catastrophic, stream) */
	IWARP_ERR_RDMAP_INVALIDATE = -1068,  /* STag cannot be invalidated */
	IWARP_ERR_RDMAP_TERMINATE = -1069,   /* malformed Terminate message */
	IWARP_ERR_RDMAP_RESPONSE = -1070,    /* Read Response without a matching Read Request */
};

/* Text for a negative return value of this library (-errno or enum iwarp_error). */
IWARP_EXPORT const char *iwarp_strerror(int err);

/* ------------------------------------------------------------------------
 * TERMINATE codes (RFC 5040 §4.8, RFC 5041 §7, RFC 5044 §8, RFC 6581 §6).
 * Named as in the RFCs.
 * ---------------------------------------------------------------------- */
enum iwarp_term_layer {
	IWARP_TERM_LAYER_RDMAP = 0x0,
	IWARP_TERM_LAYER_DDP = 0x1,
	IWARP_TERM_LAYER_LLP = 0x2, /* MPA */
};

/* RDMAP error types (layer 0). */
enum iwarp_rdmap_etype {
	IWARP_RDMAP_ETYPE_LOCAL_CATASTROPHIC = 0x0,
	IWARP_RDMAP_ETYPE_REMOTE_PROTECTION = 0x1,
	IWARP_RDMAP_ETYPE_REMOTE_OPERATION = 0x2,
};

/* RDMAP error codes (layer 0, etype 1 or 2). */
enum iwarp_rdmap_ecode {
	IWARP_RDMAP_ECODE_INVALID_STAG = 0x00,
	IWARP_RDMAP_ECODE_BASE_BOUNDS = 0x01,
	IWARP_RDMAP_ECODE_ACCESS_RIGHTS = 0x02,
	IWARP_RDMAP_ECODE_STAG_NOT_ASSOC = 0x03,
	IWARP_RDMAP_ECODE_TO_WRAP = 0x04,
	IWARP_RDMAP_ECODE_INVALID_VERSION = 0x05,
	IWARP_RDMAP_ECODE_UNEXPECTED_OPCODE = 0x06,
	IWARP_RDMAP_ECODE_CATASTROPHIC_STREAM = 0x07,
	IWARP_RDMAP_ECODE_CATASTROPHIC_GLOBAL = 0x08,
	IWARP_RDMAP_ECODE_CANT_INVALIDATE = 0x09,
	IWARP_RDMAP_ECODE_UNSPECIFIED = 0xff,
};

/* DDP error types (layer 1). */
enum iwarp_ddp_etype {
	IWARP_DDP_ETYPE_CATASTROPHIC = 0x0,
	IWARP_DDP_ETYPE_TAGGED_BUFFER = 0x1,
	IWARP_DDP_ETYPE_UNTAGGED_BUFFER = 0x2,
	IWARP_DDP_ETYPE_RSVD_LLP = 0x3,
};

/* DDP tagged buffer error codes (layer 1, etype 1). */
enum iwarp_ddp_tagged_ecode {
	IWARP_DDP_ECODE_T_INVALID_STAG = 0x00,
	IWARP_DDP_ECODE_T_BASE_BOUNDS = 0x01,
	IWARP_DDP_ECODE_T_STAG_NOT_ASSOC = 0x02,
	IWARP_DDP_ECODE_T_TO_WRAP = 0x03,
	IWARP_DDP_ECODE_T_INVALID_VERSION = 0x04,
};

/* DDP untagged buffer error codes (layer 1, etype 2). */
enum iwarp_ddp_untagged_ecode {
	IWARP_DDP_ECODE_UT_INVALID_QN = 0x01,
	IWARP_DDP_ECODE_UT_INVALID_MSN_NO_BUF = 0x02,
	IWARP_DDP_ECODE_UT_INVALID_MSN_RANGE = 0x03,
	IWARP_DDP_ECODE_UT_INVALID_MO = 0x04,
	IWARP_DDP_ECODE_UT_MSG_TOO_LONG = 0x05,
	IWARP_DDP_ECODE_UT_INVALID_VERSION = 0x06,
};

/* LLP (MPA) error type and codes (layer 2, etype 0). */
enum iwarp_llp_etype {
	IWARP_LLP_ETYPE_MPA = 0x0,
};

enum iwarp_llp_ecode {
	IWARP_LLP_ECODE_STREAM_LOST = 0x01,
	IWARP_LLP_ECODE_CRC = 0x02,
	IWARP_LLP_ECODE_MARKER_MISMATCH = 0x03,
	IWARP_LLP_ECODE_INVALID_REQ_REP = 0x04,
	IWARP_LLP_ECODE_LOCAL_CATASTROPHIC = 0x05,   /* RFC 6581 */
	IWARP_LLP_ECODE_INSUFFICIENT_IRD = 0x06,     /* RFC 6581 */
	IWARP_LLP_ECODE_NO_MATCHING_RTR = 0x07,      /* RFC 6581 */
};

/* A TERMINATE cause: which layer detected what. */
struct iwarp_term_cause {
	uint8_t layer; /* enum iwarp_term_layer */
	uint8_t etype;
	uint8_t ecode;
};

/*
 * The TERMINATE cause the RFCs assign to library error |err|.
 * Returns 0 and fills |cause|, or -EINVAL when |err| is no protocol error.
 */
IWARP_EXPORT int iwarp_error_to_term(int err, struct iwarp_term_cause *cause);

/* Text for a TERMINATE cause, e.g. "LLP/MPA: CRC error". Never NULL. */
IWARP_EXPORT const char *iwarp_term_strerror(uint8_t layer, uint8_t etype, uint8_t ecode);

#ifdef __cplusplus
}
#endif

#endif /* IWARP_IWARP_H */
