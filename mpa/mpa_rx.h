/*
 * mpa/mpa_rx.h: resumable MPA FPDU deframer (RFC 5044 §4-6), one per
 * connection direction.
 *
 * The deframer is driven by stream octets, however TCP splits them:
 *
 *   GET_LEN -> GET_HDR -> GET_PAYLOAD -> GET_PAD -> GET_CRC -> GET_LEN ...
 *
 * Markers are located by stream position alone (every 512th octet from
 * position 0, RFC 5044 §5), stripped wherever they fall (before the length
 * field, inside any field, between pad and CRC), fed to the CRC and
 * validated: Reserved must be 0 and FPDUPTR must equal the octets from the
 * FPDU's first octet to the marker (for an FPDU that starts with a marker,
 * also accepted: that minus 4; docs/interop-notes.md §11). The CRC restarts
 * at each FPDU and covers everything but the CRC field (markers included).
 *
 * Two feeding modes, freely alternating:
 *
 * (a) bulk: mpa_rx_process() consumes from a receive buffer and returns
 *     one event per call; loop until MPA_RX_NEED_MORE:
 *
 *       while (len > 0) {
 *               n = mpa_rx_process(rx, buf, len, &ev);
 *               if (n < 0) -> TERMINATE with iwarp_error_to_term(n)
 *               buf += n; len -= n;
 *               switch (ev.type) { HEADER: ..., PAYLOAD: place ...,
 *                                  FPDU_DONE: deliver ..., NEED_MORE: }
 *       }
 *
 * (b) direct placement: after a HEADER event (state GET_PAYLOAD),
 *     mpa_rx_payload_iov() lays out the next stream octets so that a recv
 *     puts payload straight into |dst| and marker octets into scratch
 *     inside |rx|; mpa_rx_commit() then accounts for what the recv filled.
 *
 * Only FPDU_DONE means the CRC matched: the ULP may place payload earlier
 * but must not complete or deliver a message before it. Errors are sticky:
 * every later call returns the same code.
 */
#ifndef IWARP_MPA_MPA_RX_H
#define IWARP_MPA_MPA_RX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "mpa/mpa_marker.h"

/* Most ULP header octets gathered contiguously (DDP/RDMAP need <= 46). */
#define MPA_RX_HDR_MAX 128u

/*
 * The ULP's header length: given the first (up to) 2 ULPDU octets
 * |ulpdu_first2| (zero-filled when the ULPDU is shorter) and the
 * ULPDU_Length, how many ULPDU octets form its header (DDP: 14 tagged,
 * 18 untagged, 46 for an RDMA Read Request). The deframer gathers
 * max(2, that), clamped to the ULPDU length and MPA_RX_HDR_MAX.
 */
typedef size_t (*mpa_rx_hdr_len_fn)(void *ulp, const uint8_t *ulpdu_first2,
				    uint16_t ulpdu_len);

/* Receive states (one FPDU). */
enum mpa_rx_state {
	MPA_RX_GET_LEN,	    /* ULPDU_Length, 2 octets */
	MPA_RX_GET_HDR,	    /* ULP header octets, gathered into rx->hdr */
	MPA_RX_GET_PAYLOAD, /* rest of the ULPDU */
	MPA_RX_GET_PAD,	    /* 0-3 pad octets */
	MPA_RX_GET_CRC,	    /* 4 CRC octets */
};

/* What mpa_rx_process() stopped for. */
enum mpa_rx_event_type {
	MPA_RX_NEED_MORE, /* all input consumed, no event */
	MPA_RX_HEADER,	  /* ulpdu_len + hdr/hdr_len are valid */
	MPA_RX_PAYLOAD,	  /* data/data_len/data_off: a chunk of payload */
	MPA_RX_FPDU_DONE, /* trailer consumed and CRC verified */
};

/* An event of mpa_rx_process(). */
struct mpa_rx_event {
	enum mpa_rx_event_type type;
	uint16_t ulpdu_len;  /* HEADER, PAYLOAD, FPDU_DONE: ULPDU_Length */
	const uint8_t *hdr;  /* HEADER: header octets (inside rx, valid until
				the next call that consumes octets) */
	size_t hdr_len;	     /* HEADER: header octets; payload follows */
	const uint8_t *data; /* PAYLOAD: points into the input buffer */
	size_t data_len;     /* PAYLOAD: octets (never markers), >= 1 */
	size_t data_off;     /* PAYLOAD: offset in the payload, i.e. the
				ULPDU offset is hdr_len + data_off */
};

/* Configuration of mpa_rx_init(). */
struct mpa_rx_cfg {
	bool markers;	    /* markers negotiated for this direction */
	bool crc;	    /* CRC negotiated; else the field is ignored */
	uint16_t max_ulpdu; /* ULPDU_Length limit; 0 means 65535 */
	uint64_t start_pos; /* stream position of the first octet fed:
			       0 (RFC 5044 §5) except in tests */
	mpa_rx_hdr_len_fn hdr_len; /* NULL: no header, all ULPDU is payload */
	void *ulp;		   /* passed to hdr_len */
};

