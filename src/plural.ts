/**
 * Counted nouns in messages, singular for one and plural otherwise, instead of "1 point(s)":
 * `counted(1, 'point')` is '1 point', `counted(3, 'point')` '3 points', `counted(2, 'rank process', 'rank processes')`
 * '2 rank processes'; `plural(n, 'column')` the noun alone, where the count is said elsewhere or not at all.
 */
export const plural = (n: number, word: string, many = `${word}s`): string => (n === 1 ? word : many);

/** `n` and its noun: '1 point', '3 points' (plural's rule). */
export const counted = (n: number, word: string, many?: string): string => `${n} ${plural(n, word, many)}`;
