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
	/* input ended before the unit it describes (stream callers: need more)
	 */
	IWARP_ERR_TRUNCATED = -1000,

	/* MPA Request/Reply (RFC 5044 §7.1, RFC 6581 §5) */
	IWARP_ERR_MPA_KEY =
		-1010, /* neither "MPA ID Req Frame" nor "...Rep..." */
	IWARP_ERR_MPA_REV = -1011,	 /* Rev > 2 */
	IWARP_ERR_MPA_PD_LENGTH = -1012, /* PD_Length > 512 */
	IWARP_ERR_MPA_ENHANCED_PD =
		-1013, /* enhanced (rev 2, 0x10) with PD_Length < 4 */
	IWARP_ERR_MPA_RESERVED = -1014, /* reserved flag bits set */
	IWARP_ERR_MPA_REJECTED = -1015, /* R bit set in the Reply */
	IWARP_ERR_MPA_MARKERS =
		-1016, /* markers required but refused (or vice versa) */
	IWARP_ERR_MPA_CRC_REQUIRED =
		-1017,		   /* we require CRC, the peer will not */
	IWARP_ERR_MPA_IRD = -1018, /* insufficient IRD resources (RFC 6581) */
	IWARP_ERR_MPA_RTR = -1019, /* no matching RTR option (RFC 6581) */
	IWARP_ERR_MPA_REQ_REP = -1020, /* otherwise invalid Req/Rep frame */

	/* MPA FPDU (RFC 5044 §4-6) */
	IWARP_ERR_MPA_CRC = -1030,    /* CRC mismatch */
	IWARP_ERR_MPA_MARKER = -1031, /* marker and ULPDU_Length mismatch */
	IWARP_ERR_MPA_ULPDU_LENGTH = -1032, /* ULPDU_Length beyond the limit */
	IWARP_ERR_MPA_STREAM_LOST = -1033,  /* TCP stream lost / closed */

	/* DDP (RFC 5041 §7) */
	IWARP_ERR_DDP_TAGGED_VERSION = -1040,
	IWARP_ERR_DDP_UNTAGGED_VERSION = -1041,
	IWARP_ERR_DDP_STAG = -1042,	   /* invalid STag */
	IWARP_ERR_DDP_BOUNDS = -1043,	   /* base or bounds violation */
	IWARP_ERR_DDP_STAG_STREAM = -1044, /* STag not associated with stream */
	IWARP_ERR_DDP_TO_WRAP = -1045,	   /* TO wrap */
	IWARP_ERR_DDP_QN = -1046,	   /* invalid QN */
	IWARP_ERR_DDP_MSN_NO_BUFFER =
		-1047,			 /* invalid MSN: no buffer available */
	IWARP_ERR_DDP_MSN_RANGE = -1048, /* invalid MSN: MSN range not valid */
	IWARP_ERR_DDP_MO = -1049,	 /* invalid MO */
	IWARP_ERR_DDP_MSG_TOO_LONG =
		-1050, /* message too long for the receive buffer */
	IWARP_ERR_DDP_RESERVED =
		-1051, /* reserved bits set in the DDP header */

	/* RDMAP (RFC 5040 §7) */
	IWARP_ERR_RDMAP_VERSION = -1060,
	IWARP_ERR_RDMAP_OPCODE =
		-1061, /* unexpected (reserved or out-of-place) opcode */
	IWARP_ERR_RDMAP_STAG = -1062,	/* invalid STag (remote protection) */
	IWARP_ERR_RDMAP_BOUNDS = -1063, /* base or bounds violation */
	IWARP_ERR_RDMAP_ACCESS = -1064, /* access rights violation */
	IWARP_ERR_RDMAP_STAG_STREAM =
		-1065, /* STag not associated with RDMAP stream */
	IWARP_ERR_RDMAP_TO_WRAP = -1066,
	IWARP_ERR_RDMAP_IRD =
		-1067, /* Read Request beyond IRD (catastrophic, stream) */
	IWARP_ERR_RDMAP_INVALIDATE = -1068, /* STag cannot be invalidated */
	IWARP_ERR_RDMAP_TERMINATE = -1069,  /* malformed Terminate message */
	IWARP_ERR_RDMAP_RESPONSE =
		-1070, /* Read Response without a matching Read Request */
	/* RFC 7306 (RDMAP extensions) */
	IWARP_ERR_RDMAP_ATOMIC_ALIGN =
		-1071, /* Atomic Request TO not 8-octet aligned */
	IWARP_ERR_RDMAP_ATOMIC_OP =
		-1072, /* unsupported Atomic Operation Code */
	/* Send with Invalidate naming an STag that may not be invalidated
	 * remotely (an MR, a type 1 window, an unknown STag): RDMAP remote
	 * operation error 0x09 (IWARP_ERR_RDMAP_INVALIDATE is the remote
	 * protection variant, for an STag of another PD). */
	IWARP_ERR_RDMAP_INVALIDATE_OP = -1073,
};

