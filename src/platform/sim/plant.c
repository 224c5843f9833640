/*
 * plant.c -- the simulator's planted bugs (SQLE_PLANTED, src/internal.h):
 * which one this run plants, whether it was reached, and the list of all
 * of them, which the uses of SQLE_PLANTED leave in a section of their
 * own (the linker names its bounds).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sim.h"

const char *sqle_plant;
static uint64_t g_reached;

/* Bounds of the section "sqle_plants", made by the linker. */
extern const char *const __start_sqle_plants[];
extern const char *const __stop_sqle_plants[];

int sqle_planted(const char *name)
{
    if (strcmp(name, sqle_plant) != 0)
        return 0;
    g_reached++;
    return 1;
}

uint64_t sim_plant_reached(void)
{
    return g_reached;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

size_t sim_plants(const char **out, size_t cap)
{
    size_t n = (size_t)(__stop_sqle_plants - __start_sqle_plants), i, k = 0;
    const char **all = malloc((n > 0 ? n : 1) * sizeof *all);

    if (all == NULL)
        return 0;
    memcpy(all, __start_sqle_plants, n * sizeof *all);
    qsort(all, n, sizeof *all, cmp_names);
    for (i = 0; i < n; i++) {
        if (i > 0 && strcmp(all[i], all[i - 1]) == 0)
            continue; /* one plant used in two places */
        if (k < cap)
            out[k] = all[i];
        k++;
    }
    free(all);
    return k;
}
