/* Helpers of the benchmark programs: a clock, and the median of a set of timings. */
#ifndef GLCV_BENCHUTIL_H
#define GLCV_BENCHUTIL_H

/* Milliseconds on a monotonic clock (from an arbitrary start). */
double bench_now_ms(void);

/* Sorts v[0..n) in ascending order. */
void bench_sort(double *v, int n);

/* Sorts v[0..n) and returns v[n / 2]: the median of an odd count, the upper of the two middle
 * values of an even one; 0 when n is 0. */
double bench_median(double *v, int n);

#endif
