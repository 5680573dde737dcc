/* A stand-in for libnvidia-ml.so.1, built by tests/it/standin_nvml.rs with `cc`, for driver faults a
 * real NVML can't be made to show here. It answers from environment variables:
 *   STANDIN_NVML_PROFILE  the GPUs' values, recorded on real machines (see `profiles` below):
 *                         h100 (default), a100, rtx, r470, v100
 *   STANDIN_NVML_COUNT    nvmlDeviceGetCount's answer (default: the profile's)
 *   STANDIN_NVML_FAIL     what calls do instead of answering: a comma-separated list of
 *                         NAME=ACTION, where NAME is an entry point ("nvmlInit_v2",
 *                         "nvmlDeviceGetTemperature") or "*" (every call after init), and ACTION
 *                         is an nvmlReturn_t number, "hang", "segv", "abort" or "exit0"
 *   STANDIN_NVML_NAME     the GPU name to report; "noterm" fills the buffer with no NUL
 *   STANDIN_NVML_PROCS    the compute-process count to report (a huge one is a driver's lie)
 *   STANDIN_NVML_PRINT    print this to standard output from nvmlInit_v2 (as chatty libraries do)
 * Built with -DR470, entry points an R470 driver lacks are left out (nvml-wrapper then reports
 * FailedToLoadSymbol): nvmlDeviceGetMemoryInfo_v2 (510.39+), nvmlDeviceGetComputeRunningProcesses_v3
 * (R510+), nvmlDeviceGetRowRemapperHistogram (R515+). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int nvmlReturn_t;
typedef struct gpu *nvmlDevice_t;
typedef void *nvmlEventSet_t;

struct gpu {
    const char *name;
    const char *uuid;
    const char *bus_id;
    unsigned int domain, bus, device, pci_device_id;
    int cc_major, cc_minor;
    unsigned long long mem_total, mem_used, mem_free, mem_reserved;
    int persistence, compute_mode, mig, ecc;
    unsigned int temp_c, slowdown_c, shutdown_c;
    unsigned int power_mw, power_limit_mw;
    unsigned int sm_mhz, mem_mhz, sm_max_mhz, mem_max_mhz;
    unsigned int pcie_gen, pcie_width, pcie_max_gen, pcie_max_width, pcie_replays;
    unsigned long long throttle;
    unsigned int util_gpu, util_mem;
    int pstate;
    unsigned int nvlinks;
    unsigned int mig_devices;
};

struct profile {
    const char *id;
    const char *driver;
    const char *nvml;
    int cuda;
    unsigned int count;
    unsigned int procs, proc_pid;
    unsigned long long proc_mem;
    struct gpu gpu;
};

/* A value the GPU does not report ("N/A" in nvidia-smi): its call answers NOT_SUPPORTED. */
#define NA 0xFFFFFFFFu
#define MIB (1ULL << 20)

/* Values as NVML reports them on real machines (the NVML version string, absent from
 * `nvidia-smi -q`, is written in NVML's "<CUDA major>.<driver>" form):
 * h100: gpudoctor snapshot on a lent GPU machine, 2026-11-23
 *       (tests/fixtures/snapshots/h100-580.159.04-real.json); one H100 SXM, 18 NVLinks not
 *       recorded there (a VM with one GPU), so none here.
 * a100, rtx, r470, v100: the `nvidia-smi -q` captures in tests/standin/profiles/, each with its
 *       source on its first line (A100-SXM4-80GB on 555.42.02; RTX 4090 on 535.154.05 with one
 *       python process holding 20322 MiB; GTX 680 on 470.256.02, nearly everything N/A; V100-SXM2
 *       on 550.127.05). NVLink counts are the boards' (A100 SXM4 12, V100 SXM2 6) as the
 *       captures do not list links. */
