/*
 * mpa/mpa_tx.h: MPA FPDU transmit framing (RFC 5044 §4-6).
 *
 * One struct mpa_tx per connection direction keeps the stream position the
 * markers are placed by. mpa_tx_frame() turns one ULPDU (the DDP segment,
 * given as iovecs: header scratch + user payload) into the iovecs of its
 * FPDU without copying the payload:
 *
 *   [marker] len(2) ULPDU... [marker] ...ULPDU pad CRC
 *
 * The length field, markers, pad and CRC live in a caller-provided
 * struct mpa_tx_scratch (one per FPDU, it must stay alive and unchanged
 * until the iovecs were sent; mpa_tx_frame_parts takes it in two parts). The
 * CRC is computed when framing, so the payload must not change between
 * mpa_tx_frame() and the send.
 *
 * Several FPDUs can be framed back to back into one iovec array (one
 * sendmsg for a batch): each call appends at |*iovcnt|.
 */
#ifndef IWARP_MPA_MPA_TX_H
#define IWARP_MPA_MPA_TX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "mpa/mpa_marker.h"

/* Per-direction transmit state. */
struct mpa_tx {
	uint64_t pos; /* stream position of the next octet (markers incl.) */
	bool markers; /* the peer asked for markers (M bit, RFC 5044 §7.1) */
	bool crc;     /* CRC in use (C bit); else the CRC field is 0 */
};

/*
 * The fixed octets of one FPDU the iovecs point into: trailer holds the pad
 * at [4 - pad, 4) and the CRC (little-endian, RFC 5044 §6 /
 * docs/interop-notes.md §6.3) at [4, 8), so pad and CRC go out as one
 * iovec unless a marker falls between; len is last, so a ULPDU header
 * placed right after the struct goes out in one iovec with it.
 */
struct mpa_tx_fixed {
	uint8_t trailer[4 + MPA_CRC_LEN];
	uint8_t len[MPA_LEN_FIELD];
};

/*
 * Per-FPDU scratch: the fixed octets and room for the most markers one
 * FPDU can hold (RFC 5044 §5). 530 octets; a direction without markers
 * needs only the struct mpa_tx_fixed (mpa_tx_frame_parts).
 */
struct mpa_tx_scratch {
	struct mpa_tx_fixed fixed;
	uint8_t marker[MPA_MAX_FPDU_MARKERS][MPA_MARKER_LEN];
};

/*
 * Upper bound of the iovecs one FPDU needs for a ULPDU of |n| iovecs:
 * len + pad + CRC + the ULPDU pieces, and each marker adds itself plus at
 * most one split of a piece. MPA_TX_IOV_MAX(n, MPA_MAX_FPDU_MARKERS) is the
 * position-independent worst case (n + 263); without markers n + 3.
 * mpa_tx_iov_bound() gives the bound for the next FPDU exactly.
 */
#define MPA_TX_IOV_MAX(n, nmarkers) ((n) + 3u + 2u * (nmarkers))

/*
 * Start a direction: |markers| and |crc| as negotiated, |start_pos| the
 * stream position of the first octet to be framed: 0 for the first FPDU
 * after the MPA Request/Reply (RFC 5044 §5); other values resume or build
 * test streams.
 * Returns 0, or -EINVAL if markers are on and |start_pos| points inside a
 * marker.
 */
int mpa_tx_init(struct mpa_tx *tx, bool markers, bool crc, uint64_t start_pos);

/*
 * Iovecs the next FPDU (at tx->pos) needs at most for a ULPDU of
 * |ulpdu_len| octets in |n| iovecs.
 */
size_t mpa_tx_iov_bound(const struct mpa_tx *tx, size_t ulpdu_len, size_t n);

/* Octets on the wire of the next FPDU for a ULPDU of |ulpdu_len| octets. */
size_t mpa_tx_wire_len(const struct mpa_tx *tx, size_t ulpdu_len);

/*
 * Largest ULPDU whose FPDU, starting at tx->pos, fits in |fpdu_budget|
 * octets on the wire (e.g. the MSS). Returns it, or -EINVAL when nothing
 * fits (see mpa_max_ulpdu).
 */
int mpa_tx_max_ulpdu(const struct mpa_tx *tx, size_t fpdu_budget);

/*
 * Frame one ULPDU given as |n| iovecs |ulpdu| (empty iovecs allowed) into
 * FPDU iovecs appended to iov[*iovcnt .. iov_cap), using |s| for the
 * length field, markers, pad and CRC. Markers (when on) are inserted at
 * every stream position k * 512 before an FPDU octet, with FPDUPTR =
 * marker position - FPDU start (a leading marker counts, so a later marker
 * in an FPDU that starts with one carries 512, not 508;
 * docs/interop-notes.md §11).
 * The CRC-32C covers every octet of the FPDU except the CRC field, in wire
 * order, markers included (RFC 5044 §6); with CRC off the field is 0.
 * On success advances tx->pos and *iovcnt.
 * Returns the FPDU's wire length (> 0); -EINVAL when the ULPDU exceeds
 * 65535 octets; -ENOSPC when the iovecs do not fit (then tx, *iovcnt and
 * iov[0 .. *iovcnt) are unchanged).
 */
int mpa_tx_frame(struct mpa_tx *tx, const struct iovec *ulpdu, size_t n,
		 struct mpa_tx_scratch *s, struct iovec *iov, size_t iov_cap,
		 size_t *iovcnt);

/*
 * mpa_tx_frame with the scratch in two parts: |fixed| for the length
 * field, pad and CRC, |marks| for MPA_MAX_FPDU_MARKERS markers; |marks|
 * may be NULL when tx has no markers (else -EINVAL). Lets a connection
 * without markers keep per-FPDU state small.
 */
int mpa_tx_frame_parts(struct mpa_tx *tx, const struct iovec *ulpdu, size_t n,
		       struct mpa_tx_fixed *fixed,
		       uint8_t (*marks)[MPA_MARKER_LEN], struct iovec *iov,
		       size_t iov_cap, size_t *iovcnt);

#endif /* IWARP_MPA_MPA_TX_H */
