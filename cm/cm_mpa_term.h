/*
 * cm/cm_mpa_term.h: the TERMINATEs of the MPA connection setup and the
 * responder's check of the RFC 6581 RTR, as sans-I/O additions to the
 * cm_mpa state machine (cm/cm_mpa.h).
 *
 * Initiator: once a Reply arrived whose negotiation failed, the stream is
 *   in FPDU mode from our side (RFC 5044 §7.1), so the failure is reported
 *   with a TERMINATE of layer LLP, etype MPA (RFC 5044 §8, RFC 6581 §6)
 *   before the FIN, as siw does (docs/interop-notes.md §1.2): 0x06
 *   insufficient IRD, 0x07 no matching RTR, 0x04 invalid Reply for the other
 *   negotiation errors (mpa_neg_error_llp_ecode). Nothing is sent for an R=1
 *   Reply (the peer refused: RFC 5044 §7.1 just closes), nor for input that is
 *   not a well-formed MPA frame (a wrong Key octet, Rev > 2, PD_Length
 *   > 512, enhanced without IRD/ORD): such a peer does not speak our MPA,
 *   its framing flags (C, M) are unknown and so is where FPDU mode starts.
 * Responder in RFC 6581 P2P mode: the first FPDU must be the zero-length
 *   message of the RTR type our Reply chose (RFC 6581 §7); anything else
 *   is answered with TERMINATE LLP/MPA 0x07 (no matching RTR option),
 *   except a Terminate, which is never answered (RFC 5040 §4.8).
 *
 * The TERMINATE is a bare one (RFC 5040 §4.8, docs/interop-notes.md §6.6):
 * untagged DDP on QN 2, MSN 1, MO 0, L=1, RDMAP opcode 7, Hdrct 0; 22 octets of
 * ULPDU, framed as the first FPDU of our direction (RFC 5044 §4-6: a
 * marker at stream position 0 when the peer asked for markers, CRC-32C
 * when CRC is on, else a zero CRC field): 28 octets, 32 with the marker.
 * It is appended to the cm_mpa TX buffer (after anything still unsent);
 * the caller sends it, then closes orderly.
 *
 * No I/O, no clock, no allocation.
 */
#ifndef IWARP_CM_CM_MPA_TERM_H
#define IWARP_CM_CM_MPA_TERM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cm/cm_mpa.h"

/* Longest TERMINATE FPDU framed here: marker + 2 + 22 + CRC. */
#define CM_TERM_FPDU_MAX 32

/*
 * Frames a bare TERMINATE, layer LLP (2), etype MPA (0), error code
 * |ecode|, as the first FPDU of a direction (stream position 0) into |out|
 * of |cap| octets: CRC-32C when |crc| (else a zero CRC field), a leading
 * marker when |markers| (the peer's M bit, RFC 5044 §5.1).
 * Returns the FPDU length (28, or 32 with the marker), -ENOSPC when |cap|
 * is too small, or -EINVAL when |ecode| is not an LLP/MPA code (0x01-0x07,
 * rdmap_term_cause_valid).
 */
int cm_term_llp_encode(uint8_t *out, size_t cap, uint8_t ecode, bool crc,
		       bool markers);

/*
 * Appends the TERMINATE of cm_term_llp_encode(|ecode|, |crc|, |markers|)
 * to |m|'s TX buffer (cm_mpa_tx_peek offers it after anything unsent).
 * Returns the FPDU length, -ENOSPC when it does not fit behind the unsent
 * octets, or -EINVAL for a bad |ecode|.
 */
int cm_mpa_term_queue(struct cm_mpa *m, uint8_t ecode, bool crc, bool markers);

/*
 * Initiator whose Reply failed (state FAILED): queues the TERMINATE the
 * failure calls for (see the top of this file): only when the whole Reply
 * arrived and decodes as an MPA frame with R=0 and m->err has an LLP code
 * (mpa_neg_error_llp_ecode). Framing per RFC 5044 §7.1: CRC when either
 * frame has C=1 (the Reply's C, or ours), a leading marker when the
 * Reply's M asks for markers.
 * Returns the error code queued (0x04, 0x06 or 0x07), 0 when no TERMINATE
 * is due (wrong role or state, R=1, timeout, not a well-formed frame), or
 * -ENOSPC.
 */
int cm_mpa_reply_term(struct cm_mpa *m);

/* cm_mpa_rtr_check: the first FPDU is a Terminate (not answered). */
#define CM_MPA_RTR_PEER_TERM 2

/*
 * Responder in RFC 6581 P2P mode, negotiated (res.p2p, res.rtr set),
 * Reply sent: judges the first FPDU in the carry (cm_mpa_carry), after the
 * 4-octet marker that starts the stream when markers come toward us
 * (res.markers_rx, RFC 5044 §5.1). It must be the zero-length message of
 * res.rtr (RFC 6581 §7, mpa_rtr_msg_get):
 *   Write: tagged, L=1, opcode 0 (RDMA Write), ULPDU_Length 14 (no
 *     payload); any STag/TO: a zero-length Write accesses no memory
 *     (RFC 5040 §4.3) and some peers send STag 0
 *     (docs/interop-notes.md §6.7);
 *   Read: untagged, L=1, opcode 1 (Read Request), QN 1, ULPDU_Length 46,
 *     RDMA Read Message Size 0;
 *   Send: untagged, L=1, opcode 3 (Send), QN 0, ULPDU_Length 18.
 * Versions, MSN, MO and the CRC are left to the datapath (their own RFC
 * 5041/5044 codes) after hand-over. Decides as soon as the octets that
 * differ have arrived (any TCP segmentation).
 * Returns CM_MPA_NEED_MORE, CM_MPA_DONE (the RTR's whole FPDU is in the
 * carry: hand over), CM_MPA_RTR_PEER_TERM (an untagged opcode 7: the peer
 * terminated, do not answer), IWARP_ERR_MPA_RTR (anything else: send
 * TERMINATE LLP/MPA 0x07) or -EINVAL (no RTR was negotiated).
 */
int cm_mpa_rtr_check(const struct cm_mpa *m);

#endif /* IWARP_CM_CM_MPA_TERM_H */
