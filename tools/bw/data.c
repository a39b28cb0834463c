/*
 * iwarp_bw data connections: buffer, MR, CQs and num_qps RC QPs connected
 * through the CM the way perftest's create_rdma_cm_connection does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "tools/bw/bw.h"
#include "tools/common/stop.h"

static int data_access(const struct bw_opts *o)
{
	int access = IWARP_ACCESS_LOCAL_WRITE;

	if (o->verb == BW_WRITE)
		access |= IWARP_ACCESS_REMOTE_WRITE;
	/* iWARP: the Read sink MR also gets REMOTE_WRITE (perftest). */
	if (o->verb == BW_READ)
		access |= IWARP_ACCESS_REMOTE_READ | IWARP_ACCESS_REMOTE_WRITE;
	if (o->atomic) /* RFC 7306 Atomic Requests */
		access |= IWARP_ACCESS_REMOTE_ATOMIC;
	return access;
}

static int data_resources(struct bw_data *d, const struct bw_opts *o)
{
	uint64_t max = o->all ? BW_MAX_SIZE : o->size;
	size_t len;
	int cqe;

	d->buff = max < BW_CYCLE_BUFFER ? BW_CYCLE_BUFFER : (size_t)max;
	len = 2 * (size_t)d->n * d->buff;
	d->buf = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	if (!d->buf)
		return -ENOMEM;
	memset(d->buf, 0, len);
	d->pd = iwarp_alloc_pd(d->ctx);
	if (!d->pd)
		goto fail;
	d->mr = iwarp_reg_mr(d->pd, d->buf, len, data_access(o));
	if (!d->mr)
		goto fail;
	if (o->cq_wait != BW_WAIT_SPIN &&
	    (!o->latency || o->cq_wait == BW_WAIT_EVENT) &&
	    !d->inline_progress) {
		d->chan = iwarp_create_comp_channel(d->ctx);
		/* the BW loops poll(2) it and drain it without blocking; the
		 * latency loops block in iwarp_get_cq_event, as perftest's
		 * -e does in ibv_get_cq_event, and so does the receiver of a
		 * Send test that counts messages: a thread blocked there
		 * reads the sockets itself (direct socket I/O), so the
		 * receives it reaps, reposts and credits need no hand-off
		 * from the progress thread. Not with -D: the end comes by
		 * the clock, not by a completion. */
		d->chan_block = !o->latency && o->verb == BW_SEND &&
				!o->server && !o->duplex && o->duration <= 0;
		if (!d->chan || (!o->latency && !d->chan_block &&
				 bw_fd_nonblock(d->chan->fd)))
			goto fail;
	}
	cqe = (o->tx_depth + 8) * d->n;
	d->scq = iwarp_create_cq(d->ctx, cqe, NULL, d->chan, 0);
	if (!d->scq)
		goto fail;
	cqe = (o->rx_depth + 8) * d->n;
	d->rcq = iwarp_create_cq(d->ctx, cqe, NULL, d->chan, 0);
	if (!d->rcq)
		goto fail;
	if (d->send_credit) {
		/* [0,n) ours, [n,2n) the peer's credits, then tx_depth source
		 * slots per QP for the credit Writes (run.c post_credit) */
		size_t words = (2 + (size_t)o->tx_depth) * (size_t)d->n;

		d->ctrl_buf = calloc(words, sizeof(uint32_t));
		if (!d->ctrl_buf)
			return -ENOMEM;
		d->ctrl_mr = iwarp_reg_mr(
			d->pd, d->ctrl_buf, words * sizeof(uint32_t),
			IWARP_ACCESS_LOCAL_WRITE | IWARP_ACCESS_REMOTE_WRITE);
		if (!d->ctrl_mr)
			goto fail;
		d->credit_cnt = (uint32_t)o->rx_depth / 3;
		if (d->credit_cnt == 0)
			d->credit_cnt = 1;
	}
	return 0;
fail : {
	int rc = errno ? -errno : -ENOMEM;

	fprintf(stderr, " iwarp_bw: data resources (pd/mr/cq): %s\n",
		iwarp_strerror(rc));
	return rc;
}
}

/*
 * A data connection could not be set up: names the resource when it is one
 * (file descriptors, memory, the context's QP limit) and the count reached.
 */
