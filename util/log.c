/*
 * util/log.c: the debug log (util/log.h).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"

bool iw_log_enabled(void)
{
	/* read each time: log lines are rare, and a test may set it late */
	const char *v = getenv("IWARP_DEBUG");

	return v && *v && strcmp(v, "0") != 0;
}

void iw_log(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	if (!iw_log_enabled())
		return;
	memcpy(line, "libiwarp: ", 10);
	va_start(ap, fmt);
	n = vsnprintf(line + 10, sizeof(line) - 11, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	n += 10;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	/* best effort: a debug line that cannot be written is dropped */
	if (write(STDERR_FILENO, line, (size_t)n) < 0)
		return;
}