static const struct profile profiles[] = {
    {"h100", "580.159.04", "13.580.159.04", 13000, 1, 0, 0, 0,
     {"NVIDIA H100 80GB HBM3", "GPU-00000000-0000-0000-0000-000000000000", "", 0, 0x00, 6,
      0x233010de, 9, 0, 85520809984ULL, 0ULL, 85017493504ULL, 503316480ULL, 1, 0, 0, 1, 50, 89,
      95, 132418, 700000, 1980, 2619, 1980, 2619, 5, 16, 5, 16, 3, 0ULL, 0, 0, 0, 0, 7}},
    {"a100", "555.42.02", "12.555.42.02", 12050, 1, 0, 0, 0,
     {"NVIDIA A100-SXM4-80GB", "GPU-00000000-0000-0000-0000-000000000001", "", 0, 0x68, 0,
      0x20b210de, 8, 0, 81920 * MIB, 1 * MIB, 81158 * MIB, 763 * MIB, 1, 0, 0, 1, 25, 89, 92,
      59770, 500000, 210, 1593, 1410, 1593, 4, 16, 4, 16, 0, 1ULL, 0, 0, 0, 12, 7}},
    {"rtx", "535.154.05", "12.535.154.05", 12020, 1, 1, 58130, 20322 * MIB,
     {"NVIDIA GeForce RTX 4090", "GPU-00000000-0000-0000-0000-000000000002", "", 0, 0x01, 0,
      0x268410de, 8, 9, 24564 * MIB, 20328 * MIB, 3888 * MIB, 346 * MIB, 1, 0, 0, 0, 41, NA, NA,
      67760, 450000, 2520, 10251, 3105, 10501, 4, 16, 4, 16, 0, 0ULL, 0, 0, 2, 0, NA}},
    {"r470", "470.256.02", "11.470.256.02", 11040, 1, 0, 0, 0,
     {"NVIDIA GeForce GTX 680", "GPU-00000000-0000-0000-0000-000000000003", "", 0, 0x08, 0,
      0x118010de, 3, 0, 2000 * MIB, 0ULL, 2000 * MIB, 0ULL, 0, 0, 0, NA, 35, NA, NA, NA, NA, NA,
      NA, NA, NA, NA, NA, NA, NA, 0, 0xFFFFFFFFFFFFFFFFULL, NA, NA, 0, 0, NA}},
    {"v100", "550.127.05", "12.550.127.05", 12040, 1, 0, 0, 0,
     {"Tesla V100-SXM2-16GB", "GPU-00000000-0000-0000-0000-000000000004", "", 0, 0x00, 4,
      0x1db110de, 7, 0, 16384 * MIB, 1 * MIB, 16145 * MIB, 240 * MIB, 1, 0, 0, 1, 37, 87, 90,
      44500, 300000, 135, 877, 1530, 877, 3, 16, 3, 16, 0, 1ULL, 0, 0, 0, 6, NA}},
};

static const struct profile *prof(void) {
    const char *id = getenv("STANDIN_NVML_PROFILE");
    for (size_t i = 0; id && i < sizeof profiles / sizeof profiles[0]; i++)
        if (strcmp(profiles[i].id, id) == 0) return &profiles[i];
    return &profiles[0];
}

#define MAX_HANDLES 64
static struct gpu gpus[MAX_HANDLES];
static int initialised;

/* The action STANDIN_NVML_FAIL names for `call`, or NULL. */
static const char *action_for(const char *call, int is_init) {
    const char *spec = getenv("STANDIN_NVML_FAIL");
    if (!spec) return NULL;
    static char buf[4096];
    strncpy(buf, spec, sizeof buf - 1);
    buf[sizeof buf - 1] = 0;
    const char *star = NULL;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        char *eq = strchr(tok, '=');
        if (!eq) continue;
        *eq = 0;
        if (strcmp(tok, call) == 0) return eq + 1;
        if (strcmp(tok, "*") == 0 && !is_init) star = eq + 1;
    }
    return star;
}

/* Runs the failure STANDIN_NVML_FAIL asks of `call`: returns the code to answer with, or 0 to
 * answer normally. */
