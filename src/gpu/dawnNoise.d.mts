/** Dawn's two stderr lines per adapter on some drivers (src/gpu/dawnNoise.mjs). */
export declare const DAWN_NOISE: RegExp;
