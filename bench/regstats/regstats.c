// The driver's own statistics of compute shaders (VK_KHR_pipeline_executable_properties): registers, spills, shared
// memory and whatever else it reports, per SPIR-V module, one JSON object a line. Dawn gives no such figures and no
// profiler reaches its Vulkan kernels here, so this builds each module as a plain Vulkan compute pipeline with the
// driver the bench runs on. The SPIR-V comes from Dawn's own dump (bench/regstats/run.sh).
// Build: bash bench/regstats/build.sh (needs libvulkan-dev; links the loader at run time only).
// Usage: regstats ENTRY LAYOUT FILE.spv [ROBUST]   ROBUST 1 (default): Vulkan's robustBufferAccess on, as Dawn enables
// it with robustness on; 0: off, as without (robustBufferAccess2 is never enabled). LAYOUT: the module's bindings in descriptor set 0 in binding order, U (uniform
// buffer) or S (storage buffer), e.g. USSSSSS (bench/regstats/extract.mjs prints it for each dumped module).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

static void die(const char *what, VkResult r) { fprintf(stderr, "regstats: %s failed (VkResult %d)\n", what, (int)r); exit(2); }

static unsigned char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) { fprintf(stderr, "regstats: cannot read %s\n", path); exit(2); }
  fseek(f, 0, SEEK_END); *n = (size_t)ftell(f); fseek(f, 0, SEEK_SET);
  unsigned char *b = malloc(*n);
  if (fread(b, 1, *n, f) != *n) { fprintf(stderr, "regstats: short read of %s\n", path); exit(2); }
  fclose(f);
  return b;
}

static VkDevice open_device(VkInstance *inst, char *name, size_t name_len, int robust) {
  VkApplicationInfo app = { VK_STRUCTURE_TYPE_APPLICATION_INFO, NULL, "regstats", 1, NULL, 0, VK_API_VERSION_1_3 };
  VkInstanceCreateInfo ici = { VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, NULL, 0, &app, 0, NULL, 0, NULL };
  VkResult r = vkCreateInstance(&ici, NULL, inst);
  if (r) die("vkCreateInstance", r);
  uint32_t n = 1; VkPhysicalDevice pd;
  r = vkEnumeratePhysicalDevices(*inst, &n, &pd);
  if ((r && r != VK_INCOMPLETE) || n == 0) die("vkEnumeratePhysicalDevices", r);
  VkPhysicalDeviceProperties props; vkGetPhysicalDeviceProperties(pd, &props);
  snprintf(name, name_len, "%s", props.deviceName);
  float prio = 1.0f;
  VkDeviceQueueCreateInfo q = { VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0, 0, 1, &prio };
  // Every feature the dumped modules may declare (Vulkan 1.3 core: the memory model, f16, 8/16-bit storage, subgroup sizes).
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pe = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR };
  VkPhysicalDeviceVulkan13Features f13 = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES, &pe };
  VkPhysicalDeviceVulkan12Features f12 = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &f13 };
  VkPhysicalDeviceVulkan11Features f11 = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &f12 };
  VkPhysicalDeviceFeatures2 f2 = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f11 };
  vkGetPhysicalDeviceFeatures2(pd, &f2);   // enable all the device has, robustness only as Dawn would
  if (!robust) { f2.features.robustBufferAccess = VK_FALSE; f13.robustImageAccess = VK_FALSE; }
  if (!pe.pipelineExecutableInfo) { fprintf(stderr, "regstats: %s has no pipelineExecutableInfo (VK_KHR_pipeline_executable_properties)\n", name); exit(3); }
  const char *ext[] = { "VK_KHR_pipeline_executable_properties" };
  VkDeviceCreateInfo dci = { VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &f2, 0, 1, &q, 0, NULL, 1, ext, NULL };
  VkDevice dev;
  r = vkCreateDevice(pd, &dci, NULL, &dev);
  if (r) die("vkCreateDevice", r);
  return dev;
}

static void print_stat(const VkPipelineExecutableStatisticKHR *s) {
  printf(", \"%s\": ", s->name);
  switch (s->format) {
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: printf("%s", s->value.b32 ? "true" : "false"); break;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: printf("%lld", (long long)s->value.i64); break;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: printf("%llu", (unsigned long long)s->value.u64); break;
    default: printf("%g", s->value.f64);
  }
}

