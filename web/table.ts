/** The page's tables: a caption, a head and rows of cells (web/main.ts's panels, the advisor, the live timelines' steps). */

/** A cell: its text, or its text with a class (e.g. 'num') and a title (its full wording on hover). */
export type Cell = string | { text: string; cls?: string; title?: string };

/** A table with a caption, a head (a cell with a title: the column's name in full on hover) and rows of cells; no rows: empty. */
export function fillTable(table: HTMLTableElement, caption: string, head: Cell[], rows: Cell[][], rowClass: (i: number) => string = () => ''): void {
  table.replaceChildren();
  if (!rows.length) return;
  table.createCaption().textContent = caption;
  const hr = table.createTHead().insertRow();
  for (const h of head) hr.append(Object.assign(document.createElement('th'), typeof h === 'string' ? { textContent: h } : { textContent: h.text, title: h.title ?? '', className: h.cls ?? '' }));
  const body = table.createTBody();
  rows.forEach((cells, i) => {
    const tr = body.insertRow();
    tr.className = rowClass(i);
    for (const c of cells) {
      const td = tr.insertCell();
      if (typeof c === 'string') td.textContent = c;
      else Object.assign(td, { textContent: c.text, className: c.cls ?? '', title: c.title ?? '' });
    }
  });
}

/** The table of the element a canvas's aria-details names (a chart's or a timeline's numbers in text), or null. */
export const detailsTable = (canvas: HTMLElement): HTMLTableElement | null =>
  document.getElementById(canvas.getAttribute('aria-details') ?? '')?.querySelector('table') ?? null;
