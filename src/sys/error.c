/* error.c: status texts and the per-thread last-error message. Each thread
 * has its own message, so concurrent callers never overwrite each other. */
#include "sys.h"

#include <stdio.h>

static _Thread_local char last_error[512];

const char *sp_status_str(sp_status status)
{
    switch (status) {
#define SP__STATUS_TEXT(name, value, text)                                     \
    case name:                                                                 \
        return text;
        SP_STATUS_LIST(SP__STATUS_TEXT)
#undef SP__STATUS_TEXT
    }
    return "unknown status";
}

const char *sp_last_error(void) { return last_error; }

void sp__clear_error(void) { last_error[0] = '\0'; }

sp_status sp__fail(sp_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return code;
}
