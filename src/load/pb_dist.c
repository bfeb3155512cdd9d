/* pb_dist.c: reads back the .pb's record of a distributed run
 * (src/export/protobuf_dist.c): the rank metadata, defaulted where a file
 * (paddle's, or stepprof's before these fields) leaves it out, and each
 * collective's record onto its thread, attributed later as a live span's. */
#include "load.h"
#include "protobuf.h"

#include <string.h>

/* Copies s into dst (size bytes) when it fits whole. */
static void copy_whole(char *dst, size_t size, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n < size) memcpy(dst, s ? s : "", n + 1);
}

int sp__pb_read_dist(sp__builder *b, const sp__pb_trees *m)
{
    sp__span_meta *meta = &b->r->meta;
    meta->rank = m->has_stepprof_rank && m->stepprof_rank >= 0 ? m->stepprof_rank : 0;
    meta->world_size = m->has_stepprof_world_size ? m->stepprof_world_size : 1;
    int local = m->has_stepprof_local_rank && m->has_stepprof_local_world_size &&
                m->stepprof_local_rank >= 0 && m->stepprof_local_world_size > 0;
    meta->local_rank = local ? m->stepprof_local_rank : -1;
    meta->local_world_size = local ? m->stepprof_local_world_size : 0;
    copy_whole(meta->hostname, sizeof meta->hostname, m->stepprof_hostname);
    copy_whole(meta->job, sizeof meta->job, m->stepprof_job);
    if (sp__dist_backend_ok(m->stepprof_dist_backend))
        copy_whole(meta->dist_backend, sizeof meta->dist_backend, m->stepprof_dist_backend);
    sp__dist_meta_default(meta);
    for (size_t i = 0; i < m->n_stepprof_comms; i++) {
        const sp__pb_comm *p = m->stepprof_comms[i];
        if (!p || !p->has_thread_id || !p->has_timestamp_ns) continue;
        sp__thread *t = sp__builder_thread(b, p->thread_id);
        sp__comm *c = t ? sp__builder_comm(b, t) : NULL;
        if (!c) return -1;
        const char *coll = p->collective ? p->collective : "",
                   *group = p->process_group ? p->process_group : "";
        c->ts_ns = p->timestamp_ns;
        c->collective = sp__names_from_bytes(&b->r->names, coll, strlen(coll));
        c->group = sp__names_from_bytes(&b->r->names, group, strlen(group));
        c->group_size = p->has_group_size && p->group_size > 0 ? p->group_size : 0;
        c->bytes = p->has_bytes && p->bytes >= 0 ? p->bytes : -1;
        c->seq = p->has_seq && p->seq >= 0 ? p->seq : -1;
    }
    return 0;
}
