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
