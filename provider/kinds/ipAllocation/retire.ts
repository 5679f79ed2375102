import { isIP } from "node:net";

interface TriggerState {
  ip?: string | null;
  replaceTrigger?: string | null;
  lastReplacedIp?: string | null;
}

/**
 * Whether a new `replaceTrigger` asks for a replacement now. A trigger that is an IP address names the
 * address to retire: it swaps only while the allocation holds that address, so naming a wrong address,
 * or leaving the retired one in place, never spends a replacement. Any other value (a date, a ticket)
 * swaps whenever it changes. Removing a trigger asks for nothing.
 */
export function swapRequested(olds: TriggerState, newTrigger: string | null | undefined): boolean {
  if (newTrigger == null || newTrigger === olds.replaceTrigger) return false;
  if (isIP(newTrigger) === 0) return true;
  return newTrigger === olds.ip;
}

/** Why a changed trigger swaps nothing, in the words the diff warns with and the plan notes; none once retired. */
export function unheldTriggerAdvice(
  label: string,
  olds: TriggerState,
  newTrigger: string | null | undefined,
): string[] {
  if (newTrigger == null || newTrigger === olds.replaceTrigger || isIP(newTrigger) === 0) return [];
  if (newTrigger === olds.ip || newTrigger === olds.lastReplacedIp) return [];
  return [
    `${label}: replaceTrigger names ${newTrigger}, which this allocation does not hold (it holds ${olds.ip}); nothing is replaced. ` +
      "Name the address it holds to retire that one.",
  ];
}
