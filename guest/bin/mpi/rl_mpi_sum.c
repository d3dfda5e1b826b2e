/*
 * rl_mpi_sum: an MPI job that checks itself: every rank contributes rank + 1 to an
 * MPI_Allreduce (MPI_SUM), every rank checks the sum against n(n+1)/2, and rank 0
 * prints where each rank ran (MPI_Get_processor_name, gathered) and
 *   RESULT mpi_sum ranks=N sum=S expected=E
 * Exit status 0 when every rank got the expected sum, 1 otherwise.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, len, ok, all_ok;
    long mine, sum, expected;
    char name[MPI_MAX_PROCESSOR_NAME] = "", *names = NULL;
    static char gathered[64 * MPI_MAX_PROCESSOR_NAME];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(name, &len);
    if (size <= 64)
        names = gathered;
    MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME,
               MPI_CHAR, 0, MPI_COMM_WORLD);

    mine = rank + 1;
    expected = (long)size * (size + 1) / 2;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    ok = sum == expected;
    MPI_Reduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 0; names && r < size; r++)
            printf("rank %d on %s\n", r, names + r * MPI_MAX_PROCESSOR_NAME);
        printf("RESULT mpi_sum ranks=%d sum=%ld expected=%ld all_ranks_agree=%d\n",
               size, sum, expected, all_ok);
        fflush(stdout);
    }
    MPI_Finalize();
    return rank == 0 ? !all_ok : !ok;
}
