/*
 * mpa/mpa_marker.h: MPA FPDU size and marker arithmetic (RFC 5044 §4-6).
 *
 * An FPDU is ULPDU_Length(16) | ULPDU | PAD(0-3) | CRC(32); its "content"
 * (everything but markers) is 2 + L + pad + 4 octets, a multiple of 4
 * (RFC 5044 §4.1, pad = (4 - (2 + L) % 4) % 4).
 *
 * Markers (RFC 5044 §5, docs/interop-notes.md §6.3/§11) are 4 octets,
 * Reserved(16)=0 | FPDUPTR(16), at every 512th octet of one direction's TCP
 * stream. "Stream position" here counts the octets of one direction from
 * position 0 = the first octet of the first FPDU of full operation (where
 * the first marker sits), so markers occupy [k*512, k*512 + 4) for k >= 0.
 * A marker whose first octet falls where an FPDU begins belongs to that
 * FPDU (it precedes the ULPDU_Length field, FPDUPTR 0); a marker is never
 * the last thing in an FPDU: one right after a CRC leads the next FPDU.
 * Markers are not counted in ULPDU_Length but are covered by the CRC.
 *
 * Everything here is pure arithmetic on stream positions. A position must
 * not point inside a marker (pos % 512 in 1..3) where an FPDU starts.
 */
#ifndef IWARP_MPA_MPA_MARKER_H
#define IWARP_MPA_MPA_MARKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MPA_MARKER_INTERVAL 512u   /* RFC 5044 §5: every 512th stream octet */
#define MPA_MARKER_LEN	    4u	   /* Reserved(16) | FPDUPTR(16) */
#define MPA_LEN_FIELD	    2u	   /* ULPDU_Length */
#define MPA_CRC_LEN	    4u	   /* CRC-32C, present even when CRC is off */
#define MPA_MAX_ULPDU	    65535u /* 16-bit ULPDU_Length */

/*
 * Largest number of markers inside one FPDU: content 2 + 65535 + 3 + 4 =
 * 65544 octets, 508 content octets between two markers, plus a leading
 * marker: ceil(65544 / 508) = 130.
 */
#define MPA_MAX_FPDU_MARKERS 130u

/* Pad octets after a ULPDU of |ulpdu_len| octets (RFC 5044 §4.1). */
static inline size_t mpa_pad_len(size_t ulpdu_len)
{
	return (4u - (MPA_LEN_FIELD + ulpdu_len) % 4u) % 4u;
}

/*
 * FPDU octets without markers: length field + ULPDU + pad + CRC
 * (2 + L + pad + 4, always a multiple of 4).
 */
static inline size_t mpa_fpdu_content_len(size_t ulpdu_len)
{
	return MPA_LEN_FIELD + ulpdu_len + mpa_pad_len(ulpdu_len) + MPA_CRC_LEN;
}

/* True when stream position |pos| is the first octet of a marker. */
static inline bool mpa_marker_at(uint64_t pos)
{
	return pos % MPA_MARKER_INTERVAL == 0;
}

/*
 * Number of markers whose first octet lies in the stream run
 * [|pos|, |pos| + |n|).
 */
uint64_t mpa_markers_in(uint64_t pos, uint64_t n);

/*
 * Number of marker octets in the stream run [|pos|, |pos| + |n|), counting
 * markers cut by either end of the run partially.
 */
uint64_t mpa_marker_octets_in(uint64_t pos, uint64_t n);

/*
 * Number of markers inside the FPDU with a ULPDU of |ulpdu_len| octets that
 * starts at stream position |pos| (its leading marker included); 0 when
 * |markers| is false. At most MPA_MAX_FPDU_MARKERS for ulpdu_len <= 65535.
 */
size_t mpa_fpdu_markers(uint64_t pos, size_t ulpdu_len, bool markers);

/*
 * Octets on the wire of the FPDU with a ULPDU of |ulpdu_len| octets that
 * starts at stream position |pos|: mpa_fpdu_content_len() + 4 per marker
 * inside it.
 */
size_t mpa_fpdu_wire_len(uint64_t pos, size_t ulpdu_len, bool markers);

/*
 * Exact, position-dependent maximum ULPDU: the largest L <= 65535 whose
 * FPDU, starting at stream position |pos|, takes at most |fpdu_budget|
 * octets on the wire (e.g. the TCP MSS). The result always gives pad 0
 * unless capped at 65535.
 * Returns L >= 0, or -EINVAL when not even an empty ULPDU fits.
 */
int mpa_max_ulpdu(uint64_t pos, size_t fpdu_budget, bool markers);

/*
 * RFC 5044 position-independent MULPDU for an effective MSS |emss|:
 * with markers EMSS - (6 + 4 * ceil(EMSS / 512) + EMSS mod 4), without
 * EMSS - 6 - EMSS mod 4 (so 2 + MULPDU stays 4-aligned and the FPDU fits).
 * Capped at 65535; 0 when |emss| is too small for that formula.
 */
size_t mpa_mulpdu(size_t emss, bool markers);

#endif /* IWARP_MPA_MPA_MARKER_H */
