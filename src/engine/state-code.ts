/**
 * @module A state code as the rules tables key it (upper case). Builds store codes in upper case
 * already, and `toUpperCase` makes a new string even then: on the per-request path (poverty guideline,
 * age curve, family tiers) only another spelling should cost one.
 */
export function upperCaseState(state: string): string {
  for (let i = 0; i < state.length; i++) {
    const c = state.charCodeAt(i);
    if (c >= 97 && c <= 122) return state.toUpperCase();
  }
  return state;
}
