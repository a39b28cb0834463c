/* verbs/strings.c: names of completion statuses and async event types. */
#include "config.h"

#include "iwarp/iwarp.h"

IWARP_EXPORT const char *iwarp_wc_status_str(enum iwarp_wc_status status)
{
	switch (status) {
	case IWARP_WC_SUCCESS:
		return "success";
	case IWARP_WC_LOC_LEN_ERR:
		return "local length error";
	case IWARP_WC_LOC_QP_OP_ERR:
		return "local QP operation error";
	case IWARP_WC_LOC_PROT_ERR:
		return "local protection error";
	case IWARP_WC_WR_FLUSH_ERR:
		return "Work Request Flushed Error";
	case IWARP_WC_BAD_RESP_ERR:
		return "bad response error";
	case IWARP_WC_LOC_ACCESS_ERR:
		return "local access error";
	case IWARP_WC_REM_INV_REQ_ERR:
		return "remote invalid request error";
	case IWARP_WC_REM_ACCESS_ERR:
		return "remote access error";
	case IWARP_WC_REM_OP_ERR:
		return "remote operation error";
	case IWARP_WC_RETRY_EXC_ERR:
		return "transport retry counter exceeded";
	case IWARP_WC_RNR_RETRY_EXC_ERR:
		return "RNR retry counter exceeded";
	case IWARP_WC_FATAL_ERR:
		return "fatal error";
	case IWARP_WC_GENERAL_ERR:
		return "general error";
	case IWARP_WC_MW_BIND_ERR:
		return "memory bind operation error";
	}
	return "unknown";
}

IWARP_EXPORT const char *iwarp_event_type_str(enum iwarp_event_type type)
{
	switch (type) {
	case IWARP_EVENT_CQ_ERR:
		return "CQ error";
	case IWARP_EVENT_QP_FATAL:
		return "local work queue catastrophic error";
	case IWARP_EVENT_QP_REQ_ERR:
		return "invalid request local work queue error";
	case IWARP_EVENT_QP_ACCESS_ERR:
		return "local access violation work queue error";
	case IWARP_EVENT_COMM_EST:
		return "communication established";
	case IWARP_EVENT_SQ_DRAINED:
		return "send queue drained";
	case IWARP_EVENT_QP_LAST_WQE_REACHED:
		return "last WQE reached";
	case IWARP_EVENT_SRQ_LIMIT_REACHED:
		return "SRQ limit reached";
	case IWARP_EVENT_SRQ_ERR:
		return "SRQ catastrophic error";
	case IWARP_EVENT_QP_TX_HELD:
		return "responder send held: no FPDU from the initiator yet";
	}
	return "unknown";
}
