// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Throws and catches exactly 1000 C++ exceptions (libstdc++'s throw probe).
// "wait": print ready=1, then wait for a line on stdin first (for -p tests).
#include <cstdio>
#include <cstring>
#include <stdexcept>

__attribute__((noinline)) static void thrower(int i)
{
	if (i >= 0)
		throw std::runtime_error("boom");
}

int main(int argc, char **argv)
{
	int caught = 0;

	if (argc > 1 && !std::strcmp(argv[1], "wait")) {
		char line[16];

		std::printf("ready=1\n");
		std::fflush(stdout);
		if (!std::fgets(line, sizeof(line), stdin))
			return 1;
	}
	for (int i = 0; i < 1000; i++) {
		try {
			thrower(i);
		} catch (const std::exception &) {
			caught++;
		}
	}
	std::printf("caught=%d\n", caught);
	return 0;
}
