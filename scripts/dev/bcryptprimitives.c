/* A stand-in bcryptprimitives.dll for Wine 8, which lacks it: Rust's std (1.78 and later) gets its
 * random numbers from ProcessPrng there. Only for running the Windows build's tests under Wine
 * (scripts/test-windows.sh); real Windows 10 and 11 have the DLL. */
#include <windows.h>
/* RtlGenRandom, exported by advapi32 as SystemFunction036. */
BOOLEAN WINAPI SystemFunction036(PVOID buf, ULONG len);
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!SystemFunction036(data, n)) return FALSE;
        data += n; len -= n;
    }
    return TRUE;
}
