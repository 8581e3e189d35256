#include "kernels/device_info.hpp"

#include <fstream>
#include <sstream>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "kernels/cuda_check.hpp"

namespace moesim::kernels {
namespace {

std::string cuda_version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  MOESIM_CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, device));
  return value;
}

}  // namespace

DeviceInfo query_device(int device) {
  cudaDeviceProp prop{};
  MOESIM_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  DeviceInfo info;
  info.name = prop.name;
  info.sm_count = prop.multiProcessorCount;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.sm_clock_mhz = attribute(cudaDevAttrClockRate, device) / 1000;  // kHz
  info.memory_clock_mhz = attribute(cudaDevAttrMemoryClockRate, device) / 1000;
  info.total_memory = prop.totalGlobalMem;
  info.l2_bytes = prop.l2CacheSize;
  return info;
}

std::string driver_version() {
  int api = 0;
  MOESIM_CUDA_CHECK(cudaDriverGetVersion(&api));
  const std::string cuda = "CUDA " + cuda_version_string(api);
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.03  Thu Sep ..."
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (in && std::getline(in, line)) {
    // The first word made of digits and at least one dot is the driver's version.
    std::istringstream words(line);
    std::string word;
    while (words >> word) {
      if (word.find('.') != std::string::npos && word.find_first_not_of("0123456789.") == std::string::npos) return word + " (" + cuda + ")";
    }
  }
  return cuda;
}

std::string cuda_runtime_version() {
  int v = 0;
  MOESIM_CUDA_CHECK(cudaRuntimeGetVersion(&v));
  return cuda_version_string(v);
}

std::string cublas_version() {
  const std::size_t v = cublasLtGetVersion();  // major * 10000 + minor * 100 + patch
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." + std::to_string(v % 100);
}

}  // namespace moesim::kernels
