/*
 * cm/cm_mpa.h: the MPA connection setup of one connection, as a sans-I/O
 * state machine (RFC 5044 §7.1, RFC 6581 §5-§9).
 *
 * The caller owns the socket and the clock: it asks where received bytes go
 * (cm_mpa_rx_space), reports how many arrived (cm_mpa_rx_done), sends what
 * cm_mpa_tx_peek offers (cm_mpa_tx_done), and calls cm_mpa_timeout with the
 * current time when cm_mpa_deadline passes. Frame decoding and negotiation
 * are mpa/mpa_negotiate.h; this file adds the byte-stream handling (any TCP
 * segmentation, one byte at a time included), the roles' states, deadlines
 * and the responder's accept/reject.
 *
 * Initiator: cm_mpa_init(INITIATOR) + cm_mpa_start(ULP private data) puts
 *   the Request in the TX buffer and arms the Reply deadline; the Reply
 *   completes with CM_MPA_DONE (negotiated), IWARP_ERR_MPA_REJECTED (R=1,
 *   the peer's private data in cm_mpa_peer_pdata) or another error.
 * Responder: cm_mpa_init(RESPONDER) arms the Request deadline; a complete,
 *   acceptable Request gives CM_MPA_DONE (state REQ_RCVD); the ULP then calls
 *   cm_mpa_accept or cm_mpa_reject, which put the Reply in the TX buffer.
 *   A Request the negotiation refuses with a Reply (RFC 6581 RTR/IRD, too
 *   much private data, enhanced without IRD/ORD) leaves an R=1 Reply in the
 *   TX buffer (state FAILED); one refused without a Reply (bad key, rev > 2,
 *   R in a Request) leaves nothing: close the stream.
 *
 * Bytes received after the peer's frame are the datapath's (the first FPDU
 * or RTR): cm_mpa_carry returns them. RX continues to append there after
 * completion until the buffer is full (the caller normally stops receiving).
 *
 * No I/O, no clock, no allocation.
 */
#ifndef IWARP_CM_CM_MPA_H
#define IWARP_CM_CM_MPA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mpa/mpa_negotiate.h"
#include "mpa/mpa_rr.h"

/* Receive room beyond the largest frame: bytes of the first FPDU. */
#define CM_MPA_RX_SLACK 512
#define CM_MPA_RX_CAP	(MPA_RR_FRAME_MAX + CM_MPA_RX_SLACK)

/* Returned by cm_mpa_rx_done / cm_mpa_feed. */
#define CM_MPA_NEED_MORE 0
#define CM_MPA_DONE	 1

enum cm_mpa_role {
	CM_MPA_INITIATOR = 0,
	CM_MPA_RESPONDER = 1,
};

enum cm_mpa_state {
	CM_MPA_S_IDLE = 0,    /* initiator before cm_mpa_start */
	CM_MPA_S_WAIT_REP,    /* initiator: Request queued/sent, want Reply */
	CM_MPA_S_WAIT_REQ,    /* responder: want the Request */
	CM_MPA_S_REQ_RCVD,    /* responder: Request accepted by negotiation,
				 the ULP decides (accept / reject) */
	CM_MPA_S_ESTABLISHED, /* negotiated; initiator: Reply processed;
				 responder: accepting Reply queued */
	CM_MPA_S_REJECTED,    /* initiator: R=1 Reply; responder: the ULP
				 rejected (R=1 Reply queued) */
	CM_MPA_S_FAILED,      /* protocol error or timeout (see err) */
};

struct cm_mpa {
	enum cm_mpa_role role;
	enum cm_mpa_state state;
	int err; /* why FAILED/REJECTED, else 0 */
	struct mpa_neg_params params;
	struct mpa_neg_result res;  /* valid from DONE on */
	struct mpa_neg_reply reply; /* responder's Reply template */
	uint64_t deadline_ms;	    /* 0 = none */
	size_t frame_len;	    /* peer frame length once complete */
	size_t rx_len;
	size_t tx_len, tx_off;
	uint8_t rx[CM_MPA_RX_CAP];
	uint8_t tx[MPA_RR_FRAME_MAX];
	uint8_t sink[64]; /* the CM's closing connection: input discarded */
};

/*
 * Initializes |m| for |role| with local parameters |p| (copied; checked by
 * mpa_neg_params_check). A responder's Request deadline is |now_ms| +
 * |timeout_ms| (|timeout_ms| 0 = no deadline). Returns 0 or -EINVAL.
 */
