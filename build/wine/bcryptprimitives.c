/*
 * bcryptprimitives.dll for Wine 8.0, which lacks it. Go's Windows runtime
 * (since Go 1.22) loads this DLL at start and draws its random numbers from
 * ProcessPrng; without it every Go program dies before main. This shim
 * forwards to RtlGenRandom (advapi32's SystemFunction036), which Wine has.
 *
 * Used only by the Windows test lane (build/wine/test-windows.sh), which
 * compiles it with Debian's gcc-mingw-w64-x86-64 into the Wine prefix's
 * system32. It is never shipped.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T size)
{
	/* RtlGenRandom takes a ULONG length: feed it in chunks. */
	while (size > 0) {
		ULONG n = size > 0x10000000 ? 0x10000000 : (ULONG)size;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		size -= n;
	}
	return TRUE;
}
