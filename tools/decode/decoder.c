/*
 * tools/decode/decoder.c: connection table, segment dispatch and reporting
 * (see decoder.h).
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>

#include "conn.h"
#include "decoder.h"
#include "util/mem.h"

struct dec_decoder {
	struct dec_sink sink;
	struct dec_conn **conns; /* in order of appearance */
	size_t nconns, cap;
	uint64_t frame; /* frame being fed */
	unsigned errors, warnings;
	bool finished;
	bool terminate_is_error; /* a well-formed Terminate counts as an error
				  */
	/* findings raised while a unit is being built, shown after it */
	bool deferring;
	struct dec_finding deferred[DEC_MAX_DEFERRED];
	size_t ndeferred;
};

void dec_decoder_set_terminate_error(struct dec_decoder *d, bool on)
{
	d->terminate_is_error = on;
}

bool dec_decoder_terminate_error(const struct dec_decoder *d)
{
	return d->terminate_is_error;
}

const char *dec_dir_name(int dir)
{
	return dir == DEC_BA ? "B->A" : "A->B";
}

char *dec_endpoint_format(const struct dec_endpoint *ep, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (ep->family == 6) {
		inet_ntop(AF_INET6, ep->addr, a, sizeof(a));
		snprintf(buf, len, "[%s]:%u", a, ep->port);
	} else {
		inet_ntop(AF_INET, ep->addr, a, sizeof(a));
		snprintf(buf, len, "%s:%u", a, ep->port);
	}
	return buf;
}

uint64_t dec_current_frame(const struct dec_decoder *d)
{
	return d->frame;
}

struct dec_decoder *dec_decoder_new(const struct dec_sink *sink)
{
	struct dec_decoder *d = iw_calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	if (sink)
		d->sink = *sink;
	return d;
}

static void conn_free(struct dec_conn *c)
{
	int i;

	dec_follow_release(c);
	for (i = 0; i < 2; i++)
		dec_stream_release(&c->h[i].st);
	iw_free(c);
}

void dec_decoder_free(struct dec_decoder *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->nconns; i++)
		conn_free(d->conns[i]);
	iw_free(d->conns);
	iw_free(d);
}

static bool ep_eq(const struct dec_endpoint *a, const struct dec_endpoint *b)
{
	return a->family == b->family && a->port == b->port &&
	       memcmp(a->addr, b->addr, a->family == 6 ? 16 : 4) == 0;
}

static bool conn_closed(const struct dec_conn *c)
{
	return (c->h[0].st.fin && c->h[1].st.fin) || c->h[0].st.rst ||
	       c->h[1].st.rst;
}

static struct dec_conn *conn_new(struct dec_decoder *d,
				 const struct dec_seg *seg)
{
	struct dec_conn *c;
	int i;

	if (d->nconns == d->cap) {
		size_t ncap = d->cap ? d->cap * 2 : 16;
		struct dec_conn **n =
			iw_realloc(d->conns, ncap * sizeof(*d->conns));

		if (!n)
			return NULL;
		d->conns = n;
		d->cap = ncap;
	}
	c = iw_calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->d = d;
	c->id = (unsigned)d->nconns + 1;
	/* A is the SYN sender; a SYN+ACK first means we missed the SYN. */
	if ((seg->flags & (DEC_TCP_SYN | DEC_TCP_ACK)) ==
	    (DEC_TCP_SYN | DEC_TCP_ACK)) {
		c->ep[DEC_AB] = seg->dst;
		c->ep[DEC_BA] = seg->src;
	} else {
		c->ep[DEC_AB] = seg->src;
		c->ep[DEC_BA] = seg->dst;
	}
	c->initiator = -1;
	c->first_frame = seg->frame;
	for (i = 0; i < 2; i++) {
		dec_stream_init(&c->h[i].st);
		c->h[i].state = HALF_START;
	}
	d->conns[d->nconns++] = c;
	return c;
}

/* Finds the connection of |seg| (newest first) and its direction. */
static struct dec_conn *conn_find(struct dec_decoder *d,
				  const struct dec_seg *seg, int *dir)
{
	size_t i;

	for (i = d->nconns; i-- > 0;) {
		struct dec_conn *c = d->conns[i];

		if (ep_eq(&seg->src, &c->ep[DEC_AB]) &&
		    ep_eq(&seg->dst, &c->ep[DEC_BA]))
			*dir = DEC_AB;
		else if (ep_eq(&seg->src, &c->ep[DEC_BA]) &&
			 ep_eq(&seg->dst, &c->ep[DEC_AB]))
			*dir = DEC_BA;
		else
			continue;
		/* A new SYN on a closed 4-tuple starts a new connection. */
		if ((seg->flags & (DEC_TCP_SYN | DEC_TCP_ACK)) == DEC_TCP_SYN &&
		    conn_closed(c) &&
		    (!c->h[*dir].st.syn || c->h[*dir].st.base != seg->seq + 1))
			return NULL;
		return c;
	}
	return NULL;
}