// One module: its compute pipeline with statistics captured, each executable's statistics as one JSON line.
static void stats(VkDevice dev, const char *entry, const char *layout, const char *path) {
  size_t n; unsigned char *code = slurp(path, &n);
  VkShaderModuleCreateInfo smi = { VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, NULL, 0, n, (const uint32_t *)code };
  VkShaderModule sm; VkResult r = vkCreateShaderModule(dev, &smi, NULL, &sm);
  if (r) die("vkCreateShaderModule", r);
  // The pipeline layout declares what the module binds (descriptor set 0, as Dawn writes it).
  VkDescriptorSetLayoutBinding b[32]; uint32_t nb = 0;
  for (const char *c = layout; *c && nb < 32; c++, nb++)
    b[nb] = (VkDescriptorSetLayoutBinding){ nb, *c == 'U' ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL };
  VkDescriptorSetLayoutCreateInfo dli = { VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, NULL, 0, nb, b };
  VkDescriptorSetLayout dl; r = vkCreateDescriptorSetLayout(dev, &dli, NULL, &dl);
  if (r) die("vkCreateDescriptorSetLayout", r);
  VkPipelineLayoutCreateInfo pli = { VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, NULL, 0, 1, &dl, 0, NULL };
  VkPipelineLayout pl; r = vkCreatePipelineLayout(dev, &pli, NULL, &pl);
  if (r) die("vkCreatePipelineLayout", r);
  VkComputePipelineCreateInfo cpi = { VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO, NULL, VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR,
    { VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0, VK_SHADER_STAGE_COMPUTE_BIT, sm, entry, NULL }, pl, VK_NULL_HANDLE, -1 };
  VkPipeline p; r = vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpi, NULL, &p);
  if (r) die("vkCreateComputePipelines", r);
  PFN_vkGetPipelineExecutablePropertiesKHR props = (PFN_vkGetPipelineExecutablePropertiesKHR)vkGetDeviceProcAddr(dev, "vkGetPipelineExecutablePropertiesKHR");
  PFN_vkGetPipelineExecutableStatisticsKHR statsf = (PFN_vkGetPipelineExecutableStatisticsKHR)vkGetDeviceProcAddr(dev, "vkGetPipelineExecutableStatisticsKHR");
  VkPipelineInfoKHR pi = { VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, NULL, p };
  uint32_t ne = 0; props(dev, &pi, &ne, NULL);
  VkPipelineExecutablePropertiesKHR ep[8];
  for (uint32_t i = 0; i < 8; i++) ep[i] = (VkPipelineExecutablePropertiesKHR){ VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR };
  if (ne > 8) ne = 8;
  props(dev, &pi, &ne, ep);
  for (uint32_t e = 0; e < ne; e++) {
    VkPipelineExecutableInfoKHR ei = { VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR, NULL, p, e };
    uint32_t ns = 0; statsf(dev, &ei, &ns, NULL);
    VkPipelineExecutableStatisticKHR *s = calloc(ns ? ns : 1, sizeof *s);
    for (uint32_t i = 0; i < ns; i++) s[i].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR;
    statsf(dev, &ei, &ns, s);
    printf("{\"file\": \"%s\", \"entry\": \"%s\", \"executable\": \"%s\", \"subgroupSize\": %u", path, entry, ep[e].name, ep[e].subgroupSize);
    for (uint32_t i = 0; i < ns; i++) print_stat(&s[i]);
    printf("}\n");
    free(s);
  }
  vkDestroyPipeline(dev, p, NULL); vkDestroyPipelineLayout(dev, pl, NULL); vkDestroyDescriptorSetLayout(dev, dl, NULL); vkDestroyShaderModule(dev, sm, NULL); free(code);
}

int main(int argc, char **argv) {
  if (argc != 4 && !(argc == 5 && (!strcmp(argv[4], "0") || !strcmp(argv[4], "1")))) { fprintf(stderr, "usage: regstats ENTRY LAYOUT FILE.spv [ROBUST: 0 or 1]\n"); return 2; }
  VkInstance inst; char name[256];
  VkDevice dev = open_device(&inst, name, sizeof name, argc == 5 ? argv[4][0] == '1' : 1);
  fprintf(stderr, "regstats: %s\n", name);
  stats(dev, argv[1], argv[2], argv[3]);
  vkDestroyDevice(dev, NULL); vkDestroyInstance(inst, NULL);
  return 0;
}
