/* mpi_wrap.c: libstepprof_mpi.so, a PMPI wrapper library. LD_PRELOAD'ed
 * into an unmodified MPI program (C bindings), its MPI_ collectives come
 * here: each calls its PMPI_ twin inside an SP_EVENT_COMMUNICATION range
 * named after the call ("MPI_Allreduce"), and, while stepprof records,
 * notes what the collective did (operation, communicator, group size, the
 * bytes this rank sends, its sequence number on the communicator) in a
 * buffer of its own. The profiler is the process's environment profiler
 * (libstepprof.so, loaded with this library, makes it from STEPPROF_*), or
 * any profiler the program makes: this library holds no profiler handle, so
 * it registers a collection hook (sp_collect_hook_add) through which the
 * profiler's driving thread takes the buffer at collection
 * (sp_profiler_add_comm_info) and which empties it when a span starts.
 *
 * Invariants: `lock` guards the buffer and the communicator numbering; a
 * communicator's state (its seq counter and name) hangs on it as an MPI
 * attribute, so it goes with MPI_Comm_free and is never shared by a later
 * communicator at the same address. Seq counts every collective from the
 * first, recorded or not, so the same call has the same seq on every rank.
 * Nothing here calls into stepprof beyond the inline range calls and
 * sp_is_recording unless a span is being recorded. */
#define _GNU_SOURCE
#include <mpi.h>
#include <stepprof/stepprof.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SP_MPI_API __attribute__((visibility("default")))

/* Records kept per span (STEPPROF_MPI_RECORDS changes it); past it
 * collectives are still ranges, without their description, and counted.
 * ~120 bytes each: at most ~30 MB by default. */
enum { RECORDS_DEFAULT = 1 << 18, GROUP_MAX = 64 };

typedef struct comm_state {
    int64_t seq; /* the next collective's index on this communicator */
    int size;
    char name[GROUP_MAX];
} comm_state;

typedef struct record {
    uint64_t tid;
    int64_t time_ns;
    const char *collective; /* static */
    int64_t group_size, bytes, seq;
    char group[GROUP_MAX];
} record;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static record *records;
static size_t record_count, record_room, records_max = RECORDS_DEFAULT;
static uint64_t dropped;
static int drop_said;
static int keyval = MPI_KEYVAL_INVALID;
static int next_comm;   /* "comm<N>@<leader>": unnamed communicators, by first use */
static atomic_int used; /* a wrapped collective ran: the backend is "mpi" */

static int64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int forget_state(MPI_Comm comm, int key, void *state, void *extra)
{
    (void)comm, (void)key, (void)extra;
    free(state);
    return MPI_SUCCESS;
}

/* The MPI_COMM_WORLD rank of comm's rank 0, or -1. It tells apart the
 * groups of one split, which the ranks of each group number alike. */
static int leader_of(MPI_Comm comm)
{
    MPI_Group group, world;
    int zero = 0, leader = -1;
    if (PMPI_Comm_group(comm, &group) != MPI_SUCCESS) return -1;
    if (PMPI_Comm_group(MPI_COMM_WORLD, &world) == MPI_SUCCESS) {
        PMPI_Group_translate_ranks(group, 1, &zero, world, &leader);
        PMPI_Group_free(&world);
    }
    PMPI_Group_free(&group);
    return leader == MPI_UNDEFINED ? -1 : leader;
}

/* comm's state, made at its first collective; NULL for MPI_COMM_NULL (the
 * PMPI_ call reports that) or when memory runs out. Called under lock. */