static void data_limit_msg(const struct bw_data *d, int i, const char *what,
			   int rc)
{
	struct iwarp_device_attr da;
	struct rlimit rl;

	/* the control QP shares the context: data QP i is QP i + 1 */
	if (iwarp_query_device(d->ctx, &da) == 0 && da.max_qp > 0 &&
	    i + 1 >= da.max_qp) {
		fprintf(stderr,
			" iwarp_bw: the context's QP limit (max_qp %d of iwarp_query_device, control QP"
			" included) reached at %s of data QP %d: %d of %d QPs connected (%s)\n",
			da.max_qp, what, i, i, d->n, iwarp_strerror(rc));
	} else if (rc == -EMFILE || rc == -ENFILE) {
		if (getrlimit(RLIMIT_NOFILE, &rl))
			rl.rlim_cur = 0;
		fprintf(stderr,
			" iwarp_bw: out of file descriptors (%s, RLIMIT_NOFILE %llu) at %s of data QP %d:"
			" %d of %d QPs connected\n",
			rc == -EMFILE ? "EMFILE" : "ENFILE",
			(unsigned long long)rl.rlim_cur, what, i, i, d->n);
	} else if (rc == -ENOMEM) {
		fprintf(stderr,
			" iwarp_bw: out of memory (ENOMEM) at %s of data QP %d: %d of %d QPs connected\n",
			what, i, i, d->n);
	} else {
		fprintf(stderr,
			" iwarp_bw: %s of data QP %d failed: %d of %d QPs connected (%s)\n",
			what, i, i, d->n, iwarp_strerror(rc));
	}
}

static int data_create_qp(struct bw_data *d, const struct bw_opts *o, int i)
{
	struct iwarp_qp_init_attr qa;
	int rc;

	memset(&qa, 0, sizeof(qa));
	qa.qp_context = &d->q[i];
	qa.send_cq = d->scq;
	qa.recv_cq = d->rcq;
	qa.qp_type = IWARP_QPT_RC;
	/* credits add one RDMA Write per credit_cnt receives */
	qa.cap.max_send_wr = (uint32_t)o->tx_depth +
			     (d->send_credit ? (uint32_t)o->tx_depth : 0u);
	qa.cap.max_recv_wr = (uint32_t)o->rx_depth;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.cap.max_inline_data =
		(uint32_t)(o->inline_size > 0 ? o->inline_size : 0);
	rc = iwarp_cm_create_qp(d->q[i].id, d->pd, &qa);
	if (rc) {
		data_limit_msg(d, i, "iwarp_cm_create_qp", rc);
		return rc;
	}
	d->q[i].qp = d->q[i].id->qp;
	d->max_inline = qa.cap.max_inline_data;
	return 0;
}

static void data_conn_param(const struct bw_opts *o, struct iwarp_conn_param *p)
{
	memset(p, 0, sizeof(*p));
	if (o->verb == BW_READ) {
		p->responder_resources = (uint8_t)o->out_reads;
		p->initiator_depth = (uint8_t)o->out_reads;
	}
	p->retry_count = 7;
	p->rnr_retry_count = 7;
}

/*
 * Data connections are set up BW_CONNECT_WINDOW at a time: each one waits
 * for round trips (address, MPA Request/Reply) and for the initiator's
 * grace after the Reply (10 ms by default, see iwarp_cm_connect(3)), so one
 * at a time would make thousands of QPs slow to start, and the window
 * bounds the rate to BW_CONNECT_WINDOW per grace period (64: 6,400/s;
 * measured on 2 cores with 16, 64, 192 and 1,024: about 1,350, 3,300,
 * 4,100 and 5,200 connections/s, where the engines' CPU takes over). It
 * stays below the 256 connections a libiwarp listener lets wait for their
 * MPA Request before it resets more (iwarp_cm_listen(3)).
 * The client names each QP's index in its private data (BW_PD_MAGIC, then
 * the index, big-endian) so the server pairs the i-th QPs of both sides
 * whatever order the connections complete in; a peer that sends no such
 * private data (perftest) is paired in arrival order.
 */
#define BW_CONNECT_WINDOW 192
#define BW_PD_LEN	  8
static const uint8_t bw_pd_magic[4] = {'i', 'w', 'b', 'w'};

/* The client's next step for QP |q| after CM event |e| (acked here). */
static int data_client_step(struct bw_data *d, const struct bw_opts *o,
			    struct iwarp_cm_event *e, int *established)
{
	struct bw_qp *q = e->id ? e->id->context : NULL;
	struct iwarp_conn_param cp;
	uint8_t pd[BW_PD_LEN];
	enum iwarp_cm_event_type type = e->event;
	int i, rc;

