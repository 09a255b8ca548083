/** "Did you mean ...?": the edit distance behind gwctl's suggestions for typos. */

/** Levenshtein distance (small strings only). */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({length: b.length + 1}, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j] + 1,
        current[j - 1] + 1,
        previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1),
      )
    }
    previous = current
  }
  return previous[b.length]
}

/** The candidate closest to `typed`, when it is close enough to be a typo (a third of its length). */
export function closest(typed: string, candidates: readonly string[]): string | undefined {
  let best: {value: string; score: number} | undefined
  for (const value of candidates) {
    const score = editDistance(typed.toLowerCase(), value.toLowerCase())
    if (score <= Math.max(1, Math.floor(value.length / 3)) && (!best || score < best.score))
      best = {value, score}
  }
  return best?.value
}
