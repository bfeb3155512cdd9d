/* model_gpu.c: the GPU half of the analysis model (semantics.md §5.2, §6.0).
 * Device records reach a node through their runtime call, which attribute.c
 * attached to the innermost host range containing its start: a node's
 * self_gpu is the kernel time of its own runtime calls, gpu adds its
 * descendants', ggpu counts memcpy and memset too. Sums are plain sums:
 * overlapping work on two streams is added, not merged. The time-range side
 * unions device intervals per type over all devices and streams, and kernel
 * intervals per device for the Device Summary. */
#include "model.h"

#include <stdlib.h>
#include <string.h>

static int device_slot(int type)
{
    return type == SP_EVENT_KERNEL ? 0 : type == SP_EVENT_MEMCPY ? 1 : type == SP_EVENT_MEMSET ? 2 : -1;
}

/* Per-runtime kernel and general device time, indexed like the thread's runtimes. */
typedef struct rt_time {
    int64_t gpu, ggpu;
} rt_time;

static void charge_nodes(sp__thread_model *t, const rt_time *times)
{
    const sp__thread *th = t->thread;
    for (size_t k = 0; k < th->runtime_count; k++) {
        const sp__runtime *rt = &th->runtimes[k];
        int32_t n = rt->host >= 0 ? sp__model_node_of(t, rt->host) : -1;
        if (n < 0) {
            t->root_gpu += times[k].gpu;
            t->root_ggpu += times[k].ggpu;
            continue;
        }
        sp__node *nd = &t->nodes[n];
        nd->self_gpu += times[k].gpu;
        nd->gpu += times[k].gpu;
        nd->ggpu += times[k].ggpu;
        int64_t dur = rt->end_ns > rt->start_ns ? rt->end_ns - rt->start_ns : 0;
        nd->self_cpu = nd->self_cpu > dur ? nd->self_cpu - dur : 0;
    }
    /* Children follow their parents, so a reverse pass carries totals up. */
    for (size_t k = t->count; k-- > 0;) {
        const sp__node *nd = &t->nodes[k];
        if (nd->parent >= 0) {
            t->nodes[nd->parent].gpu += nd->gpu;
            t->nodes[nd->parent].ggpu += nd->ggpu;
        } else {
            t->root_gpu += nd->gpu;
            t->root_ggpu += nd->ggpu;
        }
    }
}

static int add_runtime_ranges(sp__model *m, const sp__thread *th)
{
    sp__spans local;
    sp__spans_init(&local);
    for (size_t k = 0; k < th->runtime_count; k++)
        sp__spans_add(&local, th->runtimes[k].start_ns, th->runtimes[k].end_ns);
    sp__spans_merge(&local);
    for (size_t i = 0; i < local.n; i++)
        sp__spans_add(&m->cpu_ranges[SP_EVENT_CUDA_RUNTIME], local.v[i].start, local.v[i].end);
    m->calls[SP_EVENT_CUDA_RUNTIME] += (int64_t)th->runtime_count;
    int failed = local.failed || m->cpu_ranges[SP_EVENT_CUDA_RUNTIME].failed;
    sp__spans_fini(&local);
    return failed ? -1 : 0;
}

static int by_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Device ids in ascending order and each one's kernel union. */
static int per_device(sp__model *m, const sp_result *r)
{
    if (r->device_count == 0) return 0;
    m->device_ids = sp__alloc(sizeof *m->device_ids * r->device_count);
    m->device_kernel_sum = sp__alloc(sizeof *m->device_kernel_sum * r->device_count);
    if (!m->device_ids || !m->device_kernel_sum) return -1;
    for (size_t d = 0; d < r->device_count; d++) m->device_ids[d] = r->devices[d].device;
    qsort(m->device_ids, r->device_count, sizeof *m->device_ids, by_u32);
    size_t n = 0;
    for (size_t d = 0; d < r->device_count; d++)
        if (n == 0 || m->device_ids[n - 1] != m->device_ids[d]) m->device_ids[n++] = m->device_ids[d];
    m->device_count = n;
    for (size_t i = 0; i < n; i++) {
        sp__spans k;
        sp__spans_init(&k);
        for (size_t d = 0; d < r->device_count; d++)
            if (r->devices[d].device == m->device_ids[i] && r->devices[d].type == SP_EVENT_KERNEL)
                sp__spans_add(&k, r->devices[d].start_ns, r->devices[d].end_ns);
        sp__spans_merge(&k);
        m->device_kernel_sum[i] = sp__spans_length(&k);
        int failed = k.failed;
        sp__spans_fini(&k);
        if (failed) return -1;
    }
    return 0;
}

int sp__model_add_gpu(sp__model *m)
{
    const sp_result *r = m->result;
    for (size_t d = 0; d < r->device_count; d++) {
        const sp__device_rec *dev = &r->devices[d];
        int slot = device_slot(dev->type);
        if (slot < 0) continue;
        sp__spans_add(&m->gpu_ranges[slot], dev->start_ns, dev->end_ns);
        m->gpu_calls[slot]++;
    }
    for (int s = 0; s < 3; s++) {
        sp__spans_merge(&m->gpu_ranges[s]);
        m->gpu_sum[s] = sp__spans_length(&m->gpu_ranges[s]);
        if (m->gpu_ranges[s].failed) return -1;
    }
    for (size_t t = 0; t < m->thread_count; t++) {
        sp__thread_model *tm = &m->threads[t];
        const sp__thread *th = tm->thread;
        if (add_runtime_ranges(m, th) != 0) return -1;
        if (th->runtime_count == 0) continue;
        rt_time *times = sp__alloc(sizeof *times * th->runtime_count);
        if (!times) return -1;
        for (size_t d = 0; d < r->device_count; d++) {
            const sp__device_rec *dev = &r->devices[d];
            if (dev->thread != (int32_t)t || dev->runtime < 0 || (size_t)dev->runtime >= th->runtime_count)
                continue;
            int64_t dur = dev->end_ns > dev->start_ns ? dev->end_ns - dev->start_ns : 0;
            times[dev->runtime].ggpu += dur;
            if (dev->type == SP_EVENT_KERNEL) times[dev->runtime].gpu += dur;
        }
        charge_nodes(tm, times);
        sp__free(times);
    }
    return per_device(m, r);
}
