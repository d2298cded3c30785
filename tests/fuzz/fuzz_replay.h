/* What a fuzz target gives its replay driver (fuzz_replay_main.c), besides libFuzzer's entry point. */
#ifndef GLCV_FUZZ_REPLAY_H
#define GLCV_FUZZ_REPLAY_H

#include <stddef.h>
#include <stdint.h>

/* libFuzzer's entry point: always returns 0; aborts when the code under test breaks its contract. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Valid inputs the target makes itself, each handed to `add` (the driver replays them and their
 * variations like corpus files); returns 0, or nonzero when it could not make them. */
int fuzz_replay_seeds(void (*add)(const uint8_t *data, size_t size));

/* After every input: 0 when the runs did what the target expects of them (e.g. reached each kind
 * of result), else nonzero, having said why on stderr. */
int fuzz_replay_check(void);

#endif