	rc = bw_cm_failed(e, "the data connections");
	if (rc)
		return rc;
	iwarp_cm_ack_event(e);
	if (!q)
		return 0;
	i = (int)(q - d->q);
	if (type == IWARP_CM_EVENT_ADDR_RESOLVED)
		return iwarp_cm_resolve_route(q->id, 2000);
	if (type == IWARP_CM_EVENT_ROUTE_RESOLVED) {
		rc = data_create_qp(d, o, i);
		if (rc)
			return rc;
		data_conn_param(o, &cp);
		memcpy(pd, bw_pd_magic, sizeof(bw_pd_magic));
		pd[4] = (uint8_t)((uint32_t)i >> 24);
		pd[5] = (uint8_t)((uint32_t)i >> 16);
		pd[6] = (uint8_t)((uint32_t)i >> 8);
		pd[7] = (uint8_t)i;
		cp.private_data = pd;
		cp.private_data_len = BW_PD_LEN;
		rc = tool_tls_apply(&o->tls, q->id, false, "iwarp_bw");
		if (rc)
			return rc;
		rc = iwarp_cm_connect(q->id, &cp);
		if (rc)
			data_limit_msg(d, i, "connecting", rc);
		return rc;
	}
	if (type == IWARP_CM_EVENT_ESTABLISHED && !q->connected) {
		q->connected = 1;
		(*established)++;
	}
	return 0;
}

/* One client attempt: resolve and connect every QP. */
static int data_client_try(struct bw_data *d, const struct bw_opts *o,
			   const struct sockaddr_storage *dst)
{
	struct iwarp_cm_event *ev;
	int started = 0, established = 0, rc;

	while (established < d->n) {
		while (started < d->n &&
		       started - established < BW_CONNECT_WINDOW) {
			struct bw_qp *q = &d->q[started];

			rc = iwarp_cm_create_id(d->ch, d->ctx, &q->id, q,
						IWARP_PS_TCP);
			if (rc) {
				data_limit_msg(d, started, "iwarp_cm_create_id",
					       rc);
				return rc;
			}
			rc = iwarp_cm_resolve_addr(q->id, NULL,
						   (const struct sockaddr *)dst,
						   2000);
			if (rc) {
				if (rc == -EMFILE || rc == -ENFILE ||
				    rc == -ENOMEM)
					data_limit_msg(d, started,
						       "resolving the address",
						       rc);
				return rc;
			}
			started++;
		}
		rc = bw_cm_next(d->ch, d->inline_progress, 15000, &ev);
		if (rc) {
			if (rc != -EINTR)
				data_limit_msg(d, established, "connecting",
					       rc);
			return rc;
		}
		rc = data_client_step(d, o, ev, &established);
		if (rc)
			return rc;
	}
	return 0;
}

static void data_drop_ids(struct bw_data *d)
{
	int i;

	for (i = 0; i < d->n; i++) {
		struct bw_qp *q = &d->q[i];

		if (q->id) {
			if (q->id->qp)
				iwarp_cm_destroy_qp(q->id);
			iwarp_cm_destroy_id(q->id);
		}
		memset(q, 0, sizeof(*q));
	}
}

static int data_client(struct bw_data *d, const struct bw_opts *o)
{
	struct sockaddr_storage dst;
	int tries, rc, i;

	rc = iwarp_cm_getaddr(o->server, o->port, &dst);
	if (rc)
		return rc;
	/* rdma_cm_client_connection: 10 tries, 100 ms apart (the server may
	 * not listen yet). */
	for (tries = 0; tries < 10; tries++) {
		struct timespec ts = {0, 100 * 1000 * 1000};
		int reached;

		rc = data_client_try(d, o, &dst);
		if (!rc)
			return 0;
		/* the server listens once one QP got through: a later failure
		 * is a resource running out (reported), not worth retrying */
		for (reached = 0, i = 0; i < d->n && !reached; i++)
			reached = d->q[i].connected;
		data_drop_ids(d);
		if (rc == -EINTR || reached)
			return rc;
		nanosleep(&ts, NULL); /* a signal cuts it short */
		if (bw_stopping())
			return -EINTR;
	}
	fprintf(stderr,
		" iwarp_bw: data connection to %s:%u failed after 10 tries: %s\n",
		o->server, (unsigned int)o->port, iwarp_strerror(rc));
	return rc;
}

/*
 * Server: listens on the data port. Called BEFORE the first handshake of
 * create_rdma_cm_connection, so the listener exists by the time our handshake
 * reply tells the client to connect (perftest listens after it and relies on
 * the client's retries; listening earlier changes nothing on the wire).
 */
