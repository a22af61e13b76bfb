/**
 * Which slot each arm of a deployed experiment takes in a trial: the one convention the replayer deploys by, the
 * judge's sequential law is simulated with and the synthetic benches draw from.
 *
 * ABBA, not ABAB: trials 0..3 put the treatment in slot B, A, A, B, and so on in blocks of four. With alternation a
 * slot effect that drifts linearly by γ per trial leaks into the estimated change (the slot signs −1, +1, … are
 * correlated with the trial index: the bias is γ/2); in every block of four ABBA's signs sum to zero against the
 * index as well (−t + (t+1) + (t+2) − (t+3) = 0), so a linear drift is fitted away with the slot term (a
 * crossover's standard counterbalancing; Cochran & Cox, Experimental Designs, 1957, ch. 4).
 */
export function treatmentSlotSign(trial: number): 1 | -1 {
  const phase = ((trial % 4) + 4) % 4;
  return phase === 1 || phase === 2 ? 1 : -1;
}
