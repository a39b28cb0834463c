/*
 * iwarp_bw output: perftest's parameter block, table headers and rows
 * (format strings of perftest 6.06, see bw.h), JSON lines, progress line.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bw/bw.h"

#define RESULT_LINE                                                            \
	"---------------------------------------------------------------------------------------\n"
#define RESULT_FMT                                                             \
	" #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]"
#define RESULT_FMT_G                                                           \
	" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]"
#define REPORT_FMT                                                             \
	" %-7lu    %-10lu       %-7.2lf            %-7.2lf\t\t   %-7.6lf"
#define REPORT_FMT_EXT                                                         \
	" %-7lu    %lu           %-7.6lf            %-7.6lf            %-7.6lf"
#define RESULT_FMT_LAT                                                         \
	" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] "
#define REPORT_FMT_LAT                                                         \
	" %-7lu %lu          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f"

static const char *verb_name(enum bw_verb v)
{
	switch (v) {
	case BW_WRITE:
		return "RDMA_Write";
	case BW_READ:
		return "RDMA_Read";
	case BW_SEND:
	default:
		return "Send";
	}
}

static const char *verb_json(enum bw_verb v)
{
	return v == BW_WRITE ? "write" : v == BW_READ ? "read" : "send";
}

/* The test's name: the verb, or an RFC 7306 variant of it (ext.c). */
static const char *test_name(const struct bw_opts *o)
{
	if (o->atomic)
		return o->atomic_op == BW_ATOMIC_CAS ? "Atomic_CMP_AND_SWAP"
						     : "Atomic_FETCH_AND_ADD";
	if (o->write_imm)
		return "RDMA_Write_with_imm";
	if (o->send_imm)
		return "Send_with_imm";
	return verb_name(o->verb);
}

static const char *test_json(const struct bw_opts *o)
{
	if (o->atomic)
		return o->atomic_op == BW_ATOMIC_CAS ? "atomic_cmp_and_swap"
						     : "atomic_fetch_and_add";
	if (o->write_imm)
		return "write_with_imm";
	if (o->send_imm)
		return "send_with_imm";
	return verb_json(o->verb);
}

static void system_cc(char *out, size_t len)
{
	FILE *f = fopen("/proc/sys/net/ipv4/tcp_congestion_control", "r");

	snprintf(out, len, "system default");
	if (f) {
		if (fgets(out, (int)len, f))
			out[strcspn(out, "\n")] = '\0';
		fclose(f);
	}
}

static const char *progress_name(enum iwarp_progress_mode m)
{
	switch (m) {
	case IWARP_PROGRESS_LATENCY:
		return "latency";
	case IWARP_PROGRESS_CPU:
		return "cpu";
	case IWARP_PROGRESS_INLINE:
		return "inline";
	case IWARP_PROGRESS_ADAPTIVE:
	default:
		return "adaptive";
	}
}

static const char *p2p_name(enum iwarp_p2p_rtr p)
{
	switch (p) {
	case IWARP_P2P_WRITE:
		return "write";
	case IWARP_P2P_READ:
		return "read";
	case IWARP_P2P_SEND:
		return "send";
	case IWARP_P2P_AUTO:
		return "auto";
	case IWARP_P2P_NONE:
	default:
		return "none";
	}
}

void bw_print_params(const struct bw_opts *o, struct iwarp_context *ctx,
		     int mtu)
{
	struct iwarp_context_attr a;
	char cc[64];
	int srv = o->server == NULL;

	iwarp_context_attr_init(&a);
	if (iwarp_query_context(ctx, &a))
		iwarp_context_attr_init(&a);
	if (a.congestion_control)
		snprintf(cc, sizeof(cc), "%s", a.congestion_control);
	else
		system_cc(cc, sizeof(cc));
	if (o->json) {
		fprintf(stderr,
			"iwarp_bw: %s %s, crc %d, markers %d, mpa rev %d, p2p %s, cc %s, progress %s\n",
			test_name(o), o->latency ? "latency" : "BW", (int)a.crc,
			a.markers, a.mpa_rev, p2p_name(a.p2p), cc,
			progress_name(a.progress));
		return;
	}
	printf(RESULT_LINE);
	printf("                    %s ", test_name(o));
	if (!o->latency) {
		if (o->duplex)
			printf("Bidirectional ");
		printf("BW ");
	} else {
		printf("Latency ");
	}
	printf("Test\n");
	printf(" Dual-port       : %s\t\tDevice         : %s\n", "OFF",
	       "iwarp0");
	printf(" Number of qps   : %d\t\tTransport type : %s\n", o->num_qps,
	       "IW");
	printf(" Connection type : %s\t\tUsing SRQ      : %s\n", "RC", "OFF");
	printf(" PCIe relax order: %s\n", "OFF");
	printf(" ibv_wr* API     : %s\n", "OFF");
	if (!srv || o->duplex)
		printf(" TX depth        : %d\n", o->tx_depth);
	if (o->verb == BW_SEND && (srv || o->duplex))
		printf(" RX depth        : %d\n", o->rx_depth);
	if (!o->latency)
		printf(" CQ Moderation   : %d\n", o->cq_mod);
	printf(" Mtu             : %lu[B]\n", 1UL << (7 + mtu));
	printf(" Link type       : %s\n", "Ethernet");
	printf(" GID index       : %d\n", 0);
	if (o->verb != BW_READ)
		printf(" Max inline data : %d[B]\n", o->inline_size);
	else
		printf(" Outstand reads  : %d\n", o->out_reads);
	printf(" rdma_cm QPs\t : %s\n", "ON");
	printf(" Data ex. method : %s", "rdma_cm");
	if (srv) {
		putchar('\n');
		printf(RESULT_LINE);
		printf(" Waiting for client rdma_cm QP to connect\n");
		printf(" Please run the same command with the IB/RoCE interface IP");
	}
	putchar('\n');
	printf(" MPA             : rev %d, CRC %s, markers %s, p2p %s\n",
	       a.mpa_rev,
	       a.crc == IWARP_CRC_OFF	    ? "off"
	       : a.crc == IWARP_CRC_REQUEST ? "request"
					    : "require",
	       a.markers ? "on" : "off", p2p_name(a.p2p));
	printf(" TCP cong. ctrl  : %s\n", cc);
	printf(" Progress mode   : %s\n", progress_name(a.progress));
	printf(RESULT_LINE);
	fflush(stdout);
}

