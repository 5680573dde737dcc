import sys, time, cupy as cp
k = cp.RawKernel(r'''
extern "C" __global__ void wild(float *p) { p[(size_t)1 << 40] = 1.0f; }
''', "wild")
a = cp.zeros(16, dtype=cp.float32)
time.sleep(float(sys.argv[1]))
try:
    k((1,), (1,), (a,)); cp.cuda.runtime.deviceSynchronize()
except Exception as e:
    print("kernel failed as meant:", type(e).__name__)
