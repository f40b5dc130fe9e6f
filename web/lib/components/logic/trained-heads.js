// The teaching logic of <mha-trained-heads>, pure (no DOM, no Lit; tested in Node by
// tests/trained-heads-logic.test.mjs): a model's head labels from its probes, what a copying score
// says, and one sentence per head on whether it does on a text what its label says.
import {
  TYPE_THRESHOLD, INDUCTION_MIN_SPAN, COPYING_THRESHOLD, headType, copyingScores, inductionVerdict,
} from '../../src/index.js';
import { SCORE_OF, SCORE_MEANS, f2 } from './trained-text.js';

/**
 * The head labels from the probe texts of the model's file (CharModel.heads), or null for a model
 * whose file stores none (a Hugging Face folder, a llama2.c checkpoint: their `heads` come from
 * random tokens, and their vocabularies are too large for copying scores).
 */
const probesOf = new WeakMap();
export function probeHeads(lm) {
  if (!probesOf.has(lm)) {
    let v = null;
    if (lm.headsProbes === 'file') try { v = { heads: lm.heads, copying: lm.copying ?? copyingScores(lm) }; } catch { v = null; }
    probesOf.set(lm, v);
  }
  return probesOf.get(lm);
}

/** "a" or "an" before a head type ("an induction head", "a previous-token head"). */
const article = (word) => (/^[aeiou]/i.test(word) ? 'an' : 'a');

/** What a head's copying score says, for its box and the explanation. */
export function copyingPhrase(c) {
  return `copying score ${f2(c.score)}${c.copies ? '' : `, below ${COPYING_THRESHOLD}`}: attending to one character, it raises ` +
    `that character's own logit the most for ${c.copied} of ${c.total} characters`;
}

/**
 * One sentence per head on what it does on the text shown, from its label and scores on the
 * held-out probes (`reference`, CharModel.heads), its scores on this text (`onText`, scoreText)
 * and, when given, its copying score (`copying`, copyingScores): whether it does here what its
 * label says, the score that says so, and, when the text does not define that score (an induction
 * score needs a repeated span), that it cannot be judged here. A head is called an induction head
 * only when its attention is labelled induction AND its output copies (Olsson et al. 2022's two
 * tests); otherwise the sentence says which of the two holds. A switched-off head (`off`) is
 * described as such: its attention is still computed, its output no longer reaches the model.
 * @param {Array<{layer: number, head: number, type: string, scores: object}>} reference
 * @param {Array<{layer: number, head: number, scores: object}>} onText
 * @param {Array<{layer: number, head: number, score: number, copied: number, total: number, copies: boolean}>} [copying]
 * @param {Array<[number, number]>} [off] switched-off heads, 0-based [layer, head]
 * @returns {{summary: string, lines: string[], matches: number, labelled: number}}
 */
