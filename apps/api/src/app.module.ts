import { Module, type DynamicModule } from '@nestjs/common';
import { AdminController } from './http/admin.controller.js';
import { HealthController } from './http/health.controller.js';
import { QueryController } from './http/query.controller.js';
import { WriteController } from './http/write.controller.js';
import { RUNTIME } from './http/tokens.js';
import type { Runtime } from './runtime.js';

/** The HTTP surface of one process: every role answers health and metrics; api and all also serve data. */
@Module({})
export class AppModule {
  static forRuntime(runtime: Runtime): DynamicModule {
    const serving = runtime.config.role === 'api' || runtime.config.role === 'all';
    return {
      module: AppModule,
      controllers: serving ? [WriteController, QueryController, AdminController, HealthController] : [HealthController],
      providers: [{ provide: RUNTIME, useValue: runtime }],
    };
  }
}