static comm_state *state_of(MPI_Comm comm)
{
    if (comm == MPI_COMM_NULL) return NULL;
    if (keyval == MPI_KEYVAL_INVALID &&
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, forget_state, &keyval, NULL) != MPI_SUCCESS)
        return NULL;
    void *v = NULL;
    int found = 0;
    if (PMPI_Comm_get_attr(comm, keyval, &v, &found) != MPI_SUCCESS) return NULL;
    if (found) return v;
    comm_state *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    PMPI_Comm_size(comm, &s->size);
    char name[MPI_MAX_OBJECT_NAME] = "";
    int len = 0;
    PMPI_Comm_get_name(comm, name, &len);
    if (len > 0)
        snprintf(s->name, sizeof s->name, "%s", name);
    else
        snprintf(s->name, sizeof s->name, "comm%d@%d", next_comm++, leader_of(comm));
    if (PMPI_Comm_set_attr(comm, keyval, s) != MPI_SUCCESS) {
        free(s);
        return NULL;
    }
    return s;
}

static void keep(const record *r)
{
    if (record_count == record_room) {
        size_t room = record_room ? record_room * 2 : 256;
        if (room > records_max) room = records_max;
        record *grown = room > record_room ? realloc(records, room * sizeof *grown) : NULL;
        if (!grown) {
            dropped++;
            if (!drop_said) {
                drop_said = 1;
                fprintf(stderr,
                        "stepprof_mpi: more than %zu collectives in one span; the rest "
                        "are recorded as ranges without their description\n",
                        record_count);
            }
            return;
        }
        records = grown;
        record_room = room;
    }
    records[record_count++] = *r;
}

/* What a collective's bytes are: count elements of type, times the group
 * size when times_group is set. */
typedef struct sizes {
    int count;
    MPI_Datatype type;
    int times_group;
} sizes;

/* Opens the collective's range; returns the time after it opened while
 * stepprof records, else 0. */
static int64_t begin(const char *range)
{
    sp_range_begin(SP_EVENT_COMMUNICATION, range);
    return sp_is_recording() ? realtime_ns() : 0;
}

/* After the PMPI_ call returned rc: takes the collective's seq and, when it
 * began while stepprof recorded, notes it, timed halfway through the call
 * so that the time lies well inside its range. Then closes the range. A
 * communicator's collectives never overlap (MPI forbids it), so taking seq
 * after the call orders them as the ranks do. */
static int end(int rc, int64_t t0_ns, const char *collective, MPI_Comm comm, sizes sz)
{
    atomic_store_explicit(&used, 1, memory_order_relaxed);
    pthread_mutex_lock(&lock);
    comm_state *s = state_of(comm);
    if (s) {
        int64_t seq = s->seq++;
        if (t0_ns && sp_is_recording()) {
            record r = {(uint64_t)syscall(SYS_gettid),
                        t0_ns + (realtime_ns() - t0_ns) / 2,
                        collective,
                        s->size,
                        0,
                        seq,
                        ""};
            int type_bytes = 0;
            if (sz.count > 0 && PMPI_Type_size(sz.type, &type_bytes) == MPI_SUCCESS)
                r.bytes = (int64_t)sz.count * type_bytes * (sz.times_group ? s->size : 1);
            memcpy(r.group, s->name, sizeof r.group);
            keep(&r);
        }
    }
    pthread_mutex_unlock(&lock);
    sp_range_end();
    return rc;
}

/* ---- hand-over, on the thread that drives the profiler ---- */

static void collect_hook(sp_profiler *prof, sp_span_event event, void *user)
{
    (void)user;
    pthread_mutex_lock(&lock);
    if (event == SP_SPAN_COLLECT) {
        sp_comm_info batch[64];
        for (size_t i = 0; i < record_count; i += 64) {
            size_t n = record_count - i < 64 ? record_count - i : 64;
            for (size_t k = 0; k < n; k++) {
                const record *r = &records[i + k];
                batch[k] =
                    (sp_comm_info){r->tid,   r->time_ns,       r->collective, strlen(r->collective),
                                   r->group, strlen(r->group), r->group_size, r->bytes,
                                   r->seq};
            }
            if (sp_profiler_add_comm_info(prof, batch, n) != SP_OK) break;
        }
        if (atomic_load_explicit(&used, memory_order_relaxed) && !getenv("STEPPROF_DIST_BACKEND"))
            sp_profiler_set_dist_backend(prof, "mpi");
    }
    /* BEGIN: what was noted before the span (READY's warm-up) is not its. */
    record_count = 0;
    if (records && record_room > 4096) { /* keep a big span's memory no longer than it */
        free(records);
        records = NULL;
        record_room = 0;
    }
    pthread_mutex_unlock(&lock);
}

