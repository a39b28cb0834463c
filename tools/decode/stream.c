/*
 * tools/decode/stream.c: per-direction TCP reassembly (see stream.h).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "decoder.h"
#include "stream.h"
#include "util/mem.h"

/* A held segment: |len| octets at stream offset |off|. */
struct dec_ooo {
	struct dec_ooo *next;
	uint64_t off;
	size_t len;
	uint8_t data[];
};

void dec_stream_init(struct dec_stream *s)
{
	memset(s, 0, sizeof(*s));
}

void dec_stream_release(struct dec_stream *s)
{
	struct dec_ooo *o = s->ooo, *n;

	while (o) {
		n = o->next;
		iw_free(o);
		o = n;
	}
	s->ooo = NULL;
	s->ooo_bytes = 0;
}

/*
 * Maps |seq| to a stream offset near |s->next| (sequence numbers wrap at
 * 2^32, RFC 9293 §3.4). Returns a signed offset: negative means before the
 * start of the stream.
 */
static int64_t seq_to_off(const struct dec_stream *s, uint32_t seq)
{
	uint32_t rel = seq - s->base;
	int32_t delta = (int32_t)(rel - (uint32_t)s->next);

	return (int64_t)s->next + delta;
}

/* Delivers held segments that have become contiguous. */
static void drain(struct dec_stream *s, dec_stream_deliver_fn fn, void *ctx)
{
	struct dec_ooo *o;

	while ((o = s->ooo) && o->off <= s->next) {
		uint64_t end = o->off + o->len;

		if (end > s->next) {
			size_t skip = (size_t)(s->next - o->off);

			s->retrans_bytes += skip;
			if (fn)
				fn(ctx, s->next, o->data + skip, o->len - skip);
			s->next = end;
		} else {
			s->retrans_bytes += o->len;
		}
		s->ooo = o->next;
		s->ooo_bytes -= o->len;
		iw_free(o);
	}
}

static int hold(struct dec_stream *s, uint64_t off, const uint8_t *data,
		size_t len)
{
	struct dec_ooo **pp = &s->ooo, *o;

	if (s->ooo_bytes + len > DEC_STREAM_MAX_OOO) {
		s->overflow = true;
		return -ENOMEM;
	}
	o = iw_malloc(sizeof(*o) + len);
	if (!o) {
		s->overflow = true;
		return -ENOMEM;
	}
	o->off = off;
	o->len = len;
	memcpy(o->data, data, len);
	while (*pp && (*pp)->off <= off)
		pp = &(*pp)->next;
	o->next = *pp;
	*pp = o;
	s->ooo_bytes += len;
	s->ooo_segments++;
	return 0;
}

int dec_stream_segment(struct dec_stream *s, uint32_t seq, uint8_t flags,
		       const uint8_t *data, size_t len, size_t wire_len,
		       dec_stream_deliver_fn fn, void *ctx)
{
	int64_t soff;
	uint64_t off, end;

	if (wire_len < len)
		wire_len = len;
	if (flags & DEC_TCP_SYN) {
		if (!s->started || !s->syn) {
			/* SYN occupies one sequence number before the data. */
			if (!s->started || s->next == 0) {
				s->base = seq + 1;
				s->started = true;
			}
			s->syn = true;
		}
		seq++;
	}
	if (!s->started) {
		/* Capture began mid-connection: this segment is offset 0. */
		s->base = seq;
		s->started = true;
	}
	if (flags & DEC_TCP_RST)
		s->rst = true;
	soff = seq_to_off(s, seq);
	if (soff + (int64_t)wire_len <= 0 && wire_len > 0) {
		s->retrans_bytes += wire_len;
		return 0;
	}
	if (soff < 0) {
		/* only octets at offset >= 0 count; a control segment (RST,
		 * FIN, ACK) without data may lie far before the start, e.g.
		 * an RST with sequence number 0: nothing of it is data */
		size_t cut = (size_t)-soff;

		if (cut >= wire_len) {
			len = 0;
			wire_len = 0;
		} else {
			if (cut >= len) {
				len = 0;
			} else {
				data += cut;
				len -= cut;
			}
			wire_len -= cut;
		}
		soff = 0;
	}
	off = (uint64_t)soff;
	if (flags & DEC_TCP_FIN) {
		s->fin = true;
		s->fin_off = off + wire_len;
	}
	/* The FIN itself takes a sequence number but carries no data. */
	if (wire_len > 0 && off + wire_len > s->end_off)
		s->end_off = off + wire_len;
	s->truncated_bytes += wire_len - len;
	if (len == 0)
		return 0;
	end = off + len;
	if (end <= s->next) {
		s->retrans_bytes += len;
		return 0;
	}
	if (off < s->next) {
		size_t skip = (size_t)(s->next - off);

		s->retrans_bytes += skip;
		data += skip;
		len -= skip;
		off = s->next;
	}
	if (off > s->next)
		return hold(s, off, data, len);
	if (fn)
		fn(ctx, off, data, len);
	s->next = end;
	drain(s, fn, ctx);
	return 0;
}

bool dec_stream_gap(const struct dec_stream *s, uint64_t *off, uint64_t *len,
		    uint64_t *after)
{
	const struct dec_ooo *o;
	uint64_t held = 0;

	if (s->ooo) {
		for (o = s->ooo; o; o = o->next)
			held += o->len;
		*off = s->next;
		*len = s->ooo->off - s->next;
		*after = held;
		return true;
	}
	if (s->end_off > s->next) {
		*off = s->next;
		*len = s->end_off - s->next;
		*after = 0;
		return true;
	}
	return false;
}