/* Text for a negative return value of this library (-errno or enum
 * iwarp_error). */
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
	IWARP_LLP_ECODE_LOCAL_CATASTROPHIC = 0x05, /* RFC 6581 */
	IWARP_LLP_ECODE_INSUFFICIENT_IRD = 0x06,   /* RFC 6581 */
	IWARP_LLP_ECODE_NO_MATCHING_RTR = 0x07,	   /* RFC 6581 */
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
IWARP_EXPORT const char *iwarp_term_strerror(uint8_t layer, uint8_t etype,
					     uint8_t ecode);

/* ========================================================================
 * Verbs (mirrors libibverbs: ibv_X -> iwarp_X). See iwarp.7.
 * ====================================================================== */
#include <sys/socket.h>

struct iwarp_context;
struct iwarp_comp_channel;
struct iwarp_cq;
struct iwarp_srq;
struct iwarp_qp;
struct iwarp_cm_id;

/* CRC32c policy for MPA (RFC 5044 §7.1 C flag). */
enum iwarp_crc_policy {
	IWARP_CRC_OFF = 0, /* do not ask; follow the peer (CRC on if it asks) */
	IWARP_CRC_REQUEST = 1, /* ask for CRC */
	IWARP_CRC_REQUIRE = 2, /* ask, and refuse a peer that does not set C */
};

/* RFC 6581 peer-to-peer ready-to-receive message. */
enum iwarp_p2p_rtr {
	IWARP_P2P_NONE = 0, /* client-server model: the initiator sends first */
	IWARP_P2P_WRITE = 1, /* zero-length RDMA Write RTR */
	IWARP_P2P_READ = 2,  /* zero-length RDMA Read RTR */
	IWARP_P2P_SEND = 3,  /* zero-length Send RTR */
	IWARP_P2P_AUTO = 4,  /* default: as initiator (MPA rev 2) offer Write
			      * and Read RTR, the responder picks (siw picks
			      * Write); a rev 1 exchange has no RTR */
};

/* How the progress engine waits for work. */
enum iwarp_progress_mode {
	IWARP_PROGRESS_ADAPTIVE = 0, /* progress thread: busy-poll a short
					adaptive window, then sleep (at once
					while it works most of its time) */
	IWARP_PROGRESS_LATENCY =
		1, /* progress thread: always busy-poll (one core) */
	IWARP_PROGRESS_CPU = 2,	   /* progress thread: never busy-poll */
	IWARP_PROGRESS_INLINE = 3, /* no thread: iwarp_poll_cq / iwarp_progress
				      drive the engine */
};

/* Attributes of a context; iwarp_context_attr_init() fills the defaults,
 * then the environment (IWARP_PROGRESS, IWARP_CRC, IWARP_MPA_REV,
 * IWARP_MARKERS, IWARP_P2P, IWARP_FPDU_MAX, IWARP_CC,
 * IWARP_MPA_REPLY_GRACE_MS, IWARP_RESPONDER_TX_WAIT_MS) overrides them. */
struct iwarp_context_attr {
	int mpa_rev;		   /* 1 or 2 (RFC 6581 enhanced); default 2 */
	enum iwarp_crc_policy crc; /* default IWARP_CRC_OFF */
	int markers; /* ask the peer to insert MPA markers toward us */
	enum iwarp_p2p_rtr p2p; /* default IWARP_P2P_AUTO */
	uint32_t fpdu_max;	/* max FPDU octets; 0 = the TCP MSS */
	enum iwarp_progress_mode progress; /* default IWARP_PROGRESS_ADAPTIVE */
	uint32_t busy_poll_us; /* upper bound of the busy-poll window; 0 =
				  default */
	const char *congestion_control; /* TCP_CONGESTION for our sockets; NULL
					   = system default */
	uint32_t mpa_req_timeout_ms;	/* responder waits this long for the MPA
					   Request (5000) */
	uint32_t mpa_rep_timeout_ms;	/* initiator waits this long for the MPA
					   Reply (10000) */
	uint32_t max_private_data;     /* largest private data accepted (512) */
	uint32_t mpa_reply_grace_ms;   /* initiator: pause between a good MPA
					* Reply   and its first FPDU (10;
					* 0..1000),   so a   responder that
					* switches   its socket   to   RDMA mode
					* after sending   the Reply   (Linux   siw)
					* is ready for it;   0 = none */
	uint32_t responder_tx_wait_ms; /* responder: when the initiator has sent
					* no FPDU this long after the connection
					* was established, transmit anyway (what
					* Linux siw always does; perftest's
					* ib_write_lat server writes first);
					* default 1000; 0 = wait for it
					* however long, as RFC 5044 §7.1
					* requires; 1..60000. Either way work
					* held back that long raises
					* IWARP_EVENT_QP_TX_HELD (iwarp(7)) */
	/* RFC 7306 RDMAP extensions (Immediate Data, atomics): offered in
	 * the MPA exchange and used on a connection only when both sides
	 * asked (iwarp(7)); default 0, env IWARP_RDMAP_EXT=1 */
	int rdmap_ext;
};

