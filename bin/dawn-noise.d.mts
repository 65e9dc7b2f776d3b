/** Dawn's two stderr lines per adapter on some drivers (bin/dawn-noise.mjs). */
export declare const DAWN_NOISE: RegExp;
