/* presence.c: tells whether the process uses CUDA, without loading it. */
#define _GNU_SOURCE
#include "gpu.h"

#include <dlfcn.h>

int sp__gpu_cuda_in_process(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!h) return 0;
    dlclose(h); /* drops only the reference RTLD_NOLOAD took */
    return 1;
}
