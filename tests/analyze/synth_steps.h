/* synth_steps.h: synthetic training steps for the diagnosis and gate tests.
 * A step is laid out in order on thread 1: Dataloader, Forward (with an
 * op "matmul" taking `matmul` of it), Backward, Optimization, a wait
 * ("aten::item"), a Communication range ("allreduce"), then `other` time
 * in an op named `other_name` (or in nothing when NULL). GPU steps add
 * `kernels` kernels of `kernel_ns` each, launched evenly over Forward and
 * Backward by 1 us runtime calls. Times are exact, so every share the
 * rules compute is known in advance. */
#ifndef SP_TESTS_SYNTH_STEPS_H
#define SP_TESTS_SYNTH_STEPS_H

#include "fixture.h"

#include <stdio.h>

typedef struct synth_step {
    int64_t dl, fwd, matmul, bwd, opt, wait, comm, other;
    const char *other_name;
    int kernels;
    int64_t kernel_ns;
} synth_step;

typedef struct synth_buf {
    fixture_range *v;
    size_t n;
    char (*names)[32];
} synth_buf;

static inline void synth_add(synth_buf *b, const char *name, sp_event_type type, int64_t start,
                             int64_t len)
{
    b->v[b->n++] = (fixture_range){name, type, start, start + len};
}

/* Builds steps[0..n) as steps #first..; with kernels, runtime calls and
 * device records too. Names of steps live in a static table (one test at a
 * time), so the fixture's pointer-keyed names stay valid. */
static inline sp_result *synth_build(const synth_step *steps, size_t n, int64_t first)
{
    static char step_names[512][32];
    fixture_range *v = calloc(n * 9 + 1, sizeof *v);
    synth_buf b = {v, 0, step_names};
    int64_t t = 1000000;
    sp_result *r = sp__result_new();
    typedef struct launch {
        int64_t at, len;
    } launch;
    size_t nk = 0;
    for (size_t i = 0; i < n; i++)
        nk += (size_t)steps[i].kernels;
    launch *ks = calloc(nk + 1, sizeof *ks);
    size_t k = 0;
    for (size_t i = 0; i < n && i < 512; i++) {
        const synth_step *s = &steps[i];
        int64_t len = s->dl + s->fwd + s->bwd + s->opt + s->wait + s->comm + s->other;
        snprintf(step_names[i], sizeof step_names[i], "ProfileStep#%lld",
                 (long long)(first + (int64_t)i));
        synth_add(&b, step_names[i], SP_EVENT_PROFILE_STEP, t, len);
        int64_t at = t;
        if (s->dl) synth_add(&b, "DataLoader", SP_EVENT_DATALOADER, at, s->dl);
        at += s->dl;
        if (s->fwd) synth_add(&b, "forward", SP_EVENT_FORWARD, at, s->fwd);
        if (s->matmul) synth_add(&b, "matmul", SP_EVENT_OPERATOR, at, s->matmul);
        int64_t compute = s->fwd + s->bwd;
        for (int j = 0; j < s->kernels; j++)
            ks[k++] = (launch){at + compute * j / s->kernels, s->kernel_ns};
        at += s->fwd;
        if (s->bwd) synth_add(&b, "backward", SP_EVENT_BACKWARD, at, s->bwd);
        at += s->bwd;
        if (s->opt) synth_add(&b, "optimizer", SP_EVENT_OPTIMIZATION, at, s->opt);
        at += s->opt;
        if (s->wait) synth_add(&b, "aten::item", SP_EVENT_OPERATOR, at, s->wait);
        at += s->wait;
        if (s->comm) synth_add(&b, "allreduce", SP_EVENT_COMMUNICATION, at, s->comm);
        at += s->comm;
        if (s->other && s->other_name)
            synth_add(&b, s->other_name, SP_EVENT_USER_DEFINED, at, s->other);
        t += len;
    }
    fixture_add_thread(r, 1, "main", v, b.n);
    for (size_t j = 0; j < k; j++) {
        fixture_add_runtime(r, &r->threads[0], "cudaLaunchKernel", ks[j].at, ks[j].at + 1000,
                            (uint32_t)(j + 1));
        fixture_add_device(r, "gemm_kernel", SP_EVENT_KERNEL, ks[j].at + 1000,
                           ks[j].at + 1000 + ks[j].len, 0, 7, (uint32_t)(j + 1));
    }
    CHECK_EQ(0, sp__attribute(r));
    free(ks);
    free(v);
    return r;
}

/* n copies of one step. */
static inline sp_result *synth_same(synth_step s, size_t n)
{
    synth_step *v = calloc(n, sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = s;
    sp_result *r = synth_build(v, n, 0);
    free(v);
    return r;
}

#endif