IWARP_EXPORT void iwarp_context_attr_init(struct iwarp_context_attr *attr);

/* Opens a context (one progress engine). |attr| NULL = defaults + environment.
 * NULL with errno on failure (ENOSYS: no io_uring on this kernel). */
IWARP_EXPORT struct iwarp_context *
iwarp_open_context(const struct iwarp_context_attr *attr);
IWARP_EXPORT int iwarp_close_context(struct iwarp_context *ctx);
/* The attributes a context runs with (after environment overrides). */
IWARP_EXPORT int iwarp_query_context(struct iwarp_context *ctx,
				     struct iwarp_context_attr *attr);
/* Drives the engine once (IWARP_PROGRESS_INLINE); returns events handled. */
IWARP_EXPORT int iwarp_progress(struct iwarp_context *ctx);

enum iwarp_transport_type { IWARP_TRANSPORT_IWARP = 1 };

/* Atomicity of remote atomics (ibverbs IBV_ATOMIC_*): GLOB = atomic with
 * respect to every atomic of this library on the same memory, from any
 * QP or context, and to the CPU's own atomic instructions. */
enum iwarp_atomic_cap {
	IWARP_ATOMIC_NONE = 0,
	IWARP_ATOMIC_HCA = 1,
	IWARP_ATOMIC_GLOB = 2,
};
enum iwarp_node_type { IWARP_NODE_RNIC = 4 };

struct iwarp_device_attr {
	char fw_ver[64];
	uint64_t node_guid;
	uint64_t max_mr_size;
	uint64_t page_size_cap;
	uint32_t vendor_id;
	uint32_t vendor_part_id;
	uint32_t hw_ver;
	int max_qp;
	int max_qp_wr;
	int max_sge;
	int max_sge_rd; /* 1: an iWARP Read sink has one SGE */
	int max_cq;
	int max_cqe;
	int max_mr;
	int max_pd;
	int max_qp_rd_atom;	 /* IRD */
	int max_qp_init_rd_atom; /* ORD */
	int max_srq;
	int max_srq_wr;
	int max_srq_sge;
	int max_inline_data;
	int max_private_data;
	enum iwarp_transport_type transport_type;
	enum iwarp_node_type node_type;
	/* RFC 7306 atomics: IWARP_ATOMIC_GLOB when the context was opened
	 * with rdmap_ext, else IWARP_ATOMIC_NONE (usable per connection only
	 * when the peer negotiated the extensions too) */
	enum iwarp_atomic_cap atomic_cap;
	enum iwarp_atomic_cap masked_atomic_cap;
};

IWARP_EXPORT int iwarp_query_device(struct iwarp_context *ctx,
				    struct iwarp_device_attr *attr);

/* ---- protection domains and memory regions (RFC 5040 §8, RFC 5042) ---- */
struct iwarp_pd {
	struct iwarp_context *context;
	uint32_t handle;
};

IWARP_EXPORT struct iwarp_pd *iwarp_alloc_pd(struct iwarp_context *ctx);
IWARP_EXPORT int iwarp_dealloc_pd(struct iwarp_pd *pd);

enum iwarp_access_flags {
	IWARP_ACCESS_LOCAL_WRITE = 1,
	IWARP_ACCESS_REMOTE_WRITE = 2,
	IWARP_ACCESS_REMOTE_READ = 4,
	IWARP_ACCESS_REMOTE_ATOMIC = 8, /* RFC 7306 Atomic Requests */
	IWARP_ACCESS_MW_BIND = 16, /* memory windows may be bound to the MR */
};

/* lkey == rkey == STag: 24-bit index << 8 | 8-bit key (new key on every
 * registration). */
