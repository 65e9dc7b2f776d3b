/**
 * The view's URL hash, written from every panel (planner, CP panel, advisor, live form): one place,
 * so a link copied or shown to copy by hand ("Copy link to this view") is cleared whenever the view
 * it was of changes, whichever panel changed it.
 */
export function replaceViewHash(q: URLSearchParams): void {
  if (location.hash === `#${q}`) return;
  history.replaceState(null, '', `#${q}`);
  const status = document.getElementById('copy-status'), box = document.getElementById('copy-by-hand') as HTMLInputElement | null;
  if (status) status.textContent = '';
  if (box) box.hidden = true;
}

/**
 * Puts a link's value in a control; false, the control keeping what it held, where the control cannot hold it: a
 * number field empties what is not a number ('abc', '0x10'), a select what is not one of its options. Unchecked,
 * tp=abc showed as an empty TP, refused as "empty or not a number", and the link's abc was said nowhere.
 */
function takeLinkValue(input: HTMLInputElement | HTMLSelectElement, value: string): boolean {
  const before = input.value;
  input.value = value;
  if (input.value === value) return true;
  input.value = before;
  return false;
}

/**
 * One control from a link: `key`'s value where the link gives one the control can hold (takeLinkValue), else `fallback`;
 * a value set aside is added to `setAside` as 'key=value', which the page's top line names. Every panel loads its
 * number fields and selects from a link through it.
 */
export function linkValue(input: HTMLInputElement | HTMLSelectElement, q: URLSearchParams, key: string, fallback: string, setAside: string[]): void {
  input.value = fallback;
  const v = q.get(key);
  if (v !== null && !takeLinkValue(input, v)) setAside.push(`${key}=${v}`);
}