static nvmlReturn_t gate(const char *call, int is_init) {
    const char *a = action_for(call, is_init);
    if (!a) return 0;
    if (strcmp(a, "hang") == 0) for (;;) sleep(1000);
    if (strcmp(a, "segv") == 0) {
        volatile int *p = 0; /* a real fault, as a broken library makes (not raise()) */
        *p = 1;
    }
    if (strcmp(a, "abort") == 0) abort();
    if (strcmp(a, "exit0") == 0) _exit(0);
    return atoi(a);
}

#define GATE(name)                                   \
    do {                                             \
        nvmlReturn_t rc_ = gate(name, 0);            \
        if (rc_) return rc_;                         \
        if (!initialised) return 1; /* UNINITIALIZED */ \
    } while (0)

static int valid(nvmlDevice_t d) { return d >= gpus && d < gpus + MAX_HANDLES; }
#define DEV(name)                    \
    GATE(name);                      \
    if (!valid(dev)) return 2; /* INVALID_ARGUMENT */

#define ANSWER(dst, v)            \
    do {                          \
        if ((unsigned)(v) == NA) return 3; \
        *(dst) = (v);             \
        return 0;                 \
    } while (0)

static nvmlReturn_t copy_str(char *out, unsigned int len, const char *s) {
    if (!out) return 2;
    size_t n = strlen(s);
    if (n + 1 > len) return 7; /* INSUFFICIENT_SIZE */
    memcpy(out, s, n + 1);
    return 0;
}

nvmlReturn_t nvmlInit_v2(void) {
    nvmlReturn_t rc = gate("nvmlInit_v2", 1);
    if (rc) return rc;
    const char *say = getenv("STANDIN_NVML_PRINT");
    if (say) {
        fputs(say, stdout);
        fflush(stdout);
    }
    for (int i = 0; i < MAX_HANDLES; i++) {
        gpus[i] = prof()->gpu;
        gpus[i].bus = (gpus[i].bus + (unsigned)i) & 0xff;
    }
    initialised = 1;
    return 0;
}

nvmlReturn_t nvmlInitWithFlags(unsigned int flags) {
    (void)flags;
    return nvmlInit_v2();
}

nvmlReturn_t nvmlInit(void) { return nvmlInit_v2(); }

nvmlReturn_t nvmlShutdown(void) {
    nvmlReturn_t rc = gate("nvmlShutdown", 1);
    if (rc) return rc;
    initialised = 0;
    return 0;
}

const char *nvmlErrorString(nvmlReturn_t r) {
    (void)r;
    return "an error from the stand-in NVML";
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned int len) {
    GATE("nvmlSystemGetDriverVersion");
    return copy_str(v, len, prof()->driver);
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char *v, unsigned int len) {
    GATE("nvmlSystemGetNVMLVersion");
    return copy_str(v, len, prof()->nvml);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v) {
    GATE("nvmlSystemGetCudaDriverVersion");
    *v = prof()->cuda;
    return 0;
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) {
    GATE("nvmlSystemGetCudaDriverVersion_v2");
    *v = prof()->cuda;
    return 0;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n) {
    GATE("nvmlDeviceGetCount_v2");
    const char *c = getenv("STANDIN_NVML_COUNT");
    *n = c ? (unsigned int)strtoul(c, NULL, 0) : prof()->count;
    return 0;
}

nvmlReturn_t nvmlDeviceGetCount(unsigned int *n) { return nvmlDeviceGetCount_v2(n); }

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *dev) {
    GATE("nvmlDeviceGetHandleByIndex_v2");
    if (i >= MAX_HANDLES) return 2;
    *dev = &gpus[i];
    return 0;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t dev, char *out, unsigned int len) {
    DEV("nvmlDeviceGetName");
    const char *n = getenv("STANDIN_NVML_NAME");
    if (n && strcmp(n, "noterm") == 0) {
        memset(out, 'X', len); /* no NUL anywhere in the buffer */
        return 0;
    }
    return copy_str(out, len, n ? n : dev->name);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t dev, char *out, unsigned int len) {
    DEV("nvmlDeviceGetUUID");
    return copy_str(out, len, dev->uuid);
}

typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t dev, nvmlPciInfo_t *p) {
    DEV("nvmlDeviceGetPciInfo_v3");
    memset(p, 0, sizeof *p);
    p->domain = dev->domain;
    p->bus = dev->bus;
    p->device = dev->device;
    p->pciDeviceId = dev->pci_device_id;
    snprintf(p->busId, sizeof p->busId, "%08x:%02x:%02x.0", dev->domain, dev->bus, dev->device);
    snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "%04x:%02x:%02x.0", dev->domain, dev->bus,
             dev->device);
    return 0;
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t dev, int *major, int *minor) {
    DEV("nvmlDeviceGetCudaComputeCapability");
    *major = dev->cc_major;
    ANSWER(minor, dev->cc_minor);
}

typedef struct {
    unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
    unsigned int version;
    unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t dev, nvmlMemory_t *m) {
    DEV("nvmlDeviceGetMemoryInfo");
    m->total = dev->mem_total;
    m->free = dev->mem_free;
    m->used = dev->mem_used;
    return 0;
}

#ifndef R470
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t dev, nvmlMemory_v2_t *m) {
    DEV("nvmlDeviceGetMemoryInfo_v2");
    m->total = dev->mem_total;
    m->reserved = dev->mem_reserved;
    m->free = dev->mem_free;
    m->used = dev->mem_used;
    return 0;
}
#endif

typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;

typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

static unsigned int proc_count(void) {
    const char *c = getenv("STANDIN_NVML_PROCS");
    return c ? (unsigned int)strtoul(c, NULL, 0) : prof()->procs;
}

/* Fills at most *count entries; a count larger than the caller's room gives INSUFFICIENT_SIZE
 * with the count needed, as NVML does. */
#define PROCS(T)                                              \
    unsigned int want = proc_count();                         \
    if (*count < want || (want && !infos)) {                  \
        *count = want;                                        \
        return 7;                                             \
    }                                                         \
    for (unsigned int i = 0; i < want; i++) {                 \
        memset(&((T *)infos)[i], 0, sizeof(T));               \
        ((T *)infos)[i].pid = prof()->procs ? prof()->proc_pid : 1000 + i; \
        ((T *)infos)[i].usedGpuMemory = prof()->procs ? prof()->proc_mem : 1ULL << 30; \
    }                                                         \
    *count = want;                                            \
    return 0;

#ifndef R470
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t dev, unsigned int *count,
                                                      nvmlProcessInfo_t *infos) {
    DEV("nvmlDeviceGetComputeRunningProcesses_v3");
    PROCS(nvmlProcessInfo_t)
}
#endif

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t dev, unsigned int *count,
                                                      nvmlProcessInfo_t *infos) {
    DEV("nvmlDeviceGetComputeRunningProcesses_v2");
    PROCS(nvmlProcessInfo_t)
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t dev, unsigned int *count,
                                                  nvmlProcessInfo_v1_t *infos) {
    DEV("nvmlDeviceGetComputeRunningProcesses");
    PROCS(nvmlProcessInfo_v1_t)
}

nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t dev, int *m) {
    DEV("nvmlDeviceGetPersistenceMode");
    ANSWER(m, dev->persistence);
}

/* Windows only in NVIDIA's NVML: the driver model, from STANDIN_NVML_DRIVER_MODEL (0 WDDM, the
 * default of a GeForce card driving a display; 1 TCC; 2 MCDM). */
nvmlReturn_t nvmlDeviceGetDriverModel(nvmlDevice_t dev, int *current, int *pending) {
    DEV("nvmlDeviceGetDriverModel");
    if (!current || !pending) return 2;
    const char *m = getenv("STANDIN_NVML_DRIVER_MODEL");
    *current = *pending = m ? atoi(m) : 0;
    return 0;
}

nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t dev, int *m) {
    DEV("nvmlDeviceGetComputeMode");
    ANSWER(m, dev->compute_mode);
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t dev, unsigned int *cur, unsigned int *pend) {
    DEV("nvmlDeviceGetMigMode");
    if (dev->mig_devices == NA) return 3;
    *cur = (unsigned)dev->mig;
    *pend = (unsigned)dev->mig;
    return 0;
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t dev, unsigned int *n) {
    DEV("nvmlDeviceGetMaxMigDeviceCount");
    ANSWER(n, dev->mig_devices);
}

nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t dev, int *cur, int *pend) {
    DEV("nvmlDeviceGetEccMode");
    if ((unsigned)dev->ecc == NA) return 3;
    *cur = dev->ecc;
    ANSWER(pend, dev->ecc);
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t dev, int type, int counter,
                                         unsigned long long *n) {
    (void)type;
    (void)counter;
    DEV("nvmlDeviceGetTotalEccErrors");
    *n = 0;
    return 0;
}

nvmlReturn_t nvmlDeviceGetMemoryErrorCounter(nvmlDevice_t dev, int type, int counter, int loc,
                                             unsigned long long *n) {
    (void)type;
    (void)counter;
    (void)loc;
    DEV("nvmlDeviceGetMemoryErrorCounter");
    *n = 0;
    return 0;
}

nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t dev, int cause, unsigned int *count,
                                       unsigned long long *addrs) {
    (void)cause;
    (void)addrs;
    DEV("nvmlDeviceGetRetiredPages");
    *count = 0;
    return 0;
}

nvmlReturn_t nvmlDeviceGetRetiredPages_v2(nvmlDevice_t dev, int cause, unsigned int *count,
                                          unsigned long long *addrs, unsigned long long *ts) {
    (void)cause;
    (void)addrs;
    (void)ts;
    DEV("nvmlDeviceGetRetiredPages_v2");
    *count = 0;
    return 0;
}

nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t dev, int *pending) {
    DEV("nvmlDeviceGetRetiredPagesPendingStatus");
    *pending = 0;
    return 0;
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t dev, unsigned int *corr, unsigned int *unc,
                                       unsigned int *pending, unsigned int *failure) {
    DEV("nvmlDeviceGetRemappedRows");
    if (dev->cc_major < 8) return 3;
    *corr = *unc = *pending = *failure = 0;
    return 0;
}

#ifndef R470
typedef struct {
    unsigned int max, high, partial, low, none;
} nvmlRowRemapperHistogramValues_t;

nvmlReturn_t nvmlDeviceGetRowRemapperHistogram(nvmlDevice_t dev,
                                               nvmlRowRemapperHistogramValues_t *v) {
    DEV("nvmlDeviceGetRowRemapperHistogram");
    if (dev->cc_major < 8) return 3;
    memset(v, 0, sizeof *v);
    v->max = 640;
    return 0;
}
#endif

typedef struct {
    unsigned int fieldId, scopeId;
    long long timestamp, latencyUsec;
    int valueType;
    nvmlReturn_t nvmlReturn;
    unsigned long long value;
} nvmlFieldValue_t;

nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t dev, int count, nvmlFieldValue_t *v) {
    DEV("nvmlDeviceGetFieldValues");
    for (int i = 0; i < count; i++) {
        v[i].valueType = 1; /* unsigned int */
        v[i].nvmlReturn = strcmp(prof()->id, "h100") == 0 ? 0 : 3;
        v[i].value = 0;
    }
    return 0;
}

nvmlReturn_t nvmlDeviceValidateInforom(nvmlDevice_t dev) {
    DEV("nvmlDeviceValidateInforom");
    return 0;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t dev, int sensor, unsigned int *t) {
    (void)sensor;
    DEV("nvmlDeviceGetTemperature");
    ANSWER(t, dev->temp_c);
}

nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t dev, int which, unsigned int *t) {
    DEV("nvmlDeviceGetTemperatureThreshold");
    /* 0 = shutdown, 1 = slowdown */
    ANSWER(t, which == 0 ? dev->shutdown_c : which == 1 ? dev->slowdown_c : NA);
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t dev, unsigned int *mw) {
    DEV("nvmlDeviceGetPowerUsage");
    ANSWER(mw, dev->power_mw);
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t dev, unsigned int *mw) {
    DEV("nvmlDeviceGetEnforcedPowerLimit");
    ANSWER(mw, dev->power_limit_mw);
}

/* Clock types: 0 graphics, 1 SM, 2 memory, 3 video. */
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t dev, int type, unsigned int *mhz) {
    DEV("nvmlDeviceGetClockInfo");
    ANSWER(mhz, type == 2 ? dev->mem_mhz : dev->sm_mhz);
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t dev, int type, unsigned int *mhz) {
    DEV("nvmlDeviceGetMaxClockInfo");
    ANSWER(mhz, type == 2 ? dev->mem_max_mhz : dev->sm_max_mhz);
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t dev, unsigned int *v) {
    DEV("nvmlDeviceGetCurrPcieLinkGeneration");
    ANSWER(v, dev->pcie_gen);
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t dev, unsigned int *v) {
    DEV("nvmlDeviceGetCurrPcieLinkWidth");
    ANSWER(v, dev->pcie_width);
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t dev, unsigned int *v) {
    DEV("nvmlDeviceGetMaxPcieLinkGeneration");
    ANSWER(v, dev->pcie_max_gen);
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t dev, unsigned int *v) {
    DEV("nvmlDeviceGetMaxPcieLinkWidth");
    ANSWER(v, dev->pcie_max_width);
}

nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t dev, unsigned int *v) {
    DEV("nvmlDeviceGetPcieReplayCounter");
    ANSWER(v, dev->pcie_replays);
}

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t dev, unsigned long long *r) {
    DEV("nvmlDeviceGetCurrentClocksThrottleReasons");
    ANSWER(r, dev->throttle);
}

typedef struct {
    unsigned int gpu, memory;
} nvmlUtilization_t;

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t dev, nvmlUtilization_t *u) {
    DEV("nvmlDeviceGetUtilizationRates");
    if (dev->util_gpu == NA) return 3;
    u->gpu = dev->util_gpu;
    u->memory = dev->util_mem;
    return 0;
}

nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t dev, int *p) {
    DEV("nvmlDeviceGetPerformanceState");
    ANSWER(p, dev->pstate);
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t dev, unsigned int link, int *active) {
    DEV("nvmlDeviceGetNvLinkState");
    if (link >= dev->nvlinks) return 3;
    *active = 1;
    return 0;
}

nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t dev, unsigned int link, int counter,
                                             unsigned long long *n) {
    (void)counter;
    DEV("nvmlDeviceGetNvLinkErrorCounter");
    if (link >= dev->nvlinks) return 3;
    *n = 0;
    return 0;
}

/* Events: Xid (critical error) = 0x8, double-bit ECC = 0x2, single-bit = 0x1. */
nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t dev, unsigned long long *t) {
    DEV("nvmlDeviceGetSupportedEventTypes");
    *t = dev->ecc == 1 ? 0xbULL : 0x8ULL;
    return 0;
}

static int event_set;

nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set) {
    GATE("nvmlEventSetCreate");
    *set = &event_set;
    return 0;
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t dev, unsigned long long types,
                                      nvmlEventSet_t set) {
    (void)set;
    DEV("nvmlDeviceRegisterEvents");
    if (types & 0x2ULL && dev->ecc != 1) return 3;
    return 0;
}

typedef struct {
    nvmlDevice_t device;
    unsigned long long eventType, eventData;
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlEventData_t;

nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *d, unsigned int ms) {
    (void)set;
    (void)d;
    GATE("nvmlEventSetWait_v2");
    usleep(ms * 1000);
    return 10; /* TIMEOUT: no event */
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
    (void)set;
    GATE("nvmlEventSetFree");
    return 0;
}