__attribute__((constructor)) static void register_hook(void)
{
    const char *max = getenv("STEPPROF_MPI_RECORDS");
    if (max && *max) {
        char *rest;
        unsigned long long n = strtoull(max, &rest, 10);
        if (*rest || n == 0 || n > (1ull << 24) || *max == '-')
            fprintf(stderr,
                    "stepprof_mpi: STEPPROF_MPI_RECORDS='%s' is not a number of "
                    "collectives from 1 to %llu; it stays %zu\n",
                    max, 1ull << 24, records_max);
        else
            records_max = (size_t)n;
    }
    if (sp_collect_hook_add(collect_hook, NULL) != SP_OK)
        fprintf(stderr, "stepprof_mpi: %s; collectives are recorded as ranges only\n",
                sp_last_error());
}

__attribute__((destructor)) static void say_dropped(void)
{
    if (dropped)
        fprintf(stderr, "stepprof_mpi: %llu collectives were not described (over %zu per span)\n",
                (unsigned long long)dropped, records_max);
}

/* ---- the wrapped collectives (MPI-3 C bindings) ---- */

static sizes of(int count, MPI_Datatype type)
{
    return (sizes){count, type, 0};
}
static sizes of_group(int count, MPI_Datatype type)
{
    return (sizes){count, type, 1};
}

SP_MPI_API int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                             MPI_Op op, MPI_Comm comm)
{
    int64_t t0 = begin("MPI_Allreduce");
    int rc = PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
    return end(rc, t0, "allreduce", comm, of(count, type));
}

SP_MPI_API int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                          MPI_Op op, int root, MPI_Comm comm)
{
    int64_t t0 = begin("MPI_Reduce");
    int rc = PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
    return end(rc, t0, "reduce", comm, of(count, type));
}

/* Every rank's figure is the message's size, the root's as the others'. */
SP_MPI_API int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    int64_t t0 = begin("MPI_Bcast");
    int rc = PMPI_Bcast(buf, count, type, root, comm);
    return end(rc, t0, "broadcast", comm, of(count, type));
}

/* MPI_IN_PLACE: the rank's part is already in recvbuf, recvcount of it. */
SP_MPI_API int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    int64_t t0 = begin("MPI_Allgather");
    int rc = PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    return end(rc, t0, "allgather", comm,
               sendbuf == MPI_IN_PLACE ? of(recvcount, recvtype) : of(sendcount, sendtype));
}

SP_MPI_API int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                          int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    int64_t t0 = begin("MPI_Gather");
    int rc = PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    return end(rc, t0, "gather", comm,
               sendbuf == MPI_IN_PLACE ? of(recvcount, recvtype) : of(sendcount, sendtype));
}

/* Every rank's figure is its own part (at an in-place root, sendcount). */
SP_MPI_API int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    int64_t t0 = begin("MPI_Scatter");
    int rc = PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    return end(rc, t0, "scatter", comm,
               recvbuf == MPI_IN_PLACE ? of(sendcount, sendtype) : of(recvcount, recvtype));
}

SP_MPI_API int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    int64_t t0 = begin("MPI_Alltoall");
    int rc = PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    return end(rc, t0, "alltoall", comm,
               sendbuf == MPI_IN_PLACE ? of_group(recvcount, recvtype)
                                       : of_group(sendcount, sendtype));
}

SP_MPI_API int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                        MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    int64_t t0 = begin("MPI_Reduce_scatter_block");
    int rc = PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
    return end(rc, t0, "reduce_scatter", comm, of_group(recvcount, type));
}

SP_MPI_API int MPI_Barrier(MPI_Comm comm)
{
    int64_t t0 = begin("MPI_Barrier");
    int rc = PMPI_Barrier(comm);
    return end(rc, t0, "barrier", comm, of(0, MPI_BYTE));
}