struct iwarp_mr {
	struct iwarp_context *context;
	struct iwarp_pd *pd;
	void *addr;
	size_t length;
	uint32_t handle;
	uint32_t lkey;
	uint32_t rkey;
};

IWARP_EXPORT struct iwarp_mr *iwarp_reg_mr(struct iwarp_pd *pd, void *addr,
					   size_t length, int access);
IWARP_EXPORT int iwarp_dereg_mr(struct iwarp_mr *mr);

/* ---- memory windows (RFC 5040 §2.1 / RFC 5042 §5: STags of a window
 * onto part of an MR; as ibv_mw). See iwarp_alloc_mw.3 ---- */
enum iwarp_mw_type {
	IWARP_MW_TYPE_1 =
		1, /* bound by iwarp_bind_mw; never remotely invalidated */
	IWARP_MW_TYPE_2 =
		2, /* bound by an IWARP_WR_BIND_MW WR; Send with Invalidate */
};

struct iwarp_mw {
	struct iwarp_context *context;
	struct iwarp_pd *pd;
	uint32_t rkey; /* STag: 24-bit index << 8 | 8-bit key */
	uint32_t handle;
	enum iwarp_mw_type type;
};

/* What a bind covers: [addr, addr + length) of |mr| with remote rights
 * |mw_access_flags| (IWARP_ACCESS_REMOTE_WRITE / _REMOTE_READ). */
struct iwarp_mw_bind_info {
	struct iwarp_mr *mr;
	uint64_t addr;
	uint64_t length; /* 0: unbind */
	unsigned int mw_access_flags;
};

/* A type 1 bind (iwarp_bind_mw). */
struct iwarp_mw_bind {
	uint64_t wr_id;
	unsigned int send_flags; /* IWARP_SEND_SIGNALED, IWARP_SEND_FENCE */
	struct iwarp_mw_bind_info bind_info;
};

IWARP_EXPORT struct iwarp_mw *iwarp_alloc_mw(struct iwarp_pd *pd,
					     enum iwarp_mw_type type);
IWARP_EXPORT int iwarp_dealloc_mw(struct iwarp_mw *mw);

/* ---- completion queues and channels ---- */
struct iwarp_comp_channel {
	struct iwarp_context *context;
	int fd; /* readable when a CQ event is pending (poll/epoll) */
	int refcnt;
};

struct iwarp_cq {
	struct iwarp_context *context;
	struct iwarp_comp_channel *channel;
	void *cq_context;
	int cqe;
};

enum iwarp_wc_status {
	IWARP_WC_SUCCESS = 0,
	IWARP_WC_LOC_LEN_ERR = 1,
	IWARP_WC_LOC_QP_OP_ERR = 2,
	IWARP_WC_LOC_PROT_ERR = 4,
	IWARP_WC_WR_FLUSH_ERR = 5,
	IWARP_WC_BAD_RESP_ERR = 7,
	IWARP_WC_LOC_ACCESS_ERR = 8,
	IWARP_WC_REM_INV_REQ_ERR = 9,
	IWARP_WC_REM_ACCESS_ERR = 10,
	IWARP_WC_REM_OP_ERR = 11,
	IWARP_WC_RETRY_EXC_ERR = 12,
	IWARP_WC_RNR_RETRY_EXC_ERR = 13,
	IWARP_WC_FATAL_ERR = 19,
	IWARP_WC_GENERAL_ERR = 21,
	IWARP_WC_MW_BIND_ERR = 6, /* a bind or local invalidate failed */
};

IWARP_EXPORT const char *iwarp_wc_status_str(enum iwarp_wc_status status);

enum iwarp_wc_opcode {
	IWARP_WC_SEND = 0,
	IWARP_WC_RDMA_WRITE = 1,
	IWARP_WC_RDMA_READ = 2,
	/* RFC 7306 */
	IWARP_WC_COMP_SWAP = 3,
	IWARP_WC_FETCH_ADD = 4,
	IWARP_WC_MASKED_COMP_SWAP = 9,
	IWARP_WC_MASKED_FETCH_ADD = 10,
	IWARP_WC_RECV = 128,
	IWARP_WC_RECV_RDMA_WITH_IMM = 129, /* RFC 7306 */
	IWARP_WC_BIND_MW = 5,
	IWARP_WC_LOCAL_INV = 6,
};

enum iwarp_wc_flags {
	IWARP_WC_WITH_IMM =
		1 << 1, /* imm_data is valid (RFC 7306 Immediate Data) */
	IWARP_WC_WITH_INV = 1 << 3, /* the Send carried an Invalidate STag
				       (invalidated_rkey) */
	IWARP_WC_WITH_SE = 1
			   << 7, /* the Send was a Send with Solicited Event */
};

