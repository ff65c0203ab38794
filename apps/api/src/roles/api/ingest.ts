import { Inject, Injectable } from '@nestjs/common';
import type { Clock } from '@s4/core';
import type { Config } from '@s4/config';
import { Slices, parseWriteSliced, releaseBody, type Admission, type EncodedWrite, type WriteBody, type WriteResult, type Writer } from '@s4/engine';
import { CLOCK, CONFIG, METRICS } from '../../http/tokens.js';
import type { Metrics } from '../../metrics.js';
import { ADMISSION, WRITER } from './tokens.js';

/** How long one slice of a write's checking or encoding may hold the event loop. */
const SLICE_MS = 10;

/**
 * The one write seam every ingest endpoint goes through (/v1/write, Influx /write and
 * /api/v2/write, Prometheus remote write, Graphite): the whole request is validated by
 * `parseWrite`, checked against its namespaces' limits (`Admission.admit`), then handed to the Writer (which appends to the hot tier, or with S4_INGEST=kafka
 * produces to the shard's partition), and counted in /metrics. A protocol only turns its
 * wire format into a WriteBody; limits, validation and durability are decided here, once.
 */
@Injectable()
export class Ingest {
  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(WRITER) private readonly writer: Writer,
    @Inject(METRICS) private readonly metrics: Metrics,
    @Inject(ADMISSION) private readonly admission: Admission,
  ) {}

  /**
   * Resolves once every sample is durable: in the hot tier, or with S4_INGEST=kafka in Kafka
   * (`queued`; the ingest role appends it). Throws ValidationError/LimitError with nothing written.
   * `body` is emptied once parsed: the caller must not read it afterwards.
   */
  async write(body: WriteBody): Promise<WriteResult> {
    const started = performance.now();
    const { metrics } = this;
    try {
      // Nothing of the parsed request is held from here on (`encode` returns the records only and
      // empties `body`), so its objects die young while the write waits for durability: held,
      // a round of 40,000 series was copied through the young generation and promoted.
      const encoded = await this.encode(body, this.clock.now());
      const result = await this.writer.commit(encoded);
      metrics.ingestSamples.inc(result.samples);
      metrics.ingestRequests.inc({ outcome: 'ok' });
      return result;
    } catch (e) {
      metrics.ingestRequests.inc({ outcome: 'error' });
      throw e;
    } finally {
      metrics.ingestSeconds.observe((performance.now() - started) / 1000);
    }
  }

  /** Checked, admitted and encoded; `body` is emptied once parsed (see write). */
  private async encode(body: WriteBody, now: number): Promise<EncodedWrite> {
    // Checked and encoded in slices: a request of 40,000 series would otherwise hold the HTTP
    // thread for its whole length (health checks and small queries waiting behind it). One clock
    // for the three stages, so that a turn is due across a stage's end as within it.
    const slices = new Slices(SLICE_MS);
    const series = await parseWriteSliced(body, this.config.limits, now, slices);
    releaseBody(body);
    // Namespace limits: backfill, fields, samples/s, series cardinality (429 names the limit).
    await this.admission.admit(series, now, slices);
    return this.writer.encodeSliced(series, slices);
  }

  now(): number {
    return this.clock.now();
  }
}
