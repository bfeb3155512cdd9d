/* nvtx_prog.c: a program that uses NVTX v3 and knows nothing of stepprof,
 * run by test_nvtx.c under `stepprof run`. Each of its 6 steps is a pushed
 * "step" range holding: forward (with inner nested in it), backward in a
 * domain with a registered name, a mark "tick", and a range "async" started
 * here and ended on another thread, and "layerN" then "loss" pushed from one
 * reused buffer. At the end it pops once more than it
 * pushed and ends a range id it never got: misuse with a defined result. */
#define _GNU_SOURCE
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <stdio.h>

static void *end_range(void *arg)
{
    nvtxRangeEnd(*(nvtxRangeId_t *)arg);
    return NULL;
}

int main(void)
{
    nvtxDomainHandle_t domain = nvtxDomainCreateA("app");
    nvtxStringHandle_t backward = nvtxDomainRegisterStringA(domain, "backward");
    nvtxEventAttributes_t attr = {0};
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    attr.message.registered = backward;
    char buffer[32];
    for (int step = 0; step < 6; step++) {
        nvtxRangePushA("step");
        nvtxRangePushA("forward");
        nvtxRangePushA("inner");
        nvtxRangePop();
        nvtxRangePop();
        /* One buffer, two names in turn: each range keeps its own. */
        snprintf(buffer, sizeof buffer, "layer%d", step);
        nvtxRangePushA(buffer);
        nvtxRangePop();
        snprintf(buffer, sizeof buffer, "loss");
        nvtxRangePushA(buffer);
        nvtxRangePop();
        nvtxDomainRangePushEx(domain, &attr);
        nvtxDomainRangePop(domain);
        nvtxMarkA("tick");
        nvtxRangeId_t id = nvtxRangeStartA("async");
        pthread_t t;
        if (pthread_create(&t, NULL, end_range, &id) != 0 || pthread_join(t, NULL) != 0) return 3;
        nvtxRangePop();
    }
    int extra = nvtxRangePop();
    nvtxRangeEnd(987654321);
    printf("extra pop: %d\n", extra);
    return 0;
}
