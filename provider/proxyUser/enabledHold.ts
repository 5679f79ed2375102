/**
 * The held emergency disable, as one rule for the provider (which decides whether `up` writes
 * `enabled`) and for `pulumi-proxy plan` (which tells the reviewer what `up` will do). A user that
 * someone disabled outside Pulumi stays disabled, even though the program says `enabled: true`,
 * until the program changes `reenableTrigger`: a pipeline never silently undoes an emergency disable.
 */
export interface EnabledHoldState {
  /** As the API holds it (after the last refresh). */
  enabled: boolean;
  disabledOutOfBand: boolean;
  reenableTrigger?: string | undefined;
}

/** Whether `up` writes `enabled`, given the recorded state and the program's inputs. */
export function wantsEnabledWrite(
  olds: EnabledHoldState,
  news: { enabled: boolean; reenableTrigger?: string | undefined },
): boolean {
  if (news.enabled === olds.enabled) return !news.enabled && olds.disabledOutOfBand;
  if (!news.enabled) return true;
  return !olds.disabledOutOfBand || news.reenableTrigger !== olds.reenableTrigger;
}