struct iwarp_wc {
	uint64_t wr_id;
	enum iwarp_wc_status status;
	enum iwarp_wc_opcode opcode;
	uint32_t vendor_err; /* TERMINATE cause: layer << 16 | etype << 8 |
				ecode, or 0 */
	uint32_t byte_len;
	uint32_t invalidated_rkey;
	uint32_t qp_num;
	uint32_t src_qp;
	unsigned int wc_flags;
	uint32_t imm_data; /* network order, as sent (IWARP_WC_WITH_IMM) */
};

IWARP_EXPORT struct iwarp_comp_channel *
iwarp_create_comp_channel(struct iwarp_context *ctx);
IWARP_EXPORT int iwarp_destroy_comp_channel(struct iwarp_comp_channel *channel);
IWARP_EXPORT struct iwarp_cq *
iwarp_create_cq(struct iwarp_context *ctx, int cqe, void *cq_context,
		struct iwarp_comp_channel *channel, int comp_vector);
IWARP_EXPORT int iwarp_resize_cq(struct iwarp_cq *cq, int cqe);
IWARP_EXPORT int iwarp_destroy_cq(struct iwarp_cq *cq);
/* Returns the number of completions written to |wc| (0..num_entries) or -errno.
 */
IWARP_EXPORT int iwarp_poll_cq(struct iwarp_cq *cq, int num_entries,
			       struct iwarp_wc *wc);
IWARP_EXPORT int iwarp_req_notify_cq(struct iwarp_cq *cq, int solicited_only);
IWARP_EXPORT int iwarp_get_cq_event(struct iwarp_comp_channel *channel,
				    struct iwarp_cq **cq, void **cq_context);
IWARP_EXPORT void iwarp_ack_cq_events(struct iwarp_cq *cq,
				      unsigned int nevents);

/* ---- shared receive queues ---- */
struct iwarp_srq {
	struct iwarp_context *context;
	void *srq_context;
	struct iwarp_pd *pd;
	uint32_t handle;
};

struct iwarp_srq_attr {
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_limit; /* IWARP_EVENT_SRQ_LIMIT_REACHED when fewer WRs
			       remain; 0 = off */
};

struct iwarp_srq_init_attr {
	void *srq_context;
	struct iwarp_srq_attr attr;
};

enum iwarp_srq_attr_mask {
	IWARP_SRQ_MAX_WR = 1 << 0,
	IWARP_SRQ_LIMIT = 1 << 1,
};

struct iwarp_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

struct iwarp_recv_wr {
	uint64_t wr_id;
	struct iwarp_recv_wr *next;
	struct iwarp_sge *sg_list;
	int num_sge;
};

IWARP_EXPORT struct iwarp_srq *
iwarp_create_srq(struct iwarp_pd *pd, struct iwarp_srq_init_attr *attr);
IWARP_EXPORT int iwarp_modify_srq(struct iwarp_srq *srq,
				  struct iwarp_srq_attr *attr, int attr_mask);
IWARP_EXPORT int iwarp_query_srq(struct iwarp_srq *srq,
				 struct iwarp_srq_attr *attr);
IWARP_EXPORT int iwarp_destroy_srq(struct iwarp_srq *srq);
IWARP_EXPORT int iwarp_post_srq_recv(struct iwarp_srq *srq,
				     struct iwarp_recv_wr *wr,
				     struct iwarp_recv_wr **bad_wr);

/* ---- queue pairs ---- */
enum iwarp_qp_type { IWARP_QPT_RC = 2 };

enum iwarp_qp_state {
	IWARP_QPS_RESET = 0,
	IWARP_QPS_INIT = 1,
	IWARP_QPS_RTR = 2,
	IWARP_QPS_RTS = 3,
	IWARP_QPS_SQD = 4,
	IWARP_QPS_SQE = 5,
	IWARP_QPS_ERR = 6,
};

struct iwarp_qp_cap {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
};

struct iwarp_qp_init_attr {
	void *qp_context;
	struct iwarp_cq *send_cq;
	struct iwarp_cq *recv_cq;
	struct iwarp_srq *srq;
	struct iwarp_qp_cap cap;
	enum iwarp_qp_type qp_type;
	int sq_sig_all;
};

struct iwarp_qp {
	struct iwarp_context *context;
	void *qp_context;
	struct iwarp_pd *pd;
	struct iwarp_cq *send_cq;
	struct iwarp_cq *recv_cq;
	struct iwarp_srq *srq;
	uint32_t handle;
	uint32_t qp_num;
	enum iwarp_qp_state state;
	enum iwarp_qp_type qp_type;
};

