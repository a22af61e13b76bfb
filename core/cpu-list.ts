/**
 * CPU lists as `taskset -c` takes them ("1", "0-3,6"): where deployed arms run
 * (`trials.slotCpus`) and where the next trial's arms start (`trials.prestartCpus`).
 */

/** The CPUs of a list as taskset takes it ("1", "0-3,6"); empty when the list is not one. */
export function cpusOfList(list: string): number[] {
  if (!/^\d+(-\d+)?(,\d+(-\d+)?)*$/.test(list)) return [];
  const cpus = new Set<number>();
  for (const part of list.split(',')) {
    const [from, to = from] = part.split('-').map(Number) as [number, number?];
    // A range is bounded by what a machine has (taskset refuses more than its mask): no loop over a hostile range.
    if (to! < from || to! - from > 4_096) return [];
    for (let cpu = from; cpu <= to!; cpu++) cpus.add(cpu);
  }
  return [...cpus].sort((a, b) => a - b);
}