void bw_print_dest(const struct bw_opts *o, const char *side,
		   const struct bw_dest *d)
{
	int k;

	if (o->json)
		return;
	printf(" %s address: LID %#04x QPN %#06x PSN %#06x", side,
	       (unsigned int)d->lid, d->qpn, d->psn);
	if (o->verb == BW_READ)
		printf(" OUT %#04x", (unsigned int)d->out_reads);
	if (o->verb == BW_READ || o->verb == BW_WRITE)
		printf(" RKey %#08x VAddr %#016llx", d->rkey,
		       (unsigned long long)d->vaddr);
	putchar('\n');
	printf(" GID: ");
	for (k = 0; k < 16; k++)
		printf("%02d%s", d->gid[k], k < 15 ? ":" : "\n");
}

void bw_print_line(const struct bw_opts *o)
{
	if (!o->json) {
		printf(RESULT_LINE);
		fflush(stdout);
	}
}

void bw_print_header(const struct bw_opts *o)
{
	if (o->json)
		return;
	printf(RESULT_LINE);
	if (o->latency)
		printf("%s\n", RESULT_FMT_LAT);
	else
		printf("%s\n", o->report_gbits ? RESULT_FMT_G : RESULT_FMT);
	fflush(stdout);
}

void bw_make_report(const struct bw_opts *o, const struct bw_result *r,
		    struct bw_report *rep)
{
	double factor = o->report_gbits ? 125000000.0 : (double)0x100000;
	double secs = r->seconds > 0 ? r->seconds : 1e-9;

	memset(rep, 0, sizeof(*rep));
	rep->size = r->size;
	rep->iters = r->iters;
	/* perftest: -n iterations per QP, the figures aggregate all QPs */
	rep->bw_avg = (double)r->size * (double)r->msgs / secs / factor;
	rep->bw_peak = r->peak_bps / factor;
	if (rep->bw_peak < rep->bw_avg)
		rep->bw_peak = rep->bw_avg;
	rep->msg_rate = (double)r->msgs / secs / 1e6;
}

static double row_cpu_s, row_wall_s; /* bw_set_row_cpu */

void bw_set_row_cpu(double cpu_s, double wall_s)
{
	row_cpu_s = cpu_s;
	row_wall_s = wall_s;
}

static double conn_rate(void)
{
	return bw_stats.connect_s > 0
		       ? (double)bw_stats.qps / bw_stats.connect_s
		       : 0;
}

void bw_print_setup(const struct bw_opts *o)
{
	if (o->json)
		return;
	printf(" Connection setup: %d QPs in %.3f s (%.0f per second)",
	       bw_stats.qps, bw_stats.connect_s, conn_rate());
	if (bw_stats.rss_before_kib >= 0 && bw_stats.rss_after_kib >= 0)
		printf(", RSS %ld -> %ld KiB", bw_stats.rss_before_kib,
		       bw_stats.rss_after_kib);
	printf("\n");
	fflush(stdout);
}

/* The JSON members common to every line: QPs, set-up, memory, CPU. */
static void json_common(const struct bw_opts *o, double cpu_s, double wall_s)
{
	printf(",\"num_qps\":%d,\"post_list\":%d,\"connect_s\":%.6f,\"connect_rate\":%.1f,"
	       "\"rss_before_kib\":%ld,\"rss_after_kib\":%ld",
	       bw_stats.qps, o->post_list, bw_stats.connect_s, conn_rate(),
	       bw_stats.rss_before_kib, bw_stats.rss_after_kib);
	if (wall_s > 0)
		printf(",\"cpu_s\":%.6f,\"wall_s\":%.6f,\"cpu_util\":%.2f",
		       cpu_s, wall_s, 100.0 * cpu_s / wall_s);
}

