/* json_kineto.c: the names torch.profiler gives its ranges (json_kineto.h).
 * Decisions: only names torch itself writes are read, each in the cat
 * torch writes it with, so a user range that happens to look alike in
 * another cat keeps its own type. */
#include "json_kineto.h"

#include <ctype.h>
#include <string.h>

static int starts_with(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* "ProfilerStep#" then digits only. */
static int is_step_name(const char *name)
{
    if (!starts_with(name, "ProfilerStep#") || !name[13]) return 0;
    for (const char *p = name + 13; *p; p++)
        if (!isdigit((unsigned char)*p)) return 0;
    return 1;
}

sp_event_type sp__kineto_type(const char *cat, const char *name, sp_event_type fallback)
{
    int annotation = strcmp(cat, "user_annotation") == 0, op = strcmp(cat, "cpu_op") == 0;
    if (!annotation && !op) return fallback;
    if (annotation && is_step_name(name)) return SP_EVENT_PROFILE_STEP;
    if (starts_with(name, "enumerate(DataLoader)#") && ends_with(name, ".__next__")) return SP_EVENT_DATALOADER;
    if (annotation && starts_with(name, "Optimizer.step#")) return SP_EVENT_OPTIMIZATION;
    if (starts_with(name, "nccl:") || starts_with(name, "gloo:") || (op && strcmp(name, "record_param_comms") == 0))
        return SP_EVENT_COMMUNICATION;
    return fallback;
}
