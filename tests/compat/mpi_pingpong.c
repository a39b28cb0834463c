/*
 * tests/compat/mpi_pingpong.c: an MPI ping-pong between ranks 0 and 1 for
 * the mpi_pingpong row of tests/compat_programs.sh (built there with
 * mpicc). Rank 0 sends SIZE octets, rank 1 checks every octet and answers
 * with the next pattern, which rank 0 checks; 10 warm-up rounds, then
 * ROUNDS timed ones. Exit 0 only when every octet was right.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIZE   4096
#define WARMUP 10
#define ROUNDS 200

static int check(const unsigned char *b, int pattern)
{
	int i;

	for (i = 0; i < SIZE; i++)
		if (b[i] != (unsigned char)(pattern + i))
			return 0;
	return 1;
}

static void fill(unsigned char *b, int pattern)
{
	int i;

	for (i = 0; i < SIZE; i++)
		b[i] = (unsigned char)(pattern + i);
}

int main(int argc, char **argv)
{
	static unsigned char buf[SIZE];
	int rank, size, i, ok = 1;
	double t0 = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "mpi_pingpong: run with 2 ranks\n");
		MPI_Finalize();
		return 2;
	}
	for (i = 0; i < WARMUP + ROUNDS; i++) {
		if (i == WARMUP)
			t0 = MPI_Wtime();
		if (rank == 0) {
			fill(buf, 2 * i);
			MPI_Send(buf, SIZE, MPI_UNSIGNED_CHAR, 1, 0,
				 MPI_COMM_WORLD);
			MPI_Recv(buf, SIZE, MPI_UNSIGNED_CHAR, 1, 0,
				 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			ok &= check(buf, 2 * i + 1);
		} else {
			MPI_Recv(buf, SIZE, MPI_UNSIGNED_CHAR, 0, 0,
				 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			ok &= check(buf, 2 * i);
			fill(buf, 2 * i + 1);
			MPI_Send(buf, SIZE, MPI_UNSIGNED_CHAR, 0, 0,
				 MPI_COMM_WORLD);
		}
	}
	if (rank == 0)
		printf("mpi_pingpong: %d round trips of %d octets, %s, "
		       "%.1f us per round trip\n",
		       ROUNDS, SIZE, ok ? "data verified" : "DATA WRONG",
		       (MPI_Wtime() - t0) * 1e6 / ROUNDS);
	else if (!ok)
		fprintf(stderr, "mpi_pingpong: rank 1 received wrong data\n");
	MPI_Finalize();
	return ok ? 0 : 1;
}
