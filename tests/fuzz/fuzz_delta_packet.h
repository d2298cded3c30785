/* The fuzz target of the frame-delta packets (fuzz_delta_packet.c), for its replay driver. */
#ifndef GLCV_FUZZ_DELTA_PACKET_H
#define GLCV_FUZZ_DELTA_PACKET_H

#include <stddef.h>
#include <stdint.h>

/* libFuzzer's entry point: always returns 0; aborts when the decoder breaks its contract. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* How many decodes ended in each glcv_status (the driver checks that the inputs reach more than
 * one of them). */
#define FUZZ_DELTA_STATUSES 11
extern unsigned long fuzz_delta_statuses[FUZZ_DELTA_STATUSES];

#endif
