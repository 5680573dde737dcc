/* A stand-in for libcuda.so.1, built by tests/it/standin.rs with `cc`, for driver faults a real
 * library can't be made to show here. It answers from environment variables:
 *   STANDIN_CUDA_VERSION   cuDriverGetVersion's answer (default 12080), or "hang"
 *   STANDIN_CUINIT         "hang" (never returns), "segv" (crashes), or a CUresult to return
 *   STANDIN_DEVICE_COUNT   cuDeviceGetCount's answer (default 1)
 * Built with -DSTANDIN_STUB it is a CUDA toolkit's link stub (lib64/stubs/libcuda.so): every
 * call answers CUDA_ERROR_STUB_LIBRARY (34).
 * Only the entry points gpudoctor calls up to opening a device exist (one device, an H100's
 * answers, no memory): the smoke tests' memory step then meets a missing cuMemAlloc_v2, itself
 * a fault gpudoctor must survive.
 * Built with -DSTANDIN_MIG the device is a MIG instance: cuDeviceGetUuid (v1) answers the
 * parent GPU's UUID and cuDeviceGetUuid_v2 the instance's own; with -DSTANDIN_NO_UUID_V2 the
 * library lacks cuDeviceGetUuid_v2, as drivers before CUDA 11.4 (R470) do. */
#include <stdlib.h>
#include <string.h>
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

typedef int CUdevice;
typedef void *CUcontext;

CUresult cuDeviceGet(CUdevice *d, int ordinal) {
    *d = ordinal;
    return 0;
}

CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d) {
    (void)d;
    switch (attr) {
    case 75: *v = 9; break;   /* COMPUTE_CAPABILITY_MAJOR */
    case 76: *v = 0; break;   /* COMPUTE_CAPABILITY_MINOR */
    case 16: *v = 132; break; /* MULTIPROCESSOR_COUNT */
    default: *v = 0;
    }
    return 0;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
    (void)d;
    strncpy(name, "NVIDIA H100 80GB HBM3 (stand-in)", (size_t)len);
    if (len > 0) name[len - 1] = 0;
    return 0;
}

CUresult cuDeviceGetPCIBusId(char *bus, int len, CUdevice d) {
    (void)d;
    strncpy(bus, "0000:2b:00.0", (size_t)len);
    if (len > 0) bus[len - 1] = 0;
    return 0;
}

/* The parent GPU's UUID: GPU-11111111-2222-3333-4444-555555555555. */
static const unsigned char PARENT[16] = {0x11, 0x11, 0x11, 0x11, 0x22, 0x22, 0x33, 0x33,
                                         0x44, 0x44, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55};
/* A MIG instance's UUID: MIG-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee. */
static const unsigned char INSTANCE[16] = {0xaa, 0xaa, 0xaa, 0xaa, 0xbb, 0xbb, 0xcc, 0xcc,
                                           0xdd, 0xdd, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee};

CUresult cuDeviceGetUuid(unsigned char *u, CUdevice d) {
    (void)d;
    memcpy(u, PARENT, 16);
    return 0;
}

#ifndef STANDIN_NO_UUID_V2
CUresult cuDeviceGetUuid_v2(unsigned char *u, CUdevice d) {
    (void)d;
#ifdef STANDIN_MIG
    memcpy(u, INSTANCE, 16);
#else
    memcpy(u, PARENT, 16);
#endif
    return 0;
}
#endif

CUresult cuDeviceTotalMem_v2(size_t *b, CUdevice d) {
    (void)d;
    *b = (size_t)80 << 30;
    return 0;
}

static int ctx_token;

CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
    (void)d;
    *c = &ctx_token;
    return 0;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
    (void)d;
    return 0;
}

CUresult cuCtxSetCurrent(CUcontext c) {
    (void)c;
    return 0;
}
