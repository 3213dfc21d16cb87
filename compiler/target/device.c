/* device.c — which runtime device runs the code a target builds: the one mapping from
 * Target to RtDevice, for texc run/bench, networks and the tuner's measurements. */
#include "texc.h"

#include "texrt.h"

RtDevice target_device(Target t) {
  static const RtDeviceKind kind[TARGET_COUNT] = {
      [TARGET_LLVM] = RT_CPU, [TARGET_CUDA] = RT_CUDA, [TARGET_OPENCL] = RT_OPENCL};
  return (RtDevice){kind[t], 0};
}
