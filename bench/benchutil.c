#define _POSIX_C_SOURCE 200809L

#include "benchutil.h"

#include <stdlib.h>
#include <time.h>

double bench_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void bench_sort(double *v, int n)
{
    if (n > 0)
        qsort(v, (size_t)n, sizeof *v, cmp_double);
}

double bench_median(double *v, int n)
{
    bench_sort(v, n);
    return n > 0 ? v[n / 2] : 0;
}
