// SPDX-License-Identifier: GPL-2.0
/*
 * A C++ program whose functions test_tool_udwarf traces by their
 * qualified names (pt_ns::inner::twice) and by their symbols
 * (_ZN5pt_ns5inner5twiceEli), with parameters from its DWARF (built with
 * g++ -g, static). main() calls each once with known values; test_tool_
 * udwarf runs it as pea trace's -- CMD, so every call is traced.
 */
namespace pt_ns {
namespace inner {

/* v: rdi, k: esi. */
__attribute__((noipa, used)) long twice(long v, int k)
{
	return 2 * v + k;
}

} /* namespace inner */

struct Counter {
	long base;
	int step;
	__attribute__((noipa, used)) long add(long x);
};

/* this: rdi, x: rsi. */
long Counter::add(long x)
{
	base += x * step;
	return base;
}

/* Two of one name: pt_ns::over names both. */
__attribute__((noipa, used)) int over(int x)
{
	return x + 1;
}

__attribute__((noipa, used)) int over(long x)
{
	return (int)x + 2;
}

/* d: xmm0 (not fetched), k: edi. */
__attribute__((noipa, used)) double scale(double d, int k)
{
	return d * k;
}

/* a..h: the six registers; s7 and s8 on the stack (sp+8, sp+16). */
__attribute__((noipa, used)) long many(long a, long b, long c, long d,
				       long e, long h, long s7, int s8)
{
	return a + b + c + d + e + h + s7 + s8;
}

} /* namespace pt_ns */

int main(void)
{
	pt_ns::Counter c = { 100, 3 };
	long r;

	r = pt_ns::inner::twice(-41, 7);
	r += c.add(5);
	r += pt_ns::over(1) + pt_ns::over(2L);
	r += (long)pt_ns::scale(1.5, 4);
	r += pt_ns::many(1, 2, 3, 4, 5, 6, -77, 88);
	return r == -75 + 115 + 2 + 4 + 6 + 21 - 77 + 88 ? 0 : 1;
}
