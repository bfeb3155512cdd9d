/* mpi_colls.c: every collective that libstepprof_mpi.so wraps, once, on
 * MPI_COMM_WORLD (some in place), then on communicators of three kinds: the
 * two halves of a split (unnamed: "comm0@<leader>"), a named duplicate, and,
 * after the split is freed, another split (a new "comm1@<leader>" with its
 * own seq). tests/examples/mpi_colls_check.py runs it on 4 ranks with the
 * wrapper preloaded and knows what each call must record. No stepprof in it. */
#include <mpi.h>

#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, world;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    static int ints[64], got[64];
    static double dbl[64];
    static char chars[64];
    static float floats[64];
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Reduce(ints, got, 10, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Allgather(dbl, 3, MPI_DOUBLE, dbl + 8, 3, MPI_DOUBLE, MPI_COMM_WORLD);
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ints, 2, MPI_INT, MPI_COMM_WORLD);
    MPI_Gather(chars, 5, MPI_CHAR, chars + 8, 5, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Scatter(floats + 16, 4, MPI_FLOAT, floats, 4, MPI_FLOAT, 0, MPI_COMM_WORLD);
    MPI_Alltoall(ints, 2, MPI_INT, got, 2, MPI_INT, MPI_COMM_WORLD);
    MPI_Reduce_scatter_block(ints, got, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

    MPI_Comm half, named, again;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Allreduce(MPI_IN_PLACE, ints, 1, MPI_INT, MPI_SUM, half);
    MPI_Comm_dup(MPI_COMM_WORLD, &named);
    MPI_Comm_set_name(named, "grads");
    MPI_Bcast(chars, 7, MPI_CHAR, 0, named);
    MPI_Comm_free(&half);
    MPI_Comm_split(MPI_COMM_WORLD, rank < world / 2, rank, &again);
    MPI_Allreduce(MPI_IN_PLACE, ints, 1, MPI_INT, MPI_SUM, again);
    MPI_Comm_free(&again);
    MPI_Comm_free(&named);
    MPI_Finalize();
    return 0;
}