export function explainHeads(reference, onText, copying = null, off = []) {
  const lines = [];
  let matches = 0;
  let labelled = 0;
  let judged = 0;
  let switchedOff = 0;
  for (const ref of reference) {
    const here = onText.find((s) => s.layer === ref.layer && s.head === ref.head)?.scores;
    const copy = copying?.find((c) => c.layer === ref.layer && c.head === ref.head) ?? null;
    const isOff = off.some(([l, j]) => l === ref.layer && j === ref.head);
    const name = `L${ref.layer + 1} · head ${ref.head + 1}`;
    const key = SCORE_OF[ref.type];
    const zeroed = Object.fromEntries(Object.entries(here).map(([k, v]) => [k, v ?? 0]));
    const hereType = headType(zeroed);
    const other = hereType !== ref.type && SCORE_OF[hereType]
      ? ` Its strongest pattern on this text is ${hereType} (${f2(here[SCORE_OF[hereType]])}).` : '';
    const verdict = copy ? inductionVerdict(ref, copy) : null;
    // the copying half, for heads whose output copies without an induction label
    const copiesToo = verdict === 'copies-only' ? ` Its output copies: ${copyingPhrase(copy)}.` : '';
    if (!key) {
      lines.push(`${name} has no single pattern on the probes (${ref.type}, entropy ${f2(ref.scores.entropy)}); ` +
        `on this text its entropy is ${f2(here.entropy)}.${other}${copiesToo}`);
      continue;
    }
    labelled++;
    // what the probes say the head is, in words that hold both of the induction tests apart
    const isInduction = key === 'induction';
    const probeName = !isInduction ? `${ref.type} on the probes (${f2(ref.scores[key])})`
      : verdict === 'induction' ? `an induction head (induction score ${f2(ref.scores.induction)} on the probes; ${copyingPhrase(copy)})`
        : verdict === 'attends-only' ? `a head that attends like an induction head on the probes (${f2(ref.scores.induction)}) but does not copy ` +
          `(${copyingPhrase(copy)})`
          : `labelled induction by its attention on the probes (${f2(ref.scores.induction)})`;
    const v = here[key];
    if (v === null) {
      lines.push(isInduction
        ? `${name} is ${probeName}; this text repeats no span of ` +
          `${INDUCTION_MIN_SPAN} characters, so there is nothing for it to copy: write a phrase twice to see it work.${other}`
        : `${name} (${probeName}) cannot be judged on a text this short.`);
      continue;
    }
    if (isOff) {
      switchedOff++;
      lines.push(`${name} is switched off: its attention is still computed (${f2(v)} of it is ${SCORE_MEANS[key]}), ` +
        'but its output no longer reaches the rest of the model.');
      continue;
    }
    judged++;
    if (v >= TYPE_THRESHOLD) {
      matches++;
      if (!isInduction) {
        lines.push(`${name} acts as ${article(ref.type)} ${ref.type} head here too: ${f2(v)} of its attention is ${SCORE_MEANS[key]} ` +
          `(${f2(ref.scores[key])} on the probes).${copiesToo}`);
      } else if (verdict === 'attends-only') {
        lines.push(`${name} attends like an induction head here too: ${f2(v)} of its attention is ${SCORE_MEANS[key]} ` +
          `(${f2(ref.scores[key])} on the probes). But its output does not copy: ${copyingPhrase(copy)}; so it is not called an induction head.`);
      } else {
        lines.push(`${name} acts as an induction head here too: ${f2(v)} of its attention is ${SCORE_MEANS[key]} ` +
          `(${f2(ref.scores[key])} on the probes)${copy ? `, and its output copies (${copyingPhrase(copy)})` : ''}.`);
      }
    } else {
      lines.push(`${name} is labelled ${ref.type} from the probes (${f2(ref.scores[key])}), but on this text only ` +
        `${f2(v)} of its attention is ${SCORE_MEANS[key]}, below the ${TYPE_THRESHOLD} that earns the label.${other}${copiesToo}`);
    }
  }
  const summary = labelled === 0
    ? 'No head of this model has a label from the probes.'
    : `On this text, ${matches} of the ${judged} labelled heads that it can judge do what their label says` +
      (judged + switchedOff < labelled ? ` (${labelled - judged - switchedOff} cannot be judged here)` : '') +
      (switchedOff ? ` (${switchedOff} switched off)` : '') + '.';
  return { summary, lines, matches, labelled };
}


/** The side (CSS px) of a head's map when `map-size` is not given. */
export const DEFAULT_MAP = 200;
/** The largest map side (CSS px) in a narrow container (under 520 px), whatever map-size asks. */
export const NARROW_MAP = 100;

/**
 * The cell sides that draw a map of T tokens at most `side` CSS px square (T cells and T − 1 gaps of
 * 1 px: T · cell + T − 1 ≤ side), as the custom properties the explorer sets on its grid of heads: in a
 * wide container 2 to 16 px a cell (below 2 px a map with gaps is mostly gaps: a text too long for the
 * side then draws 3T − 1 px, and its card scrolls); in a narrow one at most NARROW_MAP px and 1 to 16 px
 * a cell, a 1 px cell drawn without the gaps (solidCells: the gaps are filled, so it reads as 2 px).
 * @param {number} side the map's side in CSS px (map-size, or DEFAULT_MAP)
 * @param {number} T tokens in the map
 * @returns {string} `--_cell-wide: …px; --_cell-narrow: …px`
 */
export function fixedCells(side, T) {
  return `--_cell-wide: ${cellSide(side, T)}px; --_cell-narrow: ${cellSide(Math.min(side, NARROW_MAP), T, 1)}px`;
}

/**
 * Whether the narrow maps of T tokens have cells of 1 px, drawn without the gaps between cells.
 * @param {number} side the map's side in CSS px (map-size, or DEFAULT_MAP)
 * @param {number} T tokens in the map
 * @returns {boolean}
 */
export function solidCells(side, T) {
  return cellSide(Math.min(side, NARROW_MAP), T, 1) < 2;
}

/**
 * The cell side (CSS px, `least` to 16) of a map of T tokens at most `side` CSS px square: T · cell + T − 1 ≤ side.
 * @param {number} side the map's side in CSS px
 * @param {number} T tokens in the map
 * @param {number} [least] the smallest cell (2; 1 where the gaps are not drawn)
 * @returns {number}
 */
export function cellSide(side, T, least = 2) {
  return Math.min(16, Math.max(least, Math.floor((side + 1) / Math.max(1, T)) - 1));
}
