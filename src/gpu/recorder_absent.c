/* recorder_absent.c: the GPU recorder of a build made without CUPTI's
 * headers (no SP_HAVE_CUPTI): every call is a cheap no-op, and prepare says
 * in one line why the GPU is not traced. Where the headers exist,
 * cupti_tracer.c is the recorder and this file compiles to nothing. */
#ifndef SP_HAVE_CUPTI

#include "gpu.h"

#include <stdio.h>
#include <string.h>

int sp__gpu_prepare(char *why, size_t why_size)
{
    if (why && why_size)
        snprintf(why, why_size,
                 SP__GPU_OFF "this stepprof was built without CUPTI's headers (rebuild with "
                 "the CUDA toolkit installed, or CUDA_HOME set)" SP__GPU_CPU_ONLY);
    return -1;
}

int sp__gpu_probe(char *why, size_t why_size) { return sp__gpu_prepare(why, why_size); }

void sp__gpu_discard(void) {}

int sp__gpu_take(sp__gpu_batch *out)
{
    memset(out, 0, sizeof *out);
    return 0;
}

void sp__gpu_batch_free(sp__gpu_batch *b)
{
    if (b) memset(b, 0, sizeof *b);
}

void sp__gpu_release(void) {}

int sp__gpu_active(void) { return 0; }

#endif /* !SP_HAVE_CUPTI */
