/*
 * compat/rdmacm/device.c: the device every id uses.
 *
 * librdmacm opens every RDMA device at start and gives each id the context
 * of the device its address maps to. libiwarp has one device, so one
 * context, opened through the compat libibverbs on first use, serves every
 * id of the process (id->verbs); a default PD on it serves rdma_create_qp()
 * with pd NULL. Both live as long as the process.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "compat/rdmacm/cma.h"

static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ibv_context *dev_ctx;
static struct ibv_pd *dev_pd;

struct ibv_context *cma_verbs(void)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	int n = 0, err = 0;

	pthread_mutex_lock(&dev_lock);
	ctx = dev_ctx;
	if (!ctx) {
		list = ibv_get_device_list(&n);
		if (!list || n < 1) {
			err = list ? ENODEV : errno;
		} else {
			ctx = ibv_open_device(list[0]);
			if (!ctx)
				err = errno ? errno : ENODEV;
		}
		if (list)
			ibv_free_device_list(list);
		if (ctx && !iwc_native_context(ctx)) {
			/* another libibverbs is loaded: not ours */
			ibv_close_device(ctx);
			ctx = NULL;
			err = ENODEV;
		}
		dev_ctx = ctx;
	}
	pthread_mutex_unlock(&dev_lock);
	if (!ctx)
		errno = err;
	return ctx;
}

struct ibv_pd *cma_default_pd(struct ibv_context *verbs)
{
	struct ibv_pd *pd;

	if (verbs != cma_verbs()) {
		errno = EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&dev_lock);
	if (!dev_pd)
		dev_pd = ibv_alloc_pd(verbs);
	pd = dev_pd;
	pthread_mutex_unlock(&dev_lock);
	return pd;
}

struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct ibv_context *ctx = cma_verbs();
	struct ibv_context **list = calloc(2, sizeof(*list));

	if (!list)
		return NULL;
	list[0] = ctx; /* NULL-terminated: empty when the device failed */
	if (num_devices)
		*num_devices = ctx ? 1 : 0;
	return list;
}

void rdma_free_devices(struct ibv_context **list)
{
	free(list);
}
