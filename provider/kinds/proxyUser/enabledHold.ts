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

/** The hold's part of a state or of new inputs, as an effect rule sees them (untyped property bags). */
export function enabledHoldOf(props: Record<string, unknown>): EnabledHoldState {
  const trigger = props.reenableTrigger;
  return {
    // The input's default: a user is enabled unless it says otherwise.
    enabled: props.enabled !== false,
    disabledOutOfBand: props.disabledOutOfBand === true,
    ...(typeof trigger === "string" ? { reenableTrigger: trigger } : {}),
  };
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
