// Spec 2.2: `outputs` is a non-negative integer; any other value is silently dropped (null here: keep as is).
export function outputsCount(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

// Spec 4.2: an agent output's top-level integer `outputs` sets the run's `outputs` (and stays in output_data).
export function outputsOf(output: unknown): number | null {
  if (output === null || typeof output !== 'object' || Array.isArray(output)) return null;
  return outputsCount((output as { outputs?: unknown }).outputs);
}
