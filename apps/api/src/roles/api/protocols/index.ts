import { GraphiteController } from './graphite.controller.js';
import { GraphiteListener } from './graphite.listener.js';
import { InfluxController } from './influx.controller.js';
import { PromqlController } from './promql.controller.js';
import { RemoteController } from './remote.controller.js';

/** The endpoints of the protocols S4 speaks besides its own (docs/protocols.md). */
export const PROTOCOL_CONTROLLERS = [InfluxController, RemoteController, PromqlController, GraphiteController];

/** Services the protocols run beside HTTP (the Graphite TCP listener, when configured). */
export const PROTOCOL_PROVIDERS = [GraphiteListener];
