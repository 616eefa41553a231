// Spec 2.2 / 4.2: an agent output's top-level integer `outputs` sets the run's `outputs` (and stays inside
// output_data). Anything that is not a non-negative integer is silently dropped.
export function outputsOf(output: unknown): number | null {
  if (output === null || typeof output !== 'object' || Array.isArray(output)) return null;
  const value = (output as { outputs?: unknown }).outputs;
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
}
