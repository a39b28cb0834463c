/*
 * tools/decode/output.c: text and JSON rendering (see output.h).
 */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "rdmap/rdmap_opcode.h"
#include "util/mem.h"

/* A growable string. */
struct sbuf {
	char *p;
	size_t len, cap;
};

static void sb_add(struct sbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void sb_add(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? room : 0, fmt,
			      ap);
		va_end(ap);
		if (n < 0)
			return;
		if (b->p && (size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		{
			size_t ncap = (b->cap + (size_t)n + 1) * 2;
			char *np = iw_realloc(b->p, ncap);

			if (!np)
				return;
			b->p = np;
			b->cap = ncap;
		}
	}
}

/* Appends |s| as a JSON string literal. */
static void sb_json_str(struct sbuf *b, const char *s)
{
	sb_add(b, "\"");
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			sb_add(b, "\\%c", ch);
		else if (ch < 0x20)
			sb_add(b, "\\u%04x", ch);
		else
			sb_add(b, "%c", ch);
	}
	sb_add(b, "\"");
}

void dec_out_init(struct dec_out *o, FILE *fp, const char *file, bool json,
		  bool quiet)
{
	memset(o, 0, sizeof(*o));
	o->fp = fp;
	o->file = file;
	o->json = json;
	o->quiet = quiet;
	if (json) {
		struct sbuf b = {0};

		sb_add(&b, "{\"file\":");
		sb_json_str(&b, file);
		sb_add(&b, ",\n\"units\":[");
		if (b.p)
			fputs(b.p, fp);
		iw_free(b.p);
	}
}

static const char *unit_kind(enum dec_unit_kind k)
{
	switch (k) {
	case DEC_UNIT_MPA_REQ:
		return "mpa_request";
	case DEC_UNIT_MPA_REP:
		return "mpa_reply";
	case DEC_UNIT_FPDU:
	default:
		return "fpdu";
	}
}

static void on_unit(void *ctx, const struct dec_unit *u)
{
	struct dec_out *o = ctx;
	struct sbuf b = {0};

	if (o->json && o->quiet)
		return;
	if (!o->json) {
		if (!o->quiet)
			fprintf(o->fp, "conn %u %s off %" PRIu64 ": %s\n",
				u->conn, dec_dir_name((int)u->dir), u->off,
				u->text);
		return;
	}
	sb_add(&b,
	       "%s\n{\"conn\":%u,\"dir\":\"%s\",\"off\":%" PRIu64
	       ",\"frame\":%" PRIu64 ",\"kind\":\"%s\"",
	       o->nunits ? "," : "", u->conn, dec_dir_name((int)u->dir), u->off,
	       u->frame, unit_kind(u->kind));
	if (u->kind != DEC_UNIT_FPDU) {
		sb_add(&b,
		       ",\"flags\":%u,\"rev\":%u,\"pd_length\":%u,"
		       "\"enhanced\":%s",
		       u->rr_flags, u->rr_rev, u->pd_len,
		       u->enhanced ? "true" : "false");
		if (u->have_ird_ord)
			sb_add(&b, ",\"ird\":%u,\"ord\":%u", u->ird & 0x3fff,
			       u->ord & 0x3fff);
	} else {
		sb_add(&b, ",\"ulpdu_length\":%u,\"markers\":%u,\"crc\":%s",
		       u->ulpdu_len, u->markers,
		       u->crc == 1   ? "\"ok\""
		       : u->crc == 0 ? "\"bad\""
				     : "null");
		if (u->ddp_valid) {
			sb_add(&b,
			       ",\"tagged\":%s,\"last\":%s,\"opcode\":%u,"
			       "\"op\":\"%s\",\"payload_len\":%u",
			       u->tagged ? "true" : "false",
			       u->last ? "true" : "false", u->opcode,
			       rdmap_opcode_name(u->opcode), u->payload_len);
			if (u->tagged)
				sb_add(&b, ",\"stag\":%u,\"to\":%" PRIu64,
				       u->stag, u->to);
			else
				sb_add(&b, ",\"qn\":%u,\"msn\":%u,\"mo\":%u",
				       u->qn, u->msn, u->mo);
		}
	}
	sb_add(&b, ",\"text\":");
	sb_json_str(&b, u->text);
	sb_add(&b, "}");
	if (b.p)
		fputs(b.p, o->fp);
	iw_free(b.p);
	o->nunits++;
}

