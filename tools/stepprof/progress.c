/* progress.c: the progress bar of a long load (cli_load in commands.c).
 * One line on standard error, redrawn in place at most every REDRAW_NS as
 * the loader reports (sp_load_options.progress): the file's name, a bar and
 * a percentage where the size is known, the bytes read and the rate. The
 * line is drawn once more at the end and then cleared, so nothing is left
 * behind the command's own output. Drawn only when standard error is a
 * terminal: never into a pipe or a file, whatever STEPPROF_PROGRESS says. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REDRAW_NS 100000000LL /* 10 redraws a second at most */
#define SMALL_FILE_BYTES ((uint64_t)16 << 20)
#define BAR_CELLS 24

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int cli_progress_wanted(uint64_t file_bytes, int regular)
{
    if (!isatty(STDERR_FILENO)) return 0;
    const char *env = getenv("STEPPROF_PROGRESS");
    if (env && strcmp(env, "0") == 0) return 0;
    if (env && strcmp(env, "1") == 0) return 1;
    return regular && file_bytes > SMALL_FILE_BYTES; /* a small file is read before a bar helps */
}

void cli_progress_begin(cli_progress *p, const char *path)
{
    const char *slash = strrchr(path, '/');
    p->name = slash && slash[1] ? slash + 1 : path;
    p->shown = 0;
    p->start_ns = p->last_ns = now_ns();
}

void cli_progress_show(uint64_t done, uint64_t total, void *user)
{
    cli_progress *p = user;
    int64_t now = now_ns();
    int last = total > 0 && done >= total;
    if (p->shown && !last && now - p->last_ns < REDRAW_NS) return;
    p->last_ns = now;
    double secs = (double)(now - p->start_ns) / 1e9;
    char rate[32] = "";
    if (secs > 0.01) snprintf(rate, sizeof rate, "  %.0f MB/s", (double)done / 1e6 / secs);
    if (total > 0) {
        uint64_t shown = done < total ? done : total;
        int cells = (int)(shown * BAR_CELLS / total);
        char bar[BAR_CELLS + 1];
        memset(bar, '#', (size_t)cells);
        memset(bar + cells, '.', (size_t)(BAR_CELLS - cells));
        bar[BAR_CELLS] = '\0';
        fprintf(stderr, "\rstepprof: reading %.40s [%s] %3d%%  %.1f/%.1f MB%s\033[K", p->name, bar,
                (int)(shown * 100 / total), (double)shown / 1e6, (double)total / 1e6, rate);
    } else {
        fprintf(stderr, "\rstepprof: reading %.40s  %.1f MB%s\033[K", p->name, (double)done / 1e6,
                rate);
    }
    fflush(stderr);
    p->shown = 1;
}

void cli_progress_end(cli_progress *p)
{
    if (p->shown) fputs("\r\033[K", stderr); /* the line cleared, the cursor at its start */
    fflush(stderr);
    p->shown = 0;
}
