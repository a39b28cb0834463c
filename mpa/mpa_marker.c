/*
 * mpa/mpa_marker.c: MPA FPDU size and marker arithmetic (RFC 5044 §4-6).
 * See mpa_marker.h for the stream-position conventions.
 */
#include "config.h"

#include <errno.h>

#include "mpa/mpa_marker.h"

/* Content octets between two markers (RFC 5044 §5). */
#define MPA_MARKER_GAP (MPA_MARKER_INTERVAL - MPA_MARKER_LEN)

static uint64_t div_up(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

uint64_t mpa_markers_in(uint64_t pos, uint64_t n)
{
	/* multiples of 512 in [pos, pos + n) */
	return div_up(pos + n, MPA_MARKER_INTERVAL) -
	       div_up(pos, MPA_MARKER_INTERVAL);
}

/* Marker octets in the stream run [0, |x|). */
static uint64_t marker_octets_before(uint64_t x)
{
	uint64_t rem = x % MPA_MARKER_INTERVAL;

	return x / MPA_MARKER_INTERVAL * MPA_MARKER_LEN +
	       (rem < MPA_MARKER_LEN ? rem : MPA_MARKER_LEN);
}

uint64_t mpa_marker_octets_in(uint64_t pos, uint64_t n)
{
	return marker_octets_before(pos + n) - marker_octets_before(pos);
}

size_t mpa_fpdu_markers(uint64_t pos, size_t ulpdu_len, bool markers)
{
	uint64_t content = mpa_fpdu_content_len(ulpdu_len);
	uint64_t first;

	if (!markers)
		return 0;
	/*
	 * Content octets that fit before the next marker position; a marker
	 * right at |pos| leads this FPDU (RFC 5044 §5), and a marker right
	 * after the last content octet leads the next one.
	 */
	first = div_up(pos, MPA_MARKER_INTERVAL) * MPA_MARKER_INTERVAL - pos;
	if (content <= first)
		return 0;
	return (size_t)div_up(content - first, MPA_MARKER_GAP);
}

size_t mpa_fpdu_wire_len(uint64_t pos, size_t ulpdu_len, bool markers)
{
	return mpa_fpdu_content_len(ulpdu_len) +
	       MPA_MARKER_LEN * mpa_fpdu_markers(pos, ulpdu_len, markers);
}

int mpa_max_ulpdu(uint64_t pos, size_t fpdu_budget, bool markers)
{
	uint64_t slots = fpdu_budget;
	uint64_t content;

	/*
	 * Every non-marker octet of the window [pos, pos + budget) can carry
	 * FPDU content; an FPDU of C content octets ends at its C-th content
	 * octet, so it fits iff C <= slots. Content is a multiple of 4 and
	 * 2 + L + pad + 4 <= C  <=>  L <= C - 6 (RFC 5044 §4.1).
	 */
	if (markers)
		slots -= mpa_marker_octets_in(pos, fpdu_budget);
	content = slots & ~(uint64_t)3;
	if (content < mpa_fpdu_content_len(0))
		return -EINVAL;
	content -= MPA_LEN_FIELD + MPA_CRC_LEN;
	return (int)(content > MPA_MAX_ULPDU ? MPA_MAX_ULPDU : content);
}

size_t mpa_mulpdu(size_t emss, bool markers)
{
	/* RFC 5044 §4 / docs/interop-notes.md §6.3 */
	size_t over = MPA_LEN_FIELD + MPA_CRC_LEN + emss % 4u;

	if (markers)
		over += MPA_MARKER_LEN *
			(size_t)div_up(emss, MPA_MARKER_INTERVAL);
	if (emss < over)
		return 0;
	return emss - over > MPA_MAX_ULPDU ? MPA_MAX_ULPDU : emss - over;
}
