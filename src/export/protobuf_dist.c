/* protobuf_dist.c: the .pb's record of a distributed run, in stepprof's
 * own root fields (nodetree.proto, 120 and up) that paddle's reader skips:
 * the rank metadata of distributedInfo and every collective's record,
 * which the loader (src/load/load_pb.c) turns back into the same result. */
#include "protobuf.h"

int sp__pb_fill_dist(sp__pb_scratch *s, const sp_result *r, sp__pb_trees *m)
{
    const sp__span_meta *meta = &r->meta;
    m->has_stepprof_rank = m->has_stepprof_world_size = 1;
    m->has_stepprof_local_rank = m->has_stepprof_local_world_size = 1;
    m->stepprof_rank = meta->rank;
    m->stepprof_world_size = meta->world_size;
    m->stepprof_local_rank = meta->local_rank;
    m->stepprof_local_world_size = meta->local_world_size;
    m->stepprof_hostname = (char *)meta->hostname;
    m->stepprof_job = (char *)meta->job;
    m->stepprof_dist_backend = (char *)meta->dist_backend;
    size_t n = 0;
    for (size_t i = 0; i < r->thread_count; i++)
        n += r->threads[i].comm_count;
    if (n == 0) return 0;
    sp__pb_comm **ptrs = sp__pb_scratch_alloc(s, sizeof *ptrs * n);
    sp__pb_comm *comms = sp__pb_scratch_alloc(s, sizeof *comms * n);
    if (!ptrs || !comms) return -1;
    size_t k = 0;
    for (size_t i = 0; i < r->thread_count; i++) {
        const sp__thread *t = &r->threads[i];
        for (size_t j = 0; j < t->comm_count; j++, k++) {
            const sp__comm *c = &t->comms[j];
            sp__pb_comm *p = &comms[k];
            *p = (sp__pb_comm)PADDLE__PLATFORM__STEPPROF_COMM_PROTO__INIT;
            p->has_thread_id = p->has_timestamp_ns = 1;
            p->thread_id = t->tid;
            p->timestamp_ns = c->ts_ns;
            p->collective = (char *)sp__result_name(r, c->collective);
            p->process_group = (char *)sp__result_name(r, c->group);
            p->has_group_size = p->has_bytes = p->has_seq = 1;
            p->group_size = c->group_size;
            p->bytes = c->bytes;
            p->seq = c->seq;
            ptrs[k] = p;
        }
    }
    m->n_stepprof_comms = n;
    m->stepprof_comms = ptrs;
    return 0;
}
