/*
 * compat/verbs/device.c: the one ibverbs device of the compat library,
 * "iwarp0" (an RNIC with the iWARP transport), and its identity: a MAC
 * address (the first non-loopback interface that has one) from which the
 * GID and an EUI-64 node GUID are derived, so both are stable across runs
 * on one host.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <ifaddrs.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat/verbs/iwc.h"

/* Direct-verbs libraries (libmlx5's mlx5dv_is_supported...) read the
 * provider fields libibverbs keeps after a struct ibv_device: zeroed room
 * for them, so such a read finds no provider instead of other data. */
static struct {
	struct ibv_device dev;
	void *provider_room[16];
} iwc_dev_storage = {
	.dev =
		{
			.node_type = IBV_NODE_RNIC,
			.transport_type = IBV_TRANSPORT_IWARP,
			.name = "iwarp0",
			.dev_name = "iwarp0",
			.dev_path = "",
			.ibdev_path = "",
		},
};
#define iwc_dev (iwc_dev_storage.dev)

static pthread_once_t ident_once = PTHREAD_ONCE_INIT;
static uint8_t ident_mac[6];
static uint64_t ident_guid;

/* FNV-1a over a file's first line: the fallback identity of a host
 * without an Ethernet-like interface (containers with only lo). */
static uint64_t hash_file(const char *path)
{
	uint64_t h = 0xcbf29ce484222325ull;
	char line[128];
	FILE *f = fopen(path, "re");

	if (!f)
		return h;
	if (fgets(line, sizeof(line), f))
		for (const char *p = line; *p && *p != '\n'; p++)
			h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
	fclose(f);
	return h;
}

static void ident_init(void)
{
	struct ifaddrs *ifa_list = NULL, *ifa;
	unsigned int best_index = 0;
	bool found = false;

	if (getifaddrs(&ifa_list) == 0) {
		for (ifa = ifa_list; ifa; ifa = ifa->ifa_next) {
			const struct sockaddr_ll *ll;
			static const uint8_t zero[6];

			if (!ifa->ifa_addr ||
			    ifa->ifa_addr->sa_family != AF_PACKET ||
			    (ifa->ifa_flags & IFF_LOOPBACK))
				continue;
			ll = (const struct sockaddr_ll *)(const void *)
				     ifa->ifa_addr;
			if (ll->sll_halen != 6 ||
			    !memcmp(ll->sll_addr, zero, 6))
				continue;
			if (found &&
			    (unsigned int)ll->sll_ifindex >= best_index)
				continue;
			best_index = (unsigned int)ll->sll_ifindex;
			memcpy(ident_mac, ll->sll_addr, 6);
			found = true;
		}
		freeifaddrs(ifa_list);
	}
	if (!found) {
		uint64_t h = hash_file("/etc/machine-id");

		for (int i = 0; i < 6; i++)
			ident_mac[i] = (uint8_t)(h >> (8 * i));
		/* a locally administered unicast address */
		ident_mac[0] = (uint8_t)((ident_mac[0] & 0xfc) | 0x02);
	}
	/* EUI-64 from the MAC: flip the universal/local bit, insert ff:fe */
	ident_guid = (uint64_t)(ident_mac[0] ^ 0x02) << 56 |
		     (uint64_t)ident_mac[1] << 48 |
		     (uint64_t)ident_mac[2] << 40 | 0xfffe000000ull |
		     (uint64_t)ident_mac[3] << 16 |
		     (uint64_t)ident_mac[4] << 8 | ident_mac[5];
}

uint64_t iwc_node_guid(void)
{
	pthread_once(&ident_once, ident_init);
	return ident_guid;
}

void iwc_node_mac(uint8_t mac[6])
{
	pthread_once(&ident_once, ident_init);
	memcpy(mac, ident_mac, 6);
}

struct ibv_device *iwc_device(void)
{
	return &iwc_dev;
}

IWC_EXPORT struct ibv_device **ibv_get_device_list(int *num_devices)
{
	struct ibv_device **list = calloc(2, sizeof(*list));

	if (!list) {
		errno = ENOMEM;
		return NULL;
	}
	list[0] = &iwc_dev;
	if (num_devices)
		*num_devices = 1;
	return list;
}

IWC_EXPORT void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

IWC_EXPORT const char *ibv_get_device_name(struct ibv_device *device)
{
	if (device != &iwc_dev) {
		errno = EINVAL;
		return NULL;
	}
	return device->name;
}

IWC_EXPORT __be64 ibv_get_device_guid(struct ibv_device *device)
{
	if (device != &iwc_dev) {
		errno = EINVAL;
		return 0;
	}
	return htobe64(iwc_node_guid());
}

IWC_EXPORT int ibv_get_device_index(struct ibv_device *device)
{
	return device == &iwc_dev ? 0 : -1;
}
