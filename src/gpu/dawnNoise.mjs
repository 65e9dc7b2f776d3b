// Dawn's Vulkan backend prints these two lines to stderr from native code each time an adapter is
// created on some drivers (Mesa lavapipe); they say nothing to a user. Plain JavaScript so that
// bin/dawn-noise.mjs (run before tsx is registered) and the rank launcher share the one pattern.
export const DAWN_NOISE = /^Warning: maxDynamic(Uniform|Storage)BuffersPerPipelineLayout artificially reduced from \d+ to \d+ to fit dynamic offset allocation limit\.\r?$/;
