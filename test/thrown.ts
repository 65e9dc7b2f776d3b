/** What `f` throws; a test that expects a refusal fails here if none comes. */
export function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error('it did not throw');
}