struct iwarp_qp_attr {
	enum iwarp_qp_state qp_state;
	enum iwarp_qp_state cur_qp_state;
	int qp_access_flags;
	struct iwarp_qp_cap cap;
	uint8_t max_rd_atomic;	    /* ORD */
	uint8_t max_dest_rd_atomic; /* IRD */
	uint8_t sq_draining;
};

enum iwarp_qp_attr_mask {
	IWARP_QP_STATE = 1 << 0,
	IWARP_QP_CUR_STATE = 1 << 1,
	IWARP_QP_ACCESS_FLAGS = 1 << 3,
	IWARP_QP_MAX_QP_RD_ATOMIC = 1 << 13,
	IWARP_QP_MAX_DEST_RD_ATOMIC = 1 << 17,
	IWARP_QP_CAP = 1 << 19,
};

enum iwarp_wr_opcode {
	IWARP_WR_RDMA_WRITE = 0,
	IWARP_WR_SEND = 2,
	IWARP_WR_RDMA_READ = 4,
	IWARP_WR_SEND_WITH_INV = 9,
	/* RFC 7306 (need the extensions negotiated, else EOPNOTSUPP) */
	IWARP_WR_RDMA_WRITE_WITH_IMM = 1,
	IWARP_WR_SEND_WITH_IMM = 3,
	IWARP_WR_ATOMIC_CMP_AND_SWP = 5,
	IWARP_WR_ATOMIC_FETCH_AND_ADD = 6,
	IWARP_WR_MASKED_ATOMIC_CMP_AND_SWP = 12,
	IWARP_WR_MASKED_ATOMIC_FETCH_AND_ADD = 13,
	IWARP_WR_LOCAL_INV = 7, /* invalidate_rkey: an MR or a type 2 window */
	IWARP_WR_BIND_MW = 8,	/* bind_mw: a type 2 window */
};

enum iwarp_send_flags {
	IWARP_SEND_FENCE = 1 << 0,
	IWARP_SEND_SIGNALED = 1 << 1,
	IWARP_SEND_SOLICITED = 1 << 2,
	IWARP_SEND_INLINE = 1 << 3,
};

struct iwarp_send_wr {
	uint64_t wr_id;
	struct iwarp_send_wr *next;
	struct iwarp_sge *sg_list;
	int num_sge;
	enum iwarp_wr_opcode opcode;
	unsigned int send_flags;
	union {
		uint32_t invalidate_rkey; /* IWARP_WR_SEND_WITH_INV */
		uint32_t imm_data;	  /* *_WITH_IMM: network order */
	};
	union {
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
		} rdma;
		/* IWARP_WR_*ATOMIC_*: 8-octet target at remote_addr (aligned),
		 * the original value lands in sg_list[0] (8 octets) */
		struct {
			uint64_t remote_addr;
			uint64_t compare_add; /* compare (CMP_AND_SWP) or add */
			uint64_t swap;
			uint32_t rkey;
			uint64_t compare_add_mask; /* MASKED_* only */
			uint64_t swap_mask;	   /* MASKED_* only */
		} atomic;
	} wr;
	struct {
		struct iwarp_mw *mw;
		uint32_t rkey; /* the window's new STag (same index, new key) */
		struct iwarp_mw_bind_info bind_info;
	} bind_mw; /* IWARP_WR_BIND_MW */
};

IWARP_EXPORT struct iwarp_qp *iwarp_create_qp(struct iwarp_pd *pd,
					      struct iwarp_qp_init_attr *attr);
IWARP_EXPORT int iwarp_modify_qp(struct iwarp_qp *qp,
				 struct iwarp_qp_attr *attr, int attr_mask);
IWARP_EXPORT int iwarp_query_qp(struct iwarp_qp *qp, struct iwarp_qp_attr *attr,
				int attr_mask,
				struct iwarp_qp_init_attr *init_attr);
IWARP_EXPORT int iwarp_destroy_qp(struct iwarp_qp *qp);
/* Return 0 or -errno (EINVAL bad WR, ENOMEM queue full, EINVAL/ENOTCONN
 * wrong QP state); *bad_wr = the first WR not posted. */
IWARP_EXPORT int iwarp_post_send(struct iwarp_qp *qp, struct iwarp_send_wr *wr,
				 struct iwarp_send_wr **bad_wr);
IWARP_EXPORT int iwarp_post_recv(struct iwarp_qp *qp, struct iwarp_recv_wr *wr,
				 struct iwarp_recv_wr **bad_wr);
