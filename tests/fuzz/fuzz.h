/*
 * fuzz.h - the fuzz-target interface: each tests/fuzz/fuzz_NAME.c defines
 * LLVMFuzzerTestOneInput, which libFuzzer drives (make fuzz, with clang) and
 * replay_main.c feeds the files of a corpus to (any compiler: make check).
 * A target must return 0 for every input and abort() on a real failure.
 */
#ifndef THPSIM_FUZZ_FUZZ_H
#define THPSIM_FUZZ_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
