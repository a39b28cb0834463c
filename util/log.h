/*
 * util/log.h: the library's debug log. Off unless the environment variable
 * IWARP_DEBUG is set to a non-empty value other than "0"; lines
 * go to stderr prefixed with "libiwarp: ". For conditions an application
 * would otherwise have to guess at (iwarp(7), Environment).
 */
#ifndef IWARP_UTIL_LOG_H
#define IWARP_UTIL_LOG_H

#include <stdbool.h>

/* True when IWARP_DEBUG enables the log. Thread-safe (getenv). */
bool iw_log_enabled(void);

/* Writes one line (printf format, no trailing newline needed) when the log
 * is enabled. Thread-safe: one write(2) a line. */
void iw_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
