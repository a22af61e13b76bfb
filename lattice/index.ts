/** Degradation lattices (HiLO): load-factors, the controller, its HTTP face and the service-side client. */
export { Reservoir } from './reservoir.js';
export { LoadFactors } from './load-factor.js';
export { LatticeController, type Decision, type Transition, type ControllerOptions } from './controller.js';
export { startControllerServer, type ControllerServer } from './controller-server.js';
export { LatticeClient, type LatticeClientOptions } from './client.js';
export { levelsHeaderValue, measureState, checkPromise, type StateMeasurement, type StateValidation } from './state-validation.js';
export {
  runCapacityTest,
  rateAt,
  rankedIds,
  type CapacityProfile,
  type CapacityBucket,
  type CapacitySummary,
  type CapacityTestOptions,
} from './capacity-test.js';
export { renderCapacityHtml } from './capacity-report.js';
export { storeCapacityTest, withinQualityTarget, type CapacityRecord } from './capacity-record.js';
