import { InfluxController } from './influx.controller.js';
import { PromqlController } from './promql.controller.js';
import { RemoteController } from './remote.controller.js';

/** The endpoints of the protocols S4 speaks besides its own (docs/protocols.md). */
export const PROTOCOL_CONTROLLERS = [InfluxController, RemoteController, PromqlController];