static int data_listen(struct bw_data *d, const struct bw_opts *o)
{
	struct sockaddr_storage src;
	int rc;

	rc = iwarp_cm_getaddr(o->bind_addr ? o->bind_addr : "0.0.0.0", o->port,
			      &src);
	if (!rc)
		rc = iwarp_cm_create_id(d->ch, d->ctx, &d->listen_id, d,
					IWARP_PS_TCP);
	if (!rc)
		rc = iwarp_cm_bind_addr(d->listen_id, (struct sockaddr *)&src);
	if (!rc)
		rc = tool_tls_apply(&o->tls, d->listen_id, true, "iwarp_bw");
	if (!rc)
		rc = iwarp_cm_listen(d->listen_id, d->n);
	if (rc)
		fprintf(stderr, " iwarp_bw: data listener on port %u: %s\n",
			(unsigned int)o->port, iwarp_strerror(rc));
	return rc;
}

/* The server's slot for a CONNECT_REQUEST: the index the client named in
 * its private data, else the first free one; -1 when none. */
static int data_server_slot(const struct bw_data *d,
			    const struct iwarp_cm_event *e)
{
	const uint8_t *pd = e->param.conn.private_data;
	int i;

	if (pd && e->param.conn.private_data_len >= BW_PD_LEN &&
	    !memcmp(pd, bw_pd_magic, sizeof(bw_pd_magic))) {
		uint32_t idx = (uint32_t)pd[4] << 24 | (uint32_t)pd[5] << 16 |
			       (uint32_t)pd[6] << 8 | pd[7];

		if (idx < (uint32_t)d->n && !d->q[idx].id)
			return (int)idx;
	}
	for (i = 0; i < d->n; i++)
		if (!d->q[i].id)
			return i;
	return -1;
}

/* Server: answers one CONNECT_REQUEST |e| (acked here). */
static int data_server_accept(struct bw_data *d, const struct bw_opts *o,
			      struct iwarp_cm_event *e, int *said)
{
	struct iwarp_conn_param cp;
	struct bw_qp *q;
	uint8_t ird, ord;
	int i, rc;

	i = data_server_slot(d, e);
	if (i < 0) {
		iwarp_cm_reject(e->id, NULL, 0);
		iwarp_cm_ack_event(e);
		return 0;
	}
	q = &d->q[i];
	q->id = e->id;
	q->id->context = q;
	data_conn_param(o, &cp);
	/* clamp to the initiator's resources when the CM reports them */
	ird = e->param.conn.initiator_depth;
	ord = e->param.conn.responder_resources;
	if (o->verb == BW_READ && ird && ird < cp.responder_resources)
		cp.responder_resources = ird;
	if (o->verb == BW_READ && ord && ord < cp.initiator_depth)
		cp.initiator_depth = ord;
	iwarp_cm_ack_event(e);
	rc = data_create_qp(d, o, i);
	if (rc) {
		*said = 1; /* data_create_qp said why */
		return rc;
	}
	return iwarp_cm_accept(q->id, &cp);
}

/* The control connection has ended (its QP left RTS). */
static int data_ctrl_gone(struct bw_comm *c)
{
	struct iwarp_qp_init_attr ia;
	struct iwarp_qp_attr a;

	if (!c->id || !c->id->qp)
		return 0;
	memset(&a, 0, sizeof(a));
	return iwarp_query_qp(c->id->qp, &a, IWARP_QP_STATE, &ia) == 0 &&
	       a.qp_state != IWARP_QPS_RTS;
}

/* Server: accepts the num_qps data connections on d->listen_id, as many at
 * once as the clients ask for. */
static int data_server(struct bw_data *d, const struct bw_opts *o,
		       struct bw_comm *c)
{
	struct iwarp_cm_event *ev;
	int established = 0, rc = 0, said = 0, waited = 0;

	while (established < d->n) {
		struct bw_qp *q;

		/*
		 * 30 s without an event, in slices: a client that gave up
		 * (its data connection died inside the MPA Request, which
		 * raises nothing here) closes the control connection, whose
		 * QP then leaves RTS: stop waiting at once.
		 */
		rc = bw_cm_next(d->ch, d->inline_progress, 250, &ev);
		if (rc == -ETIMEDOUT && (waited += 250) < 30000) {
			if (data_ctrl_gone(c)) {
				fprintf(stderr,
					" iwarp_bw: the client closed the control connection"
					" while %d of %d data connections were established\n",
					established, d->n);
				said = 1;
				rc = -ECONNRESET;
				break;
			}
			continue;
		}
		if (rc)
			break;
		waited = 0;
		if (ev->event == IWARP_CM_EVENT_CONNECT_REQUEST) {
			rc = data_server_accept(d, o, ev, &said);
			if (rc)
				break;
			continue;
		}
		rc = bw_cm_failed(ev, "the data connections");
		if (rc)
			break;
		q = ev->id ? ev->id->context : NULL;
		if (ev->event == IWARP_CM_EVENT_ESTABLISHED && q && q >= d->q &&
		    q < d->q + d->n && !q->connected) {
			q->connected = 1;
			established++;
		}
		iwarp_cm_ack_event(ev);
	}
	iwarp_cm_destroy_id(d->listen_id);
	d->listen_id = NULL;
	if (rc && rc != -EINTR && !said)
		data_limit_msg(d, established, "accepting", rc);
	return rc;
}