/* Per-direction receive state. Read-only for callers except via calls. */
struct mpa_rx {
	/* configuration */
	bool markers;
	bool crc_on;
	uint16_t max_ulpdu;
	mpa_rx_hdr_len_fn hdr_len_fn;
	void *ulp;

	/* stream */
	uint64_t pos;	     /* stream position of the next octet */
	uint64_t fpdu_start; /* stream position of the current FPDU's first
				octet (valid while in_fpdu or after DONE) */
	int err;	     /* sticky error, 0 if none */

	/* current FPDU */
	enum mpa_rx_state state;
	bool in_fpdu;	  /* first octet of the current FPDU seen */
	bool lead_marker; /* the current FPDU starts with a marker */
	uint32_t crc;	  /* running CRC-32C, un-finalised */
	uint16_t ulpdu_len;
	size_t got;	 /* octets of the current unit received */
	size_t hdr_need; /* header octets to gather (GET_HDR) */
	bool hdr_known;	 /* hdr_need was decided */
	size_t pay_len;	 /* payload octets (ULPDU minus header) */
	size_t pay_got;	 /* payload octets received */
	size_t pad_len;
	uint8_t len_buf[MPA_LEN_FIELD];
	uint8_t crc_buf[MPA_CRC_LEN];
	uint8_t mk[MPA_MARKER_LEN]; /* marker being gathered */
	uint8_t mk_got;		    /* its octets received */
	uint8_t hdr[MPA_RX_HDR_MAX];

	/* direct placement plan (mpa_rx_payload_iov -> mpa_rx_commit) */
	bool dp_valid;
	uint8_t *dp_dst;
	size_t dp_total; /* stream octets the plan covers */
	uint8_t dp_marker[MPA_MAX_FPDU_MARKERS][MPA_MARKER_LEN];
};

/*
 * Start a direction from |cfg|.
 * Returns 0, or -EINVAL if markers are on and cfg->start_pos points inside
 * a marker.
 */
int mpa_rx_init(struct mpa_rx *rx, const struct mpa_rx_cfg *cfg);

/*
 * Bulk mode: consume octets from |in| (|len| octets) up to the next event,
 * described in |*ev|. Returns the octets consumed (|len| exactly when
 * ev->type is MPA_RX_NEED_MORE), or a negative error:
 * IWARP_ERR_MPA_ULPDU_LENGTH (ULPDU_Length above the limit),
 * IWARP_ERR_MPA_MARKER (Reserved != 0 or FPDUPTR mismatch, LLP 0x03),
 * IWARP_ERR_MPA_CRC (CRC mismatch, LLP 0x02).
 */
ssize_t mpa_rx_process(struct mpa_rx *rx, const uint8_t *in, size_t len,
		       struct mpa_rx_event *ev);

/*
 * Direct placement: iovecs (at most |iov_cap|) that cover the next stream
 * octets so that up to min(|dst_len|, payload left in this FPDU) payload
 * octets land at |dst| in order, and the marker octets in between (or a
 * rest of a marker begun earlier) land in scratch inside |rx|. The layout
 * ends with a payload octet. Valid until the next call on |rx|.
 * Returns the iovec count (>= 1), 0 when the deframer is not inside a
 * payload (no payload left in this FPDU or |dst_len| 0), -ENOSPC when
 * |iov_cap| is 0, or the sticky error.
 */
int mpa_rx_payload_iov(struct mpa_rx *rx, void *dst, size_t dst_len,
		       struct iovec *iov, size_t iov_cap);

/*
 * Direct placement: the first |n| octets of the last mpa_rx_payload_iov()
 * layout were filled. Runs the CRC over them (payload in dst and markers),
 * validates completed markers and advances the state; the layout is used
 * up (ask for a new one for the rest).
 * Returns the payload octets placed at dst (>= 0; n minus marker octets),
 * -EINVAL if |n| exceeds the layout (or there is none and n > 0),
 * IWARP_ERR_MPA_MARKER, or the sticky error.
 */
ssize_t mpa_rx_commit(struct mpa_rx *rx, size_t n);

/* Stream position of the next octet to be received (diagnostics). */
static inline uint64_t mpa_rx_stream_pos(const struct mpa_rx *rx)
{
	return rx->pos;
}

/*
 * Stream position of the current (or, between FPDUs, the last) FPDU's first
 * octet, its leading marker if it has one (diagnostics).
 */
static inline uint64_t mpa_rx_fpdu_start(const struct mpa_rx *rx)
{
	return rx->fpdu_start;
}

/* Current state (diagnostics, tests). */
static inline enum mpa_rx_state mpa_rx_get_state(const struct mpa_rx *rx)
{
	return rx->state;
}

#endif /* IWARP_MPA_MPA_RX_H */
