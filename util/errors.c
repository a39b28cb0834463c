/* util/errors.c: iwarp_strerror, iwarp_error_to_term, iwarp_term_strerror. */
#include "config.h"