static void finding_where(char *buf, size_t n, const struct dec_finding *f)
{
	size_t k = 0;

	buf[0] = '\0';
	if (f->conn)
		k += (size_t)snprintf(buf + k, n - k, "conn %u", f->conn);
	if (f->dir >= 0)
		k += (size_t)snprintf(buf + k, n - k, " %s",
				      dec_dir_name(f->dir));
	if (f->off != UINT64_MAX)
		k += (size_t)snprintf(buf + k, n - k, " off %" PRIu64, f->off);
	if (!f->conn && f->frame)
		snprintf(buf + k, n - k, "frame %" PRIu64, f->frame);
}

static void on_finding(void *ctx, const struct dec_finding *f)
{
	struct dec_out *o = ctx;
	struct sbuf b = {0};
	char where[96];

	if (!o->json) {
		finding_where(where, sizeof(where), f);
		fprintf(o->fp, "%s: %s [%s]: %s\n",
			where[0] ? where : "capture",
			f->severity == DEC_ERROR ? "error" : "warning", f->what,
			f->text);
		return;
	}
	sb_add(&b, "{\"conn\":%u,\"dir\":", f->conn);
	if (f->dir >= 0)
		sb_add(&b, "\"%s\"", dec_dir_name(f->dir));
	else
		sb_add(&b, "null");
	if (f->off != UINT64_MAX)
		sb_add(&b, ",\"off\":%" PRIu64, f->off);
	else
		sb_add(&b, ",\"off\":null");
	sb_add(&b, ",\"frame\":%" PRIu64 ",\"what\":", f->frame);
	sb_json_str(&b, f->what);
	sb_add(&b, ",\"text\":");
	sb_json_str(&b, f->text);
	sb_add(&b, "}");
	if (!b.p)
		return;
	if (o->nfind == o->capfind) {
		size_t cap = o->capfind ? o->capfind * 2 : 32;
		char **np = iw_realloc(o->findings, cap * sizeof(*np));
		bool *ne;

		if (!np) {
			iw_free(b.p);
			return;
		}
		o->findings = np;
		ne = iw_realloc(o->finding_is_error, cap * sizeof(*ne));
		if (!ne) {
			iw_free(b.p);
			return;
		}
		o->finding_is_error = ne;
		o->capfind = cap;
	}
	o->findings[o->nfind] = b.p;
	o->finding_is_error[o->nfind] = f->severity == DEC_ERROR;
	o->nfind++;
}

static const char *kind_text(enum dec_conn_kind k)
{
	switch (k) {
	case DEC_CONN_IWARP:
		return "iWARP";
	case DEC_CONN_NOT_IWARP:
		return "not iWARP";
	case DEC_CONN_NO_DATA:
	default:
		return "not iWARP (no data)";
	}
}

static void text_messages(FILE *fp, const struct dec_dir_info *di)
{
	bool any = false;
	int op;

	for (op = 0; op < DEC_NOPCODES; op++) {
		if (!di->messages[op] && !di->payload[op])
			continue;
		fprintf(fp, "%s%s %" PRIu64 " (%" PRIu64 " B)", any ? ", " : "",
			rdmap_opcode_name((uint8_t)op), di->messages[op],
			di->payload[op]);
		any = true;
	}
	if (!any)
		fprintf(fp, "none");
}