int cm_mpa_init(struct cm_mpa *m, enum cm_mpa_role role,
		const struct mpa_neg_params *p, uint64_t now_ms,
		uint32_t timeout_ms);

/*
 * Initiator: queues the MPA Request with ULP private data |pd| (|len|
 * octets) and arms the Reply deadline |now_ms| + |timeout_ms| (0 = none).
 * Returns 0, -EINVAL (wrong role/state, too much private data for 512 or
 * params.max_pd octets in total).
 */
int cm_mpa_start(struct cm_mpa *m, const uint8_t *pd, size_t len,
		 uint64_t now_ms, uint32_t timeout_ms);

/*
 * Where the next received bytes go: sets *buf and returns the room (0 when
 * the buffer is full or the state takes no input: FAILED, REJECTED, IDLE).
 */
size_t cm_mpa_rx_space(struct cm_mpa *m, uint8_t **buf);

/*
 * |n| bytes were written at the last cm_mpa_rx_space. Returns
 * CM_MPA_NEED_MORE, CM_MPA_DONE (the peer's frame completed with this call:
 * negotiated for the initiator, REQ_RCVD for the responder), or a negative
 * error (state FAILED or REJECTED; the same error again for later calls):
 * IWARP_ERR_MPA_REJECTED (initiator, R=1), the errors of
 * mpa_neg_initiator_process / mpa_neg_responder_process, or -EINVAL when
 * |n| exceeds the room. After DONE, more bytes just extend the carry.
 */
int cm_mpa_rx_done(struct cm_mpa *m, size_t n);

/* Copies |len| bytes in through rx_space/rx_done (tests, prefilled data).
 * Same returns as cm_mpa_rx_done; -ENOSPC when the buffer is full. */
int cm_mpa_feed(struct cm_mpa *m, const uint8_t *buf, size_t len);

/*
 * Responder in REQ_RCVD: queues the accepting Reply with ULP private data
 * |pd| (|len| octets). |ird|/|ord| (the ULP's responder_resources /
 * initiator_depth) become the Reply's IRD/ORD (RFC 6581 §5), clamped to
 * MPA_NEG_IRD_ORD_MAX, the ORD also to the peer's IRD, and raised to 1
 * where the chosen RTR needs it; a negative value keeps the negotiated one.
 * Without the enhanced header nothing is exchanged and the values are
 * taken as given (clamped). Updates res.ird/res.ord. State ESTABLISHED.
 * Returns 0 or -EINVAL (state, private data too long).
 */
int cm_mpa_accept(struct cm_mpa *m, const uint8_t *pd, size_t len, int ird,
		  int ord);

/*
 * Responder in REQ_RCVD: queues a Reply with R=1 (RFC 5044 §7.1) and ULP
 * private data |pd| (|len| octets); the caller closes after sending it.
 * State REJECTED, err IWARP_ERR_MPA_REJECTED. Returns 0 or -EINVAL.
 */
int cm_mpa_reject(struct cm_mpa *m, const uint8_t *pd, size_t len);

/* Bytes queued to send (sets *buf); 0 when everything was sent. */
size_t cm_mpa_tx_peek(const struct cm_mpa *m, const uint8_t **buf);

/* |n| queued bytes were sent (clamped to what is queued). */
void cm_mpa_tx_done(struct cm_mpa *m, size_t n);

/* The deadline in ms (same clock as the |now_ms| given), or 0 for none. */
uint64_t cm_mpa_deadline(const struct cm_mpa *m);

/*
 * Checks the deadline at |now_ms|: when it has passed in a waiting state
 * (WAIT_REP, WAIT_REQ) the state becomes FAILED with -ETIMEDOUT, returned.
 * Returns 0 otherwise.
 */
int cm_mpa_timeout(struct cm_mpa *m, uint64_t now_ms);

/* The peer's ULP private data (IRD/ORD header excluded) once its frame
 * decoded (DONE, or REJECTED on the initiator); *len 0 otherwise. */
const uint8_t *cm_mpa_peer_pdata(const struct cm_mpa *m, size_t *len);

/* Bytes received after the peer's frame (the datapath's), *len 0 if none. */
const uint8_t *cm_mpa_carry(const struct cm_mpa *m, size_t *len);

#endif /* IWARP_CM_CM_MPA_H */
