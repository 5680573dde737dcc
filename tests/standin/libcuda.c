/* A stand-in for libcuda.so.1, built by tests/standin.rs with `cc`, for driver faults a real
 * library can't be made to show here. It answers from environment variables:
 *   STANDIN_CUDA_VERSION   cuDriverGetVersion's answer (default 12080), or "hang"
 *   STANDIN_CUINIT         "hang" (never returns), "segv" (crashes), or a CUresult to return
 *   STANDIN_DEVICE_COUNT   cuDeviceGetCount's answer (default 1)
 * Built with -DSTANDIN_STUB it is a CUDA toolkit's link stub (lib64/stubs/libcuda.so): every
 * call answers CUDA_ERROR_STUB_LIBRARY (34).
 * Only the entry points gpudoctor calls before a device is opened exist; a missing symbol is
 * itself a fault gpudoctor must survive (cudarc panics on it). */
#include <stdlib.h>
#include <unistd.h>

typedef int CUresult;

static int env_int(const char *name, int dflt) {
    const char *v = getenv(name);
    return v ? atoi(v) : dflt;
}

CUresult cuDriverGetVersion(int *v) {
#ifdef STANDIN_STUB
    *v = 0;
    return 34;
#endif
    const char *m = getenv("STANDIN_CUDA_VERSION");
    if (m && m[0] == 'h') {
        for (;;) sleep(1000);
    }
    *v = env_int("STANDIN_CUDA_VERSION", 12080);
    return 0;
}

CUresult cuInit(unsigned int flags) {
    (void)flags;
#ifdef STANDIN_STUB
    return 34;
#endif
    const char *m = getenv("STANDIN_CUINIT");
    if (m && m[0] == 'h') {
        for (;;) sleep(1000);
    }
    if (m && m[0] == 's') {
        volatile int *p = 0;
        return *p;
    }
    return m ? atoi(m) : 0;
}

CUresult cuDeviceGetCount(int *n) {
    *n = env_int("STANDIN_DEVICE_COUNT", 1);
    return 0;
}

CUresult cuGetErrorName(CUresult e, const char **s) {
    (void)e;
    *s = "CUDA_ERROR_STANDIN";
    return 0;
}

CUresult cuGetErrorString(CUresult e, const char **s) {
    (void)e;
    *s = "an error from the stand-in libcuda";
    return 0;
}