static void text_conn(struct dec_out *o, const struct dec_conn_info *ci)
{
	char a[64], b[64];
	int i;

	dec_endpoint_format(&ci->a, a, sizeof(a));
	dec_endpoint_format(&ci->b, b, sizeof(b));
	fprintf(o->fp,
		"conn %u: A %s <-> B %s: %s, %s; frames %" PRIu64 "-%" PRIu64
		"\n",
		ci->conn, a, b, kind_text(ci->kind), ci->state, ci->first_frame,
		ci->last_frame);
	if (ci->kind != DEC_CONN_IWARP) {
		fprintf(o->fp, "  A->B %" PRIu64 " B, B->A %" PRIu64 " B\n",
			ci->dir[0].bytes, ci->dir[1].bytes);
		return;
	}
	if (ci->have_req) {
		fprintf(o->fp, "  initiator %s; Request rev %u flags 0x%02x",
			ci->initiator == DEC_BA ? "B" : "A", ci->req_rev,
			ci->req_flags);
		if (ci->have_rep)
			fprintf(o->fp, "; Reply rev %u flags 0x%02x%s",
				ci->rep_rev, ci->rep_flags,
				ci->rejected ? " (reject)" : "");
		fprintf(o->fp, "\n");
	}
	if (ci->established) {
		fprintf(o->fp, "  negotiated: crc %s, markers A->B %s B->A %s",
			ci->crc ? "on" : "off",
			ci->dir[0].markers ? "on" : "off",
			ci->dir[1].markers ? "on" : "off");
		if (ci->enhanced)
			fprintf(o->fp,
				", enhanced: Request IRD %u ORD %u, "
				"Reply IRD %u ORD %u",
				ci->req_ird, ci->req_ord, ci->rep_ird,
				ci->rep_ord);
		fprintf(o->fp, "\n");
	}
	for (i = 0; i < 2; i++) {
		const struct dec_dir_info *di = &ci->dir[i];

		fprintf(o->fp,
			"  %s: %" PRIu64 " B, %" PRIu64 " FPDUs, messages: ",
			dec_dir_name(i), di->bytes, di->fpdus);
		text_messages(o->fp, di);
		if (di->retrans_bytes || di->ooo_segments)
			fprintf(o->fp,
				"; %" PRIu64 " B retransmitted, %" PRIu64
				" segments out of order",
				di->retrans_bytes, di->ooo_segments);
		fprintf(o->fp, "\n");
	}
	fprintf(o->fp, "  %u error%s, %u warning%s\n", ci->errors,
		ci->errors == 1 ? "" : "s", ci->warnings,
		ci->warnings == 1 ? "" : "s");
}

