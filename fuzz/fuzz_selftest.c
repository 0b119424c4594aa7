/*
 * libFuzzer target that crashes on purpose on the input "PLANTED CRASH":
 * tests/e2e/t0030-fuzz.sh uses it to prove that scripts/fuzz.sh reports a
 * crash by target and input. Not run by `make fuzz`.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= 13 && !memcmp(data, "PLANTED CRASH", 13))
		abort();
	return 0;
}
