/*
 * tools/decode/main.c: iwarp_decode, a strict validator of captured iWARP
 * traffic (MPA RFC 5044 / RFC 6581, DDP RFC 5041, RDMAP RFC 5040).
 * See man/iwarp_decode.1.
 */
#include "config.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "decoder.h"
#include "output.h"
#include "pcapin.h"

#define EXIT_VALID   0
#define EXIT_INVALID 1
#define EXIT_USAGE   2

static void usage(FILE *fp)
{
	fprintf(fp,
		"Usage: iwarp_decode [OPTIONS] FILE\n"
		"Validate the iWARP traffic (MPA, DDP, RDMAP) in a pcap or "
		"pcapng capture.\n"
		"\n"
		"  --json         one JSON object: units, connections, errors "
		"(default: text)\n"
		"  -q, --quiet    summary and findings only, no unit lines\n"
		"  -T, --terminate-is-error\n"
		"                 count a well-formed Terminate as an error "
		"(default: warning)\n"
		"  -h, --help     this help\n"
		"  -V, --version  print the version\n"
		"\n"
		"Exit status: 0 valid, 1 invalid traffic found, 2 usage or "
		"file error.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{"terminate-is-error", no_argument, NULL, 'T'},
		{NULL, 0, NULL, 0},
	};
	struct dec_decoder *d;
	struct dec_sink sink;
	struct dec_out out;
	bool json = false, quiet = false, term_error = false;
	char err[512];
	unsigned errors;
	int c;

	while ((c = getopt_long(argc, argv, "qhVT", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'T':
			term_error = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_VALID;
		case 'V':
			printf("iwarp_decode (%s) %s\n", PACKAGE_NAME,
			       PACKAGE_VERSION);
			return EXIT_VALID;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	dec_out_init(&out, stdout, argv[optind], json, quiet);
	sink = dec_out_sink(&out);
	d = dec_decoder_new(&sink);
	if (!d) {
		fprintf(stderr, "iwarp_decode: out of memory\n");
		return EXIT_USAGE;
	}
	dec_decoder_set_terminate_error(d, term_error);
	if (dec_pcap_read(argv[optind], d, err, sizeof(err)) < 0) {
		fprintf(stderr, "iwarp_decode: %s\n", err);
		dec_decoder_free(d);
		if (json)
			fprintf(stdout, "]}\n");
		return EXIT_USAGE;
	}
	dec_decoder_finish(d);
	errors = dec_decoder_errors(d);
	dec_out_finish(&out, errors, dec_decoder_warnings(d));
	dec_decoder_free(d);
	if (fflush(stdout) != 0)
		return EXIT_USAGE;
	return errors ? EXIT_INVALID : EXIT_VALID;
}
