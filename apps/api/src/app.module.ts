import { Module, type DynamicModule } from '@nestjs/common';
import { HealthController } from './http/health.controller.js';
import { CONFIG, HOT_TIER, INGEST, INGEST_LAG, METRICS, OBJECT_STORE } from './http/tokens.js';
import { ApiModule } from './roles/api/api.module.js';
import type { ProcessRoles } from './roles/process.js';

/**
 * The HTTP surface of one process: every role answers /healthz, /readyz and /metrics (the
 * process's stores and metrics, on this thread); api and all also serve /v1 (ApiModule).
 */
@Module({})
export class AppModule {
  static forProcess(roles: ProcessRoles): DynamicModule {
    const { config, clock, hot, objects, metrics, api, passes, ingest, lag } = roles;
    return {
      module: AppModule,
      imports: api ? [ApiModule.forRoot({ config, clock, metrics, api, passes, lag })] : [],
      controllers: [HealthController],
      providers: [
        { provide: CONFIG, useValue: config },
        { provide: HOT_TIER, useValue: hot },
        { provide: OBJECT_STORE, useValue: objects },
        { provide: METRICS, useValue: metrics },
        { provide: INGEST, useValue: ingest },
        { provide: INGEST_LAG, useValue: lag },
      ],
    };
  }
}
