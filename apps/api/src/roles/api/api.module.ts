import { Module, type DynamicModule } from '@nestjs/common';
import type { Clock } from '@s4/core';
import type { Config } from '@s4/config';
import { CLOCK, CONFIG, INGEST_LAG, METRICS } from '../../http/tokens.js';
import type { Metrics } from '../../metrics.js';
import type { IngestLagMonitor } from '../ingest/lag.js';
import type { WorkerPasses } from '../threads/passes.js';
import { AdminController } from './admin.controller.js';
import type { ApiRoot } from './api.root.js';
import { Ingest } from './ingest.js';
import { LabelsController } from './labels.controller.js';
import { PROTOCOL_CONTROLLERS, PROTOCOL_PROVIDERS } from './protocols/index.js';
import { QueryController } from './query.controller.js';
import { DeletesController } from './deletes.controller.js';
import { NamespacesController } from './namespaces.controller.js';
import { ADMISSION, CARDINALITY, HEALTH_READER, OBJECTS, POLICIES, QUERY_ENGINE, TOMBSTONES, WORKER_PASSES, WRITER } from './tokens.js';

export interface ApiModuleDeps {
  readonly config: Config;
  readonly clock: Clock;
  readonly metrics: Metrics;
  readonly api: ApiRoot;
  readonly passes: WorkerPasses;
  readonly lag: IngestLagMonitor | null;
}

/** The API role's endpoints: /v1/query, /v1/latest, /v1/series, /v1/labels, /v1/admin/*, and the protocols' (protocols/); POST /v1/write is a Fastify route of its own (write.route.ts). */
@Module({})
export class ApiModule {
  static forRoot(deps: ApiModuleDeps): DynamicModule {
    return {
      module: ApiModule,
      controllers: [QueryController, LabelsController, AdminController, NamespacesController, DeletesController, ...PROTOCOL_CONTROLLERS],
      providers: [
        Ingest,
        ...PROTOCOL_PROVIDERS,
        { provide: CONFIG, useValue: deps.config },
        { provide: CLOCK, useValue: deps.clock },
        { provide: METRICS, useValue: deps.metrics },
        { provide: WRITER, useValue: deps.api.writer },
        { provide: QUERY_ENGINE, useValue: deps.api.query },
        { provide: WORKER_PASSES, useValue: deps.passes },
        { provide: INGEST_LAG, useValue: deps.lag },
        { provide: HEALTH_READER, useValue: deps.api.health },
        { provide: ADMISSION, useValue: deps.api.admission },
        { provide: POLICIES, useValue: deps.api.policies },
        { provide: CARDINALITY, useValue: deps.api.cardinality },
        { provide: TOMBSTONES, useValue: deps.api.tombstones },
        { provide: OBJECTS, useValue: deps.api.objects },
      ],
    };
  }
}
