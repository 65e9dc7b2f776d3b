/**
 * Errors attached to the form fields they are about. A check that fails throws a FieldError that
 * names its control; the panel that catches it still says the message in its own message area,
 * and showFieldErrors puts it beside the control too: the control marked aria-invalid (styled in
 * style.css), the message in a span beside it (in its label) that aria-describedby points to.
 * Each call replaces the form's marks, so a field that has become valid loses its mark.
 */

import { InputError } from '../src/errors.js';
import { LINK_GBPS, LINK_LATENCY_US, resolveLink, type Link } from '../src/cp/plan/linkModel.js';
import { numberFrom } from './format.js';

/** A value the page cannot take, and the control it is about (none: no one field, e.g. the model's own checks). */
export class FieldError extends Error {
  constructor(message: string, readonly field: HTMLElement | null = null) {
    super(message);
  }
}

/** Several fields wrong at once (a panel that checks each field on its own); its message is the first's. */
export class FieldErrors extends Error {
  constructor(readonly errors: FieldError[]) {
    super(errors[0]?.message ?? 'invalid input');
  }
}

/** A field's allowed numbers: [min, max] (`above`: min itself excluded), and how the page says them (default: "a number from min to max"). */
export interface FieldRange { min: number; max: number; above?: boolean; what?: string }

/** The number in a field, or a FieldError in the page's words: "<label> must be <what> (it is <value>)." */
export function fieldNumber(input: HTMLInputElement, label: string, { min, max, above = false, what = numberFrom(min, max) }: FieldRange): number {
  const raw = input.value.trim(), v = Number(raw);
  if (raw === '' || !Number.isFinite(v) || v < min || (above && v === min) || v > max) {
    throw new FieldError(`${label} must be ${what} (it is ${raw === '' ? 'empty or not a number' : raw}).`, input);
  }
  return v;
}

/** A custom link from its bandwidth (Gbit/s per direction) and latency (µs) fields, in the link model's ranges (the CLI's link flags take the same). */
export function customLink(gbps: HTMLInputElement, latencyUs: HTMLInputElement): Link {
  // The ranges in the page's words ("a number from … to …"), not the CLI's (LINK_GBPS.what).
  const range = ({ min, max }: FieldRange) => ({ min, max });
  return resolveLink('custom', fieldNumber(gbps, 'Link bandwidth (Gbit/s)', range(LINK_GBPS)), fieldNumber(latencyUs, 'Link latency (µs)', range(LINK_LATENCY_US)));
}

/** The control (its name) of the first of a refusal's flags (InputError.flags) that a form has, by its flag → control table; undefined where none. */
export const flagField = (flags: readonly string[], fields: Readonly<Record<string, string>>): string | undefined =>
  flags.map((f) => (Object.hasOwn(fields, f) ? fields[f] : undefined)).find(Boolean);

/** Bad input the page says as such: a field's (FieldError, FieldErrors) or the model's own checks (InputError); anything else is a bug. */
export function isInputError(e: unknown): boolean {
  return e instanceof FieldError || e instanceof FieldErrors || e instanceof InputError;
}

/**
 * A bug (not bad input) caught where a panel says its errors: the words to say there, and the
 * error rethrown after this task (`rethrow`), so that the console and the page tests see it with
 * its stack while the panel still says what happened.
 */
export function bugWords(e: unknown, rethrow: (e: unknown) => void = (x) => void setTimeout(() => { throw x; })): string {
  rethrow(e);
  return `Internal error of the page (please report it, with the page's address): ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`;
}

/** What one mark shows: the control and the message beside it. */
export interface FieldMark { field: HTMLElement | null; message: string }

/** The marks an error gives, each message passed through `words` (the page's wording). */
export function marksOf(e: unknown, words: (e: unknown) => string = (x) => (x instanceof Error ? x.message : String(x))): FieldMark[] {
  const list = e instanceof FieldErrors ? e.errors : [e];
  return list.map((x) => ({ field: x instanceof FieldError ? x.field : null, message: words(x) }));
}

const ERROR_CLASS = 'field-error';

/**
 * Where a control's message goes: at the end of its label, so that the two stay together when the
 * row wraps (hidden from the label's accessible name: aria-describedby gives it as the control's
 * description), at the end of a fieldset, else after the control.
 */
function place(field: HTMLElement, span: HTMLElement): void {
  const label = field.closest('label');
  if (label) {
    span.setAttribute('aria-hidden', 'true');
    label.append(span);
  } else if (field instanceof HTMLFieldSetElement) field.append(span);
  else field.after(span);
}

/**
 * Marks the controls of `form` that `marks` name (marks of other forms' controls or of none are
 * left to the panel's message area) and clears every other mark of the form.
 */
export function showFieldErrors(form: HTMLFormElement, marks: FieldMark[]): void {
  for (const el of Array.from(form.querySelectorAll<HTMLElement>('[aria-invalid="true"]'))) {
    el.removeAttribute('aria-invalid');
    el.removeAttribute('aria-describedby');
  }
  for (const span of Array.from(form.querySelectorAll(`.${ERROR_CLASS}`))) span.remove();
  const seen = new Set<HTMLElement>();
  for (const { field, message } of marks) {
    if (!field || seen.has(field) || !form.contains(field)) continue;
    seen.add(field);
    const id = `${form.id}-${(field as HTMLInputElement).name || field.className || 'field'}-error`.replace(/[^\w-]/g, '_');
    const span = Object.assign(document.createElement('span'), { id, className: ERROR_CLASS, textContent: message });
    place(field, span);
    field.setAttribute('aria-invalid', 'true');
    field.setAttribute('aria-describedby', id);
  }
}
