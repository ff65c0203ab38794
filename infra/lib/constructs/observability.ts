import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subs from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import type { Settings } from '../config.js';
import type { HotTier } from './hot-tier.js';
import type { Services } from './services.js';

export interface ObservabilityProps {
  readonly settings: Settings;
  readonly services: Services;
  readonly hotTier: HotTier;
}

/** Alarms (API 5xx rate, flush lag, hot-tier memory, no healthy API task) and one dashboard. */
export class Observability extends Construct {
  readonly topic: sns.Topic;
  readonly alarms: cloudwatch.Alarm[] = [];
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    const { settings, services, hotTier } = props;
    const o = settings.observability;
    const lb = services.loadBalancer;

    const key = new kms.Key(this, 'TopicKey', {
      description: `S4 ${settings.name} alarm topic`,
      enableKeyRotation: true,
    });
    // CloudWatch must be able to publish to the encrypted topic.
    key.grant(new iam.ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey*');
    this.topic = new sns.Topic(this, 'Alarms', { displayName: `S4 ${settings.name} alarms`, masterKey: key, enforceSSL: true });
    if (o.alarmEmail) this.topic.addSubscription(new subs.EmailSubscription(o.alarmEmail));
    const notify = new actions.SnsAction(this.topic);

    const requests = lb.metrics.requestCount({ period: Duration.minutes(1), statistic: 'Sum' });
    const target5xx = lb.metrics.httpCodeTarget(elbv2.HttpCodeTarget.TARGET_5XX_COUNT, { period: Duration.minutes(1), statistic: 'Sum' });
    const lb5xx = lb.metrics.httpCodeElb(elbv2.HttpCodeElb.ELB_5XX_COUNT, { period: Duration.minutes(1), statistic: 'Sum' });
    const rate5xx = new cloudwatch.MathExpression({
      expression: '100 * (FILL(t5, 0) + FILL(l5, 0)) / IF(FILL(req, 0) > 0, req, 1)',
      usingMetrics: { t5: target5xx, l5: lb5xx, req: requests },
      label: 'API 5xx (%)',
      period: Duration.minutes(1),
    });
    const flushLag = new cloudwatch.Metric({
      namespace: 'S4',
      metricName: o.flushLagMetric,
      dimensionsMap: { Environment: settings.name },
      statistic: 'Maximum',
      period: Duration.minutes(1),
      label: 'Oldest unflushed window (s)',
    });
    const healthy = services.targetGroup.metrics.healthyHostCount({ period: Duration.minutes(1), statistic: 'Minimum' });

    const alarm = (id: string, description: string, metric: cloudwatch.IMetric, threshold: number, evaluation: number, extra: Partial<cloudwatch.AlarmProps> = {}) => {
      const a = new cloudwatch.Alarm(this, id, {
        alarmName: `s4-${settings.name}-${id.replace(/[A-Z]/g, (c, i: number) => (i ? '-' : '') + c.toLowerCase())}`,
        alarmDescription: description,
        metric,
        threshold,
        evaluationPeriods: evaluation,
        datapointsToAlarm: evaluation,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        ...extra,
      });
      a.addAlarmAction(notify);
      a.addOkAction(notify);
      this.alarms.push(a);
      return a;
    };

    alarm('Api5xxRate', `API 5xx responses above ${o.api5xxPercent}% of requests for 5 minutes`, rate5xx, o.api5xxPercent, 5);
    // Missing flush-lag data means the segment worker (or its collector) is not reporting: alarm.
    alarm('FlushLag', `Oldest unflushed window older than ${o.flushLagAlarmSeconds}s: segment worker stuck or too slow`, flushLag, o.flushLagAlarmSeconds, 5, {
      treatMissingData: cloudwatch.TreatMissingData.BREACHING,
    });
    alarm('HotTierMemory', `${hotTier.memoryMetricLabel} above ${hotTier.memoryAlarmThreshold} for 5 minutes`, withPeriod(hotTier.memoryMetric), hotTier.memoryAlarmThreshold, 5);
    alarm('ApiNoHealthyTask', 'No healthy API task behind the load balancer', healthy, 1, 3, {
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.BREACHING,
    });

    // ---- dashboard
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', { dashboardName: `S4-${settings.name}` });
    const all = [services.api, ...services.workers];
    this.dashboard.addWidgets(
      new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24, height: 3 }),
    );
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({ title: 'API requests / min', left: [requests], width: 8 }),
      new cloudwatch.GraphWidget({ title: 'API 5xx (%)', left: [rate5xx], width: 8 }),
      new cloudwatch.GraphWidget({
        title: 'API latency (s)',
        left: [
          lb.metrics.targetResponseTime({ statistic: 'p50', period: Duration.minutes(1) }),
          lb.metrics.targetResponseTime({ statistic: 'p99', period: Duration.minutes(1) }),
        ],
        width: 8,
      }),
    );
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({ title: 'Flush lag (s)', left: [flushLag], width: 8 }),
      new cloudwatch.GraphWidget({ title: hotTier.memoryMetricLabel, left: [hotTier.memoryMetric], width: 8 }),
      new cloudwatch.GraphWidget({ title: 'Healthy API tasks', left: [healthy], width: 8 }),
    );
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({ title: 'CPU (%) by service', left: all.map((s) => s.service.metricCpuUtilization({ label: s.role })), width: 12 }),
      new cloudwatch.GraphWidget({ title: 'Memory (%) by service', left: all.map((s) => s.service.metricMemoryUtilization({ label: s.role })), width: 12 }),
    );
  }
}

function withPeriod(metric: cloudwatch.IMetric): cloudwatch.IMetric {
  return metric instanceof cloudwatch.Metric ? metric.with({ period: Duration.minutes(1) }) : metric;
}

