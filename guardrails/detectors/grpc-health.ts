/**
 * A dependency's gRPC health (grpc.health.v1.Health/Check, the protocol gRPC
 * servers and Kubernetes probes speak) as a detector: a check is a violation
 * when the service answers anything but SERVING — NOT_SERVING, SERVICE_UNKNOWN,
 * or a gRPC error — and an error when the dependency cannot be reached
 * (counted against maxErrors, as an unreadable Prometheus source is).
 */
import { type DetectorConfig } from '../../core/index.js';
import { grpcHealth } from '../../net/index.js';
import { scheduleOf, type CheckResult, type Detector } from '../monitor.js';

export function grpcHealthDetector(config: DetectorConfig): Detector {
  const service = config.rule.service ?? '';
  const timeoutMs = Math.max(100, Math.min(config.interval, 5_000));
  return {
    ...scheduleOf(config),
    // No baseline: health is judged as it is, SERVING or not.
    prime: () => Promise.resolve(),
    async check(): Promise<CheckResult> {
      let answer;
      try {
        answer = await grpcHealth(config.source, service, timeoutMs);
      } catch (error) {
        return {
          verdict: 'error',
          value: null,
          baseline: null,
          message: `gRPC health of ${config.source} unreadable: ${(error as Error).message.slice(0, 200)}`,
        };
      }
      return {
        verdict: answer.serving ? 'clear' : 'violation',
        value: answer.serving ? 0 : 1,
        baseline: 0,
        message: `${service === '' ? 'server' : service} ${answer.status}`,
      };
    },
  };
}