struct deliver_ctx {
	struct dec_conn *c;
	int dir;
};

static void deliver(void *ctx, uint64_t off, const uint8_t *data, size_t len)
{
	struct deliver_ctx *dc = ctx;

	dec_follow_data(dc->c, dc->dir, off, data, len);
}

int dec_decoder_feed(struct dec_decoder *d, const struct dec_seg *seg)
{
	struct deliver_ctx dc;
	struct dec_conn *c;
	int dir = DEC_AB, rc;

	if (d->finished)
		return -EINVAL;
	d->frame = seg->frame;
	c = conn_find(d, seg, &dir);
	if (!c) {
		c = conn_new(d, seg);
		if (!c)
			return -ENOMEM;
		dir = ep_eq(&seg->src, &c->ep[DEC_AB]) ? DEC_AB : DEC_BA;
	}
	c->last_frame = seg->frame;
	if (seg->wire_len > 0)
		c->any_data = true;
	dc.c = c;
	dc.dir = dir;
	rc = dec_stream_segment(&c->h[dir].st, seg->seq, seg->flags,
				seg->payload, seg->len, seg->wire_len, deliver,
				&dc);
	if (rc < 0 && !c->h[dir].overflow_reported) {
		c->h[dir].overflow_reported = true;
		dec_report(c, dir, c->h[dir].st.next, DEC_ERROR, "overflow",
			   "more than %u MiB held behind a hole: data dropped",
			   DEC_STREAM_MAX_OOO >> 20);
	}
	return rc < 0 ? rc : 0;
}

int dec_decoder_feed_dir(struct dec_decoder *d, int dir, uint32_t seq,
			 uint8_t flags, const uint8_t *data, size_t len)
{
	static const uint8_t a[4] = {10, 0, 0, 1}, b[4] = {10, 0, 0, 2};
	struct dec_endpoint ea, eb;
	struct dec_seg seg;

	memset(&ea, 0, sizeof(ea));
	memset(&eb, 0, sizeof(eb));
	ea.family = 4;
	eb.family = 4;
	memcpy(ea.addr, a, 4);
	memcpy(eb.addr, b, 4);
	ea.port = 40000;
	eb.port = 4791;
	memset(&seg, 0, sizeof(seg));
	seg.src = dir == DEC_BA ? eb : ea;
	seg.dst = dir == DEC_BA ? ea : eb;
	seg.seq = seq;
	seg.flags = flags;
	seg.payload = data;
	seg.len = len;
	seg.wire_len = len;
	seg.frame = d->frame + 1;
	return dec_decoder_feed(d, &seg);
}

static void show_finding(struct dec_decoder *d, const struct dec_finding *f)
{
	if (d->deferring && d->ndeferred < DEC_MAX_DEFERRED) {
		d->deferred[d->ndeferred++] = *f;
		return;
	}
	if (d->sink.finding)
		d->sink.finding(d->sink.ctx, f);
}

static void emit_finding(struct dec_decoder *d, const struct dec_finding *f)
{
	if (f->severity == DEC_ERROR)
		d->errors++;
	else
		d->warnings++;
	show_finding(d, f);
}

void dec_unit_begin(struct dec_conn *c)
{
	c->d->deferring = true;
}

void dec_decoder_note(struct dec_decoder *d, enum dec_severity sev,
		      const char *what, uint64_t frame, const char *text)
{
	struct dec_finding f;

	memset(&f, 0, sizeof(f));
	f.dir = -1;
	f.off = UINT64_MAX;
	f.frame = frame;
	f.severity = sev;
	f.what = what;
	snprintf(f.text, sizeof(f.text), "%s", text);
	emit_finding(d, &f);
}

void dec_report(struct dec_conn *c, int dir, uint64_t off,
		enum dec_severity sev, const char *what, const char *fmt, ...)
{
	struct dec_finding f;
	va_list ap;

	memset(&f, 0, sizeof(f));
	f.conn = c->id;
	f.dir = dir;
	f.off = off;
	f.frame = c->d->frame;
	f.severity = sev;
	f.what = what;
	va_start(ap, fmt);
	vsnprintf(f.text, sizeof(f.text), fmt, ap);
	va_end(ap);
	if (sev == DEC_ERROR)
		c->errors++;
	else
		c->warnings++;
	if (dir == DEC_AB || dir == DEC_BA) {
		struct dec_half *h = &c->h[dir];

		if (sev == DEC_ERROR)
			h->errors++;
		else
			h->warnings++;
		if (++h->reported > DEC_MAX_REPORTED) {
			/* counted, not printed */
			if (sev == DEC_ERROR)
				c->d->errors++;
			else
				c->d->warnings++;
			return;
		}
		if (h->reported == DEC_MAX_REPORTED) {
			emit_finding(c->d, &f);
			snprintf(f.text, sizeof(f.text),
				 "further findings in this direction are "
				 "counted, not shown");
			f.severity = DEC_WARNING;
			f.what = "suppressed";
			show_finding(c->d, &f);
			return;
		}
	}
	emit_finding(c->d, &f);
}