static void json_conn(struct dec_out *o, const struct dec_conn_info *ci)
{
	struct sbuf b = {0};
	char a[64], bb[64];
	int i, op;

	sb_add(&b,
	       "%s\n{\"conn\":%u,\"a\":\"%s\",\"b\":\"%s\",\"kind\":\"%s\","
	       "\"state\":",
	       o->nconn ? "," : "", ci->conn,
	       dec_endpoint_format(&ci->a, a, sizeof(a)),
	       dec_endpoint_format(&ci->b, bb, sizeof(bb)),
	       ci->kind == DEC_CONN_IWARP	? "iwarp"
	       : ci->kind == DEC_CONN_NOT_IWARP ? "not_iwarp"
						: "no_data");
	sb_json_str(&b, ci->state);
	sb_add(&b, ",\"first_frame\":%" PRIu64 ",\"last_frame\":%" PRIu64,
	       ci->first_frame, ci->last_frame);
	sb_add(&b,
	       ",\"request\":%s,\"reply\":%s,\"rejected\":%s,"
	       "\"established\":%s,\"initiator\":%s",
	       ci->have_req ? "true" : "false", ci->have_rep ? "true" : "false",
	       ci->rejected ? "true" : "false",
	       ci->established ? "true" : "false",
	       ci->initiator < 0	 ? "null"
	       : ci->initiator == DEC_AB ? "\"A\""
					 : "\"B\"");
	if (ci->have_req)
		sb_add(&b,
		       ",\"req_rev\":%u,\"req_flags\":%u,\"req_ird\":%u,"
		       "\"req_ord\":%u",
		       ci->req_rev, ci->req_flags, ci->req_ird, ci->req_ord);
	if (ci->have_rep)
		sb_add(&b,
		       ",\"rep_rev\":%u,\"rep_flags\":%u,\"rep_ird\":%u,"
		       "\"rep_ord\":%u",
		       ci->rep_rev, ci->rep_flags, ci->rep_ird, ci->rep_ord);
	sb_add(&b,
	       ",\"crc\":%s,\"enhanced\":%s,\"errors\":%u,"
	       "\"warnings\":%u,\"dirs\":[",
	       ci->crc ? "true" : "false", ci->enhanced ? "true" : "false",
	       ci->errors, ci->warnings);
	for (i = 0; i < 2; i++) {
		const struct dec_dir_info *di = &ci->dir[i];
		bool any = false;

		sb_add(&b,
		       "%s{\"dir\":\"%s\",\"bytes\":%" PRIu64
		       ",\"fpdus\":%" PRIu64 ",\"markers\":%s,"
		       "\"syn\":%s,\"fin\":%s,\"rst\":%s,"
		       "\"retransmitted\":%" PRIu64 ",\"out_of_order\":%" PRIu64
		       ",\"errors\":%u,"
		       "\"messages\":{",
		       i ? "," : "", dec_dir_name(i), di->bytes, di->fpdus,
		       di->markers ? "true" : "false",
		       di->syn ? "true" : "false", di->fin ? "true" : "false",
		       di->rst ? "true" : "false", di->retrans_bytes,
		       di->ooo_segments, di->errors);
		for (op = 0; op < DEC_NOPCODES; op++) {
			if (!di->messages[op] && !di->payload[op])
				continue;
			sb_add(&b,
			       "%s\"%s\":{\"count\":%" PRIu64
			       ",\"bytes\":%" PRIu64 "}",
			       any ? "," : "", rdmap_opcode_name((uint8_t)op),
			       di->messages[op], di->payload[op]);
			any = true;
		}
		sb_add(&b, "}}");
	}
	sb_add(&b, "]}");
	if (b.p) {
		struct sbuf all = {o->conns, o->conns_len, o->conns_cap};

		sb_add(&all, "%s", b.p);
		o->conns = all.p;
		o->conns_len = all.len;
		o->conns_cap = all.cap;
	}
	iw_free(b.p);
}

static void on_conn(void *ctx, const struct dec_conn_info *ci)
{
	struct dec_out *o = ctx;

	if (o->json)
		json_conn(o, ci);
	else
		text_conn(o, ci);
	o->nconn++;
	if (ci->kind == DEC_CONN_IWARP)
		o->niwarp++;
}

struct dec_sink dec_out_sink(struct dec_out *o)
{
	struct dec_sink s = {o, on_unit, on_finding, on_conn};

	if (!o->json)
		fflush(o->fp);
	return s;
}

void dec_out_finish(struct dec_out *o, unsigned errors, unsigned warnings)
{
	size_t i;
	int pass;

	if (!o->json) {
		fprintf(o->fp,
			"%s: %u connection%s (%u iWARP), %u error%s, "
			"%u warning%s: %s\n",
			o->file, o->nconn, o->nconn == 1 ? "" : "s", o->niwarp,
			errors, errors == 1 ? "" : "s", warnings,
			warnings == 1 ? "" : "s", errors ? "INVALID" : "valid");
		return;
	}
	fprintf(o->fp, "],\n\"connections\":[%s],\n", o->conns ? o->conns : "");
	for (pass = 0; pass < 2; pass++) {
		bool first = true;

		fprintf(o->fp, "\"%s\":[", pass == 0 ? "errors" : "warnings");
		for (i = 0; i < o->nfind; i++) {
			if (o->finding_is_error[i] != (pass == 0))
				continue;
			fprintf(o->fp, "%s\n%s", first ? "" : ",",
				o->findings[i]);
			first = false;
		}
		fprintf(o->fp, "],\n");
	}
	fprintf(o->fp,
		"\"result\":{\"connections\":%u,\"iwarp\":%u,"
		"\"errors\":%u,\"warnings\":%u,\"valid\":%s}}\n",
		o->nconn, o->niwarp, errors, warnings,
		errors ? "false" : "true");
	for (i = 0; i < o->nfind; i++)
		iw_free(o->findings[i]);
	iw_free(o->findings);
	iw_free(o->finding_is_error);
	iw_free(o->conns);
}
