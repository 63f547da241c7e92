// Exponential backoff with jitter for reconnect attempts.

export interface BackoffOptions {
  /** First delay in ms. */
  baseMs: number;
  /** Upper bound of the un-jittered delay in ms. */
  maxMs: number;
  /** Fraction of the delay that is randomised (0..1). 0.5 → delay in [d/2, d]. */
  jitter: number;
}

export const defaultBackoff: BackoffOptions = { baseMs: 250, maxMs: 10_000, jitter: 0.5 };

/** Delay before attempt `attempt` (0-based), given a random number in [0,1). */
export function backoffDelay(attempt: number, random: number, o: BackoffOptions = defaultBackoff): number {
  const exp = Math.min(o.maxMs, o.baseMs * 2 ** Math.min(attempt, 30));
  return Math.round(exp * (1 - o.jitter) + exp * o.jitter * random);
}