/* perftest --cpu_util: the CPU utilization line under a row. */
static void print_cpu(const struct bw_opts *o, double cpu_s, double wall_s)
{
	if (o->cpu_util && wall_s > 0)
		printf(" CPU util: %.2f%% (%.3f s CPU, all threads, over %.3f s)\n",
		       100.0 * cpu_s / wall_s, cpu_s, wall_s);
}

void bw_print_bw_row(const struct bw_opts *o, const struct bw_report *m,
		     const struct bw_report *rem)
{
	double peak = m->bw_peak, avg = m->bw_avg, rate = m->msg_rate;
	double cpu_s = row_cpu_s, wall_s = row_wall_s;

	if (rem) {
		peak += rem->bw_peak;
		avg += rem->bw_avg;
		rate += rem->msg_rate;
	}
	if (o->json) {
		printf("{\"test\":\"%s\",\"mode\":\"bw\",\"bidirectional\":%s,\"bytes\":%llu,"
		       "\"iterations\":%llu,\"bw_peak\":%.6f,\"bw_average\":%.6f,\"unit\":\"%s\","
		       "\"msg_rate_mpps\":%.6f",
		       test_json(o), o->duplex ? "true" : "false",
		       (unsigned long long)m->size,
		       (unsigned long long)m->iters, peak, avg,
		       o->report_gbits ? "Gb/sec" : "MB/sec", rate);
		json_common(o, cpu_s, wall_s);
		printf("}\n");
	} else if (avg < 0.1 && o->report_gbits) {
		printf(REPORT_FMT_EXT "\n", (unsigned long)m->size,
		       (unsigned long)m->iters, peak, avg, rate);
		print_cpu(o, cpu_s, wall_s);
	} else {
		printf(REPORT_FMT "\n", (unsigned long)m->size,
		       (unsigned long)m->iters, peak, avg, rate);
		print_cpu(o, cpu_s, wall_s);
	}
	row_cpu_s = row_wall_s = 0;
	fflush(stdout);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void bw_print_lat_row(const struct bw_opts *o, uint64_t size, uint64_t *t,
		      uint64_t n, double cpu_s, double wall_s)
{
	/* usec per sample; Send and Write report half the round trip */
	double q = (o->verb == BW_READ ? 1.0 : 2.0) * 1000.0;
	double sum = 0, var = 0, avg, med;
	uint64_t i, m, i99, i999;

	if (n < 2)
		return;
	for (i = 0; i + 1 < n; i++)
		t[i] = t[i + 1] - t[i];
	m = n - 1;
	qsort(t, (size_t)m, sizeof(*t), cmp_u64);
	for (i = 0; i < m; i++)
		sum += (double)t[i] / q;
	avg = sum / (double)m;
	for (i = 0; i < m; i++) {
		double dlt = avg - (double)t[i] / q;

		var += dlt * dlt;
	}
	med = m % 2 ? (double)t[m / 2] / q
		    : ((double)t[m / 2 - 1] + (double)t[m / 2]) / 2.0 / q;
	i99 = (uint64_t)ceil((double)m * 0.99);
	i999 = (uint64_t)ceil((double)m * 0.999);
	if (i99 >= m)
		i99 = m - 1;
	if (i999 >= m)
		i999 = m - 1;
	if (o->json) {
		printf("{\"test\":\"%s\",\"mode\":\"latency\",\"bytes\":%llu,\"iterations\":%llu,"
		       "\"t_min\":%.2f,\"t_max\":%.2f,\"t_typical\":%.2f,\"t_avg\":%.2f,"
		       "\"t_stdev\":%.2f,\"p99\":%.2f,\"p99_9\":%.2f,\"unit\":\"usec\"",
		       test_json(o), (unsigned long long)size,
		       (unsigned long long)n, (double)t[0] / q,
		       (double)t[m - 1] / q, med, avg, sqrt(var / (double)m),
		       (double)t[i99] / q, (double)t[i999] / q);
		json_common(o, cpu_s, wall_s);
		if (wall_s > 0)
			printf(",\"cpu_per_iter_us\":%.3f",
			       cpu_s * 1e6 / (double)n);
		printf("}\n");
	} else {
		printf(REPORT_FMT_LAT "\n", (unsigned long)size,
		       (unsigned long)n, (double)t[0] / q, (double)t[m - 1] / q,
		       med, avg, sqrt(var / (double)m), (double)t[i99] / q,
		       (double)t[i999] / q);
		print_cpu(o, cpu_s, wall_s);
		if (o->cpu_util && wall_s > 0)
			printf(" CPU per iteration: %.3f usec\n",
			       cpu_s * 1e6 / (double)n);
	}
	fflush(stdout);
}

void bw_progress(const struct bw_opts *o, uint64_t size, uint64_t done,
		 uint64_t total)
{
	if (!o->progress_line)
		return;
	if (!total) {
		fprintf(stderr, "\r\033[K");
		return;
	}
	fprintf(stderr, "\r\033[K %llu bytes: %llu/%llu (%.0f%%)",
		(unsigned long long)size, (unsigned long long)done,
		(unsigned long long)total,
		100.0 * (double)done / (double)total);
}