int bw_data_connect(struct bw_data *d, struct iwarp_context *ctx,
		    struct bw_comm *c, const struct bw_opts *o)
{
	struct bw_dest zero, rem;
	uint64_t t0;
	int rc;

	memset(d, 0, sizeof(*d));
	memset(&zero, 0, sizeof(zero));
	d->ctx = ctx;
	d->n = o->num_qps;
	d->inline_progress = o->progress == IWARP_PROGRESS_INLINE;
	d->send_credit = o->verb == BW_SEND && !o->latency;
	d->q = calloc((size_t)d->n, sizeof(*d->q));
	if (!d->q)
		return -ENOMEM;
	rc = data_resources(d, o);
	if (rc)
		return rc;
	d->ch = iwarp_cm_create_event_channel();
	if (!d->ch)
		return errno ? -errno : -ENOMEM;
	rc = bw_fd_nonblock(d->ch->fd);
	if (!rc && !o->server)
		rc = data_listen(d, o);
	if (rc)
		return rc;
	/* create_rdma_cm_connection: handshake, connect, handshake */
	rc = bw_comm_handshake(c, &zero, &rem);
	if (rc)
		return rc;
	bw_stats.rss_before_kib = bw_rss_kib();
	t0 = bw_now_ns();
	rc = o->server ? data_client(d, o) : data_server(d, o, c);
	if (rc)
		return rc;
	bw_stats.connect_s = (double)(bw_now_ns() - t0) / 1e9;
	bw_stats.rss_after_kib = bw_rss_kib();
	bw_stats.qps = d->n;
	return bw_comm_handshake(c, &zero, &rem);
}

void bw_data_my_dest(const struct bw_data *d, const struct bw_opts *o, int i,
		     struct bw_dest *m)
{
	memset(m, 0, sizeof(*m));
	m->qpn = d->q[i].qp ? d->q[i].qp->qp_num : 0;
	m->psn = (uint32_t)random() & 0xffffffu;
	m->out_reads = o->out_reads;
	m->rkey = d->mr->rkey;
	m->vaddr = (uintptr_t)(d->buf + (size_t)(d->n + i) * d->buff);
	if (d->send_credit) { /* ctx_alloc_credit */
		m->rkey = d->ctrl_mr->rkey;
		m->vaddr = (uintptr_t)(d->ctrl_buf + d->n + i);
	}
}

void bw_data_close(struct bw_data *d, const struct bw_opts *o)
{
	struct iwarp_cm_event *ev;
	int i, left = 0;

	for (i = 0; i < d->n && d->q; i++) {
		if (!d->q[i].connected)
			continue;
		left++;
		/* rdma_cm_disconnect_nodes: the server disconnects; after
		 * SIGINT/SIGTERM (bw_stop_teardown bounds the waits) both do */
		if (!o->server || tool_stop_signal())
			iwarp_cm_disconnect(d->q[i].id);
	}
	while (left > 0 && d->ch &&
	       !bw_cm_wait(d->ch, d->inline_progress,
			   IWARP_CM_EVENT_DISCONNECTED, 5000, &ev)) {
		iwarp_cm_ack_event(ev);
		left--;
	}
	if (left > 0 &&
	    o->server) { /* peer did not disconnect: do it ourselves */
		for (i = 0; i < d->n; i++)
			if (d->q[i].connected)
				iwarp_cm_disconnect(d->q[i].id);
	}
	if (d->q)
		data_drop_ids(d);
	if (d->listen_id)
		iwarp_cm_destroy_id(d->listen_id);
	if (d->mr)
		iwarp_dereg_mr(d->mr);
	if (d->ctrl_mr)
		iwarp_dereg_mr(d->ctrl_mr);
	if (d->scq)
		iwarp_destroy_cq(d->scq);
	if (d->rcq)
		iwarp_destroy_cq(d->rcq);
	if (d->chan)
		iwarp_destroy_comp_channel(d->chan);
	if (d->pd)
		iwarp_dealloc_pd(d->pd);
	if (d->ch)
		iwarp_cm_destroy_event_channel(d->ch);
	free(d->q);
	free(d->buf);
	free(d->ctrl_buf);
	memset(d, 0, sizeof(*d));
}
