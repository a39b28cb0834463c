/*
 * cm/cm_qp.h: the link between a QP and the CM id it was created on
 * (iwarp_cm_create_qp), for verbs/qp.c.
 *
 * The link is the pair id->pub.qp / qp->cm_id. It is set and cleared only
 * on the id's engine thread, inside an engine_call_sync() made while the
 * caller holds the CM's link lock (cm/cm_id.c): the engine reads it without
 * a lock (it cannot change under one of its callbacks), application threads
 * only under the link lock. Either side may go first: iwarp_destroy_qp()
 * unlinks the QP from its id (the id then has no QP: a connection attempt
 * in flight fails with CONNECT_ERROR), iwarp_cm_destroy_id() unlinks the
 * id from its QP (the QP stays, for the application to destroy).
 */
#ifndef IWARP_CM_CM_QP_H
#define IWARP_CM_CM_QP_H

struct iw_qp;

/*
 * Called by iwarp_destroy_qp() before it tears |qp| down: if |qp| belongs
 * to a CM id, the id's datapath is destroyed (it no longer touches |qp|
 * nor calls back) and the link is cleared. No-op otherwise. Application
 * thread (never the engine thread).
 */
void cm_qp_unlink(struct iw_qp *qp);

#endif /* IWARP_CM_CM_QP_H */