void dec_emit_unit(struct dec_conn *c, struct dec_unit *u)
{
	struct dec_decoder *d = c->d;
	size_t i;

	u->conn = c->id;
	u->frame = d->frame;
	if (d->sink.unit)
		d->sink.unit(d->sink.ctx, u);
	d->deferring = false;
	for (i = 0; i < d->ndeferred; i++)
		if (d->sink.finding)
			d->sink.finding(d->sink.ctx, &d->deferred[i]);
	d->ndeferred = 0;
}

static void fill_info(const struct dec_conn *c, struct dec_conn_info *ci)
{
	int i;

	memset(ci, 0, sizeof(*ci));
	ci->conn = c->id;
	ci->a = c->ep[DEC_AB];
	ci->b = c->ep[DEC_BA];
	ci->kind = c->iwarp	 ? DEC_CONN_IWARP
		   : c->any_data ? DEC_CONN_NOT_IWARP
				 : DEC_CONN_NO_DATA;
	ci->first_frame = c->first_frame;
	ci->last_frame = c->last_frame;
	ci->have_req = c->have_req;
	ci->have_rep = c->have_rep;
	ci->rejected = c->rejected;
	ci->established = c->established;
	ci->initiator = c->initiator;
	if (c->initiator >= 0) {
		const struct dec_half *ih = &c->h[c->initiator];
		const struct dec_half *rh = &c->h[!c->initiator];

		if (ih->have_frame) {
			ci->req_flags =
				(uint8_t)((ih->frame.m ? 0x80 : 0) |
					  (ih->frame.c ? 0x40 : 0) |
					  (ih->frame.r ? 0x20 : 0) |
					  (ih->frame.enhanced ? 0x10 : 0) |
					  ih->frame.rsvd);
			ci->req_rev = ih->frame.rev;
			ci->req_ird = ih->frame.ird;
			ci->req_ord = ih->frame.ord;
		}
		if (rh->have_frame) {
			ci->rep_flags =
				(uint8_t)((rh->frame.m ? 0x80 : 0) |
					  (rh->frame.c ? 0x40 : 0) |
					  (rh->frame.r ? 0x20 : 0) |
					  (rh->frame.enhanced ? 0x10 : 0) |
					  rh->frame.rsvd);
			ci->rep_rev = rh->frame.rev;
			ci->rep_ird = rh->frame.ird;
			ci->rep_ord = rh->frame.ord;
		}
	}
	ci->enhanced = c->enhanced;
	ci->crc = c->crc;
	for (i = 0; i < 2; i++) {
		const struct dec_half *h = &c->h[i];
		struct dec_dir_info *di = &ci->dir[i];

		di->bytes = h->st.next;
		di->fpdus = h->nfpdus;
		memcpy(di->messages, h->messages, sizeof(di->messages));
		memcpy(di->payload, h->payload, sizeof(di->payload));
		di->retrans_bytes = h->st.retrans_bytes;
		di->ooo_segments = h->st.ooo_segments;
		di->syn = h->st.syn;
		di->fin = h->st.fin;
		di->rst = h->st.rst;
		di->crc = h->crc;
		di->markers = h->markers;
		di->errors = h->errors;
	}
	ci->errors = c->errors;
	ci->warnings = c->warnings;
	snprintf(ci->state, sizeof(ci->state), "%s", c->end_note);
}

void dec_decoder_finish(struct dec_decoder *d)
{
	struct dec_conn_info ci;
	size_t i;

	if (d->finished)
		return;
	d->finished = true;
	d->frame = 0;
	for (i = 0; i < d->nconns; i++) {
		d->frame = d->conns[i]->last_frame;
		dec_follow_finish(d->conns[i]);
		fill_info(d->conns[i], &ci);
		if (d->sink.conn)
			d->sink.conn(d->sink.ctx, &ci);
	}
}

unsigned dec_decoder_errors(const struct dec_decoder *d)
{
	return d->errors;
}

unsigned dec_decoder_warnings(const struct dec_decoder *d)
{
	return d->warnings;
}

unsigned dec_decoder_connections(const struct dec_decoder *d)
{
	return (unsigned)d->nconns;
}
