// Dawn's Vulkan backend prints these two lines to stderr from native code each time an adapter is
// created on some drivers (Mesa lavapipe): they say nothing to a user. Processes that pass on a
// child's stderr (bin/flashring.mjs, src/ring/processRanks.ts) drop exactly these lines.
export const DAWN_NOISE = /^Warning: maxDynamic(Uniform|Storage)BuffersPerPipelineLayout artificially reduced from \d+ to \d+ to fit dynamic offset allocation limit\.\r?$/;
