// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Throws and catches exactly 1000 C++ exceptions (libstdc++'s throw probe).
#include <cstdio>
#include <stdexcept>

__attribute__((noinline)) static void thrower(int i)
{
	if (i >= 0)
		throw std::runtime_error("boom");
}

int main()
{
	int caught = 0;

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