/* Binds type 1 window |mw| through |qp|'s send queue (a WR completing with
 * IWARP_WC_BIND_MW); on success mw->rkey is the window's new STag. */
IWARP_EXPORT int iwarp_bind_mw(struct iwarp_qp *qp, struct iwarp_mw *mw,
			       const struct iwarp_mw_bind *mw_bind);
/* The next key of an STag (as ibv_inc_rkey): a type 2 bind's new rkey. */
static inline uint32_t iwarp_inc_rkey(uint32_t rkey)
{
	return (rkey & 0xffffff00u) | ((rkey + 1) & 0xffu);
}

/* ---- asynchronous events ---- */
enum iwarp_event_type {
	IWARP_EVENT_CQ_ERR = 0,
	IWARP_EVENT_QP_FATAL = 1,
	IWARP_EVENT_QP_REQ_ERR = 2,
	IWARP_EVENT_QP_ACCESS_ERR = 3,
	IWARP_EVENT_COMM_EST = 4,
	IWARP_EVENT_SQ_DRAINED = 5,
	IWARP_EVENT_QP_LAST_WQE_REACHED = 7,
	IWARP_EVENT_SRQ_LIMIT_REACHED = 12,
	IWARP_EVENT_SRQ_ERR = 13,
	/* libiwarp: a responder QP has work waiting because the initiator has
	 * sent no FPDU yet (RFC 5044 §7.1, no RFC 6581 RTR negotiated), for
	 * responder_tx_wait_ms (or 1 s when that is 0); at most once a QP */
	IWARP_EVENT_QP_TX_HELD = 32,
};

struct iwarp_async_event {
	union {
		struct iwarp_cq *cq;
		struct iwarp_qp *qp;
		struct iwarp_srq *srq;
	} element;
	enum iwarp_event_type event_type;
	struct iwarp_term_cause term; /* for QP events caused by a TERMINATE
					 (sent or received) */
	int term_received; /* 1: the peer sent the TERMINATE; 0: we did */
};

/* The context's async event fd (readable when an event is pending). */
IWARP_EXPORT int iwarp_async_fd(struct iwarp_context *ctx);
IWARP_EXPORT int iwarp_get_async_event(struct iwarp_context *ctx,
				       struct iwarp_async_event *event);
IWARP_EXPORT void iwarp_ack_async_event(struct iwarp_async_event *event);
IWARP_EXPORT const char *iwarp_event_type_str(enum iwarp_event_type type);

/* ========================================================================
 * Connection manager (mirrors librdmacm: rdma_X -> iwarp_cm_X).
 * ====================================================================== */
enum iwarp_port_space { IWARP_PS_TCP = 0x0106 };

enum iwarp_cm_event_type {
	IWARP_CM_EVENT_ADDR_RESOLVED = 0,
	IWARP_CM_EVENT_ADDR_ERROR = 1,
	IWARP_CM_EVENT_ROUTE_RESOLVED = 2,
	IWARP_CM_EVENT_ROUTE_ERROR = 3,
	IWARP_CM_EVENT_CONNECT_REQUEST = 4,
	IWARP_CM_EVENT_CONNECT_RESPONSE = 5,
	IWARP_CM_EVENT_CONNECT_ERROR = 6,
	IWARP_CM_EVENT_UNREACHABLE = 7,
	IWARP_CM_EVENT_REJECTED = 8,
	IWARP_CM_EVENT_ESTABLISHED = 9,
	IWARP_CM_EVENT_DISCONNECTED = 10,
	IWARP_CM_EVENT_DEVICE_REMOVAL = 11,
	IWARP_CM_EVENT_TIMEWAIT_EXIT = 15,
};

IWARP_EXPORT const char *iwarp_cm_event_str(enum iwarp_cm_event_type event);

struct iwarp_event_channel {
	int fd; /* readable when a CM event is pending */
};

struct iwarp_cm_id {
	struct iwarp_context *verbs; /* the context whose engine runs this id */
	struct iwarp_event_channel
		*channel; /* where its events go (iwarp_cm_migrate_id moves it)
			   */
	void *context;	  /* user context */
	struct iwarp_qp *qp;
	enum iwarp_port_space ps;
	struct sockaddr_storage src_addr;
	struct sockaddr_storage dst_addr;
};

struct iwarp_conn_param {
	const void *private_data;
	uint8_t private_data_len;
	uint8_t responder_resources; /* IRD */
	uint8_t initiator_depth;     /* ORD */
	uint8_t flow_control;
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t srq;
	uint32_t qp_num;
};

