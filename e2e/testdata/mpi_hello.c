/* An MPI "hello" for the parallel-jobs tests: every rank prints its rank,
 * the world size, its node (LONGFAIR_EXEC_NODE, which `longfair exec`
 * sets on the node it starts the rank's launcher on; Hydra passes the
 * head's LONGFAIR_NODE_ID to every rank) and its pid, then all ranks agree on a sum. With an argument N it
 * then sleeps N seconds, so a test can kill one of its nodes mid-run. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank, size, sum = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	const char *node = getenv("LONGFAIR_EXEC_NODE");
	printf("rank %d of %d on %s pid %d\n", rank, size, node ? node : "?", (int)getpid());
	fflush(stdout);
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0) {
		printf("sum %d\n", sum);
		fflush(stdout);
	}
	if (argc > 1)
		sleep(atoi(argv[1]));
	MPI_Finalize();
	return 0;
}
