/*
 * tools/ping/main.c: iwarp_ping, rping over libiwarp. See iwarp_ping(1).
 */
#include "config.h"

#include "tools/common/stop.h"
#include "tools/ping/ping.h"

int main(int argc, char **argv)
{
	struct ping_opts o;
	int ret;

	ret = ping_opts_parse(&o, argc, argv);
	if (ret > 0)
		return PING_EXIT_OK;
	if (ret < 0)
		return PING_EXIT_USAGE;
	/* after SIGINT/SIGTERM: killed by the signal, once torn down */
	return tool_stop_exit(ping_run(&o));
}