struct iwarp_cm_event {
	struct iwarp_cm_id *id;
	struct iwarp_cm_id *listen_id;
	enum iwarp_cm_event_type event;
	int status; /* 0 or -errno / enum iwarp_error (REJECTED:
		       IWARP_ERR_MPA_REJECTED...) */
	struct {
		struct iwarp_conn_param conn; /* private data of the peer's MPA
						 frame (IRD/ORD hidden) */
	} param;
};

/*
 * TLS 1.3 for the connections of a CM id (iwarp_cm_set_tls(3)): opt-in,
 * both ends must ask. Files are PEM; psk_file holds the external PSK in
 * hex. Grows through comp_mask: members after peer_name are read only when
 * a bit of comp_mask says the caller set them (no bit is defined yet: 0).
 */
struct iwarp_tls_attr {
	uint32_t comp_mask;
	int require_peer_cert; /* listener: refuse clients without a cert signed
				  by ca_file */
	const char *cert_file; /* our certificate (chain) */
	const char *key_file;  /* its private key */
	const char *ca_file;   /* CA(s) the peer's certificate must chain to */
	const char *psk_file;  /* external PSK, hex, 16..64 octets */
	const char *psk_identity; /* NULL: "iwarp" */
	const char *peer_name;	  /* initiator: DNS name or IP the server
				     certificate must carry */
};

IWARP_EXPORT struct iwarp_event_channel *iwarp_cm_create_event_channel(void);
IWARP_EXPORT void
iwarp_cm_destroy_event_channel(struct iwarp_event_channel *channel);
/* The new id uses |verbs| (NULL: the process-wide default context, opened on
 * first use with iwarp_context_attr_init() defaults). */
IWARP_EXPORT int iwarp_cm_create_id(struct iwarp_event_channel *channel,
				    struct iwarp_context *verbs,
				    struct iwarp_cm_id **id, void *context,
				    enum iwarp_port_space ps);
IWARP_EXPORT int iwarp_cm_destroy_id(struct iwarp_cm_id *id);
IWARP_EXPORT int iwarp_cm_bind_addr(struct iwarp_cm_id *id,
				    const struct sockaddr *addr);
IWARP_EXPORT int iwarp_cm_resolve_addr(struct iwarp_cm_id *id,
				       const struct sockaddr *src_addr,
				       const struct sockaddr *dst_addr,
				       int timeout_ms);
IWARP_EXPORT int iwarp_cm_resolve_route(struct iwarp_cm_id *id, int timeout_ms);
/* Name resolution helper (getaddrinfo, numeric or hostname, IPv4/IPv6). */
IWARP_EXPORT int iwarp_cm_getaddr(const char *host, uint16_t port,
				  struct sockaddr_storage *out);
IWARP_EXPORT int iwarp_cm_listen(struct iwarp_cm_id *id, int backlog);
/* Before connect/listen; NULL attr: plain TCP again. Credentials load now. */
IWARP_EXPORT int iwarp_cm_set_tls(struct iwarp_cm_id *id,
				  const struct iwarp_tls_attr *attr);
IWARP_EXPORT int iwarp_cm_create_qp(struct iwarp_cm_id *id, struct iwarp_pd *pd,
				    struct iwarp_qp_init_attr *attr);
IWARP_EXPORT void iwarp_cm_destroy_qp(struct iwarp_cm_id *id);
IWARP_EXPORT int iwarp_cm_connect(struct iwarp_cm_id *id,
				  const struct iwarp_conn_param *param);
IWARP_EXPORT int iwarp_cm_accept(struct iwarp_cm_id *id,
				 const struct iwarp_conn_param *param);
IWARP_EXPORT int iwarp_cm_reject(struct iwarp_cm_id *id,
				 const void *private_data,
				 uint8_t private_data_len);
IWARP_EXPORT int iwarp_cm_disconnect(struct iwarp_cm_id *id);
/* Blocks until an event is pending (unless the channel fd is O_NONBLOCK:
 * -EAGAIN). */
IWARP_EXPORT int iwarp_cm_get_event(struct iwarp_event_channel *channel,
				    struct iwarp_cm_event **event);
IWARP_EXPORT int iwarp_cm_ack_event(struct iwarp_cm_event *event);
/* Moves |id| (its future events and those queued) to |channel|; waits until
 * the events delivered for it on its current channel are acked. */
IWARP_EXPORT int iwarp_cm_migrate_id(struct iwarp_cm_id *id,
				     struct iwarp_event_channel *channel);

#ifdef __cplusplus
}
#endif

#endif /* IWARP_IWARP_H */
