import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Platform } from 'aws-cdk-lib/aws-ecr-assets';
import * as ecr from 'aws-cdk-lib/aws-ecr';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { notBuilt, type Settings } from '../config.js';
import { acknowledge, acknowledgeWildcards } from '../nag.js';
import type { HotTier } from './hot-tier.js';
import type { Kafka } from './kafka.js';
import { s3Statements, type TaskRole } from './s3-access.js';

export const PORT = 8080;
/** The repository root: the Docker build context (see /Dockerfile and /.dockerignore). */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** Where a task may write (the root filesystem is read-only). */
const SCRATCH = '/tmp';

export interface ServicesProps {
  readonly settings: Settings;
  readonly vpc: ec2.IVpc;
  readonly bucket: s3.IBucket;
  readonly bucketKey?: kms.IKey;
  readonly hotTier: HotTier;
  readonly apiKeys: secretsmanager.ISecret;
  readonly kafka?: Kafka;
  /** ALB access logs go here when set. */
  readonly accessLogBucket?: s3.IBucket;
}

/** One Fargate service with its own task role, log group and security group. */
export interface S4Service {
  readonly role: TaskRole;
  readonly service: ecs.FargateService;
  readonly taskRole: iam.Role;
  readonly logGroup: logs.LogGroup;
}

/**
 * ECS on Fargate: the API behind an Application Load Balancer (health check on /readyz,
 * autoscaling on CPU and requests) and one service per worker role. Every task runs the same
 * image with S4_ROLE set, as a non-root user on a read-only root filesystem, in private subnets.
 */
export class Services extends Construct {
  readonly cluster: ecs.Cluster;
  readonly loadBalancer: elbv2.ApplicationLoadBalancer;
  readonly targetGroup: elbv2.ApplicationTargetGroup;
  readonly api: S4Service;
  readonly workers: S4Service[] = [];
  readonly tasksSecurityGroup: ec2.SecurityGroup;
  readonly metricsLogGroup: logs.LogGroup;
  private readonly image: ecs.ContainerImage;

  constructor(scope: Construct, id: string, private readonly props: ServicesProps) {
    super(scope, id);
    const { settings, vpc } = props;

    this.cluster = new ecs.Cluster(this, 'Cluster', {
      vpc,
      containerInsightsV2: settings.containerInsights ? ecs.ContainerInsights.ENABLED : ecs.ContainerInsights.DISABLED,
      enableFargateCapacityProviders: true,
    });
    if (!settings.containerInsights) {
      acknowledge(this.cluster, 'AwsSolutions-ECS4', `Container Insights is off in ${settings.name} by setting (containerInsights=false) to keep idle cost down; staging and prod enable it.`);
    }

    this.image = this.containerImage();

    // All S4 tasks share one security group: they talk to the hot tier and (API and ingest, with
    // Kafka) to MSK; inbound only from the load balancer.
    this.tasksSecurityGroup = new ec2.SecurityGroup(this, 'TasksSecurityGroup', {
      vpc,
      description: `S4 ${settings.name} tasks`,
      allowAllOutbound: true,
    });
    props.hotTier.allowFrom(this.tasksSecurityGroup);
    // With Kafka on, the API produces to MSK and the ingest workers consume it.
    if ([settings.api.role, ...settings.workers.roles].some((r) => kafkaUse(r) !== null)) props.kafka?.allowFrom(this.tasksSecurityGroup);

    this.metricsLogGroup = new logs.LogGroup(this, 'MetricsLogGroup', {
      logGroupName: `/s4/${settings.name}/metrics`,
      retention: settings.observability.logRetentionDays,
      removalPolicy: RemovalPolicy.DESTROY,
    });

    // ---- API behind the ALB
    const lbSecurityGroup = new ec2.SecurityGroup(this, 'LoadBalancerSecurityGroup', {
      vpc,
      description: `S4 ${settings.name} API load balancer`,
      allowAllOutbound: false,
    });
    const listenerPort = settings.api.certificateArn ? 443 : 80;
    for (const cidr of settings.api.allowedCidrs ?? [settings.network.cidr]) {
      lbSecurityGroup.addIngressRule(ec2.Peer.ipv4(cidr), ec2.Port.tcp(listenerPort), 'S4 API clients');
    }
    lbSecurityGroup.addEgressRule(this.tasksSecurityGroup, ec2.Port.tcp(PORT), 'to S4 API tasks');
    this.tasksSecurityGroup.addIngressRule(lbSecurityGroup, ec2.Port.tcp(PORT), 'from the API load balancer');

    this.loadBalancer = new elbv2.ApplicationLoadBalancer(this, 'LoadBalancer', {
      vpc,
      internetFacing: settings.api.internetFacing,
      vpcSubnets: { subnetType: settings.api.internetFacing ? ec2.SubnetType.PUBLIC : ec2.SubnetType.PRIVATE_WITH_EGRESS },
      securityGroup: lbSecurityGroup,
      dropInvalidHeaderFields: true,
      deletionProtection: settings.removalPolicy === 'retain',
      // Large bulk reads stream for a while.
      idleTimeout: Duration.seconds(300),
    });
    if (props.accessLogBucket) {
      this.loadBalancer.logAccessLogs(props.accessLogBucket, 'alb');
    } else {
      acknowledge(this.loadBalancer, 'AwsSolutions-ELB2', `ALB access logs are off in ${settings.name} by setting (bucket.accessLogs=false); staging and prod enable them.`);
    }

    this.api = this.createService(settings.api.role, {
      size: settings.api.size,
      desiredCount: settings.api.minTasks,
      spot: false,
      withApiKeys: true,
      exposePort: true,
    });

    this.targetGroup = new elbv2.ApplicationTargetGroup(this, 'ApiTargets', {
      vpc,
      port: PORT,
      protocol: elbv2.ApplicationProtocol.HTTP,
      targetType: elbv2.TargetType.IP,
      targets: [this.api.service],
      deregistrationDelay: Duration.seconds(30),
      healthCheck: {
        path: '/readyz',
        healthyHttpCodes: '200',
        interval: Duration.seconds(15),
        timeout: Duration.seconds(5),
        healthyThresholdCount: 2,
        unhealthyThresholdCount: 3,
      },
    });

    if (settings.api.certificateArn) {
      this.loadBalancer.addListener('Https', {
        port: 443,
        protocol: elbv2.ApplicationProtocol.HTTPS,
        certificates: [elbv2.ListenerCertificate.fromArn(settings.api.certificateArn)],
        sslPolicy: elbv2.SslPolicy.RECOMMENDED_TLS,
        defaultTargetGroups: [this.targetGroup],
        open: false,
      });
    } else {
      // Plain HTTP only on an internal load balancer (the settings schema refuses it when internet-facing).
      this.loadBalancer.addListener('Http', {
        port: 80,
        protocol: elbv2.ApplicationProtocol.HTTP,
        defaultTargetGroups: [this.targetGroup],
        open: false,
      });
    }

    const scaling = this.api.service.autoScaleTaskCount({ minCapacity: settings.api.minTasks, maxCapacity: settings.api.maxTasks });
    scaling.scaleOnCpuUtilization('Cpu', {
      targetUtilizationPercent: settings.api.cpuTargetPercent,
      scaleInCooldown: Duration.minutes(5),
      scaleOutCooldown: Duration.minutes(1),
    });
    scaling.scaleOnRequestCount('Requests', {
      requestsPerTarget: settings.api.requestsPerTargetPerMinute,
      targetGroup: this.targetGroup,
      scaleInCooldown: Duration.minutes(5),
      scaleOutCooldown: Duration.minutes(1),
    });

    // ---- workers: one service per role, each with its own task role
    for (const role of settings.workers.roles) {
      this.workers.push(
        this.createService(role, {
          size: settings.workers.size,
          desiredCount: settings.workers.tasksPerRole,
          spot: settings.workers.spot,
          withApiKeys: false,
          exposePort: false,
        }),
      );
    }
  }

  private containerImage(): ecs.ContainerImage {
    const { settings } = this.props;
    if (settings.image.source === 'ecr') {
      const repo = ecr.Repository.fromRepositoryName(this, 'Repository', settings.image.repositoryName);
      return ecs.ContainerImage.fromEcrRepository(repo, settings.image.tag);
    }
    return ecs.ContainerImage.fromAsset(REPO_ROOT, {
      file: 'Dockerfile',
      platform: settings.cpuArchitecture === 'arm64' ? Platform.LINUX_ARM64 : Platform.LINUX_AMD64,
      // .dockerignore already keeps node_modules, dist and cdk.out out; this keeps the hash stable.
      exclude: ['**/cdk.out', '**/node_modules', '.git'],
    });
  }

  private createService(
    role: TaskRole,
    opts: { size: { cpu: number; memoryMiB: number }; desiredCount: number; spot: boolean; withApiKeys: boolean; exposePort: boolean },
  ): S4Service {
    const { settings, bucket, hotTier } = this.props;
    // The settings refuse planned roles already; a task the app would refuse must never be deployed.
    const problem = notBuilt(role);
    if (problem) throw new Error(`workers.roles: ${problem}`);
    const id = role === 'api' || role === 'all' ? 'Api' : `${role[0]!.toUpperCase()}${role.slice(1)}Worker`;
    const scope = new Construct(this, id);

    const logGroup = new logs.LogGroup(scope, 'Logs', {
      logGroupName: `/s4/${settings.name}/${id === 'Api' ? 'api' : role}`,
      retention: settings.observability.logRetentionDays,
      removalPolicy: RemovalPolicy.DESTROY,
    });

    // The task role: its S3 prefixes and, when it uses Kafka (api produces, ingest consumes), its topics — nothing else.
    const taskRole = new iam.Role(scope, 'TaskRole', {
      assumedBy: new iam.ServicePrincipal('ecs-tasks.amazonaws.com'),
      description: `S4 ${settings.name} ${role} task`,
    });
    const namespaces = settings.namespaceNames;
    const statements = s3Statements(role, bucket, settings.bucket.prefix, namespaces, this.props.bucketKey);
    const kafkaStatements = this.props.kafka ? kafkaStatementsOf(this.props.kafka, role) : [];
    const all = [...statements, ...kafkaStatements];
    for (const s of all) taskRole.addToPolicy(s);
    acknowledgeWildcards(
      taskRole,
      all,
      `Object-level wildcards end in this role's own key prefixes (v1/<namespace>/<kind>/*, one per configured namespace); S4 writes immutable objects under names it generates (shard/hour/part/fence), so the key set cannot be enumerated. Kafka wildcards are topics/groups of this one cluster.`,
    );

    const taskDefinition = new ecs.FargateTaskDefinition(scope, 'Task', {
      cpu: opts.size.cpu,
      memoryLimitMiB: opts.size.memoryMiB,
      taskRole,
      runtimePlatform: {
        operatingSystemFamily: ecs.OperatingSystemFamily.LINUX,
        cpuArchitecture: settings.cpuArchitecture === 'arm64' ? ecs.CpuArchitecture.ARM64 : ecs.CpuArchitecture.X86_64,
      },
      volumes: [{ name: 'scratch' }],
    });

    const secrets: Record<string, ecs.Secret> = {
      S4_REDIS_PASSWORD: ecs.Secret.fromSecretsManager(hotTier.secret, 'password'),
    };
    if (opts.withApiKeys) secrets.S4_API_KEYS = ecs.Secret.fromSecretsManager(this.props.apiKeys);

    const container = taskDefinition.addContainer('s4', {
      image: this.image,
      essential: true,
      environment: this.environment(role),
      secrets,
      logging: ecs.LogDrivers.awsLogs({ streamPrefix: role, logGroup, mode: ecs.AwsLogDriverMode.NON_BLOCKING }),
      portMappings: [{ containerPort: PORT, name: 'http' }],
      readonlyRootFilesystem: true,
      user: '1000:1000',
      linuxParameters: new ecs.LinuxParameters(scope, 'Linux', { initProcessEnabled: true }),
      // Workers get the Fargate maximum to finish an in-flight flush after SIGTERM.
      stopTimeout: Duration.seconds(opts.exposePort ? 30 : 120),
      healthCheck: {
        command: ['CMD', 'node', '-e', HEALTHCHECK_SCRIPT],
        interval: Duration.seconds(30),
        timeout: Duration.seconds(5),
        retries: 3,
        startPeriod: Duration.seconds(60),
      },
    });
    container.addMountPoints({ containerPath: SCRATCH, sourceVolume: 'scratch', readOnly: false });

    // Flush lag and other app metrics: a collector sidecar scrapes /metrics into CloudWatch.
    if (role === 'segment' || role === 'all') this.addMetricsCollector(taskDefinition, taskRole, role, logGroup);

    // Created by CDK: pulls the image, writes the log group, reads exactly the secrets above.
    acknowledge(
      taskDefinition,
      'AwsSolutions-IAM5[Resource::*]',
      'Task execution role: ecr:GetAuthorizationToken has no resource-level permissions and must use "*" (AWS documented); every other statement is scoped to the repository, log group and secrets.',
    );
    acknowledge(
      taskDefinition,
      'AwsSolutions-ECS2',
      'The plain environment holds only non-secret settings (role, port, bucket name, endpoints, limits); the Redis password and API keys are injected from Secrets Manager as ECS secrets.',
    );

    const service = new ecs.FargateService(scope, 'Service', {
      cluster: this.cluster,
      taskDefinition,
      desiredCount: opts.desiredCount,
      securityGroups: [this.tasksSecurityGroup],
      vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
      assignPublicIp: false,
      circuitBreaker: { enable: true, rollback: true },
      minHealthyPercent: 100,
      maxHealthyPercent: 200,
      enableExecuteCommand: false,
      healthCheckGracePeriod: opts.exposePort ? Duration.seconds(60) : undefined,
      capacityProviderStrategies: opts.spot
        ? [
            { capacityProvider: 'FARGATE_SPOT', weight: 4 },
            { capacityProvider: 'FARGATE', weight: 1, base: 0 },
          ]
        : [{ capacityProvider: 'FARGATE', weight: 1 }],
      propagateTags: ecs.PropagatedTagSource.SERVICE,
    });

    return { role, service, taskRole, logGroup };
  }

  /** Non-secret configuration; every name is one libs/config/src/config.ts validates. */
  private environment(role: TaskRole): Record<string, string> {
    const { settings, bucket, hotTier, kafka } = this.props;
    const env: Record<string, string> = {
      ...settings.extraEnv,
      S4_ROLE: role,
      S4_HOST: '0.0.0.0',
      S4_PORT: String(PORT),
      S4_DATA_DIR: `${SCRATCH}/s4`,
      S4_LOG_LEVEL: settings.logLevel,
      S4_NAMESPACE: settings.defaultNamespace,
      S4_SHARDS: String(settings.shards),
      S4_REDIS_URL: hotTier.url,
      S4_S3_BUCKET: bucket.bucketName,
      AWS_REGION: Stack.of(this).region,
    };
    if (settings.bucket.prefix) env.S4_S3_PREFIX = settings.bucket.prefix;
    if (kafka && kafkaUse(role) !== null) {
      // MSK Serverless: TLS + IAM (SASL/OAUTHBEARER signed with the task role), replication and
      // min.insync.replicas fixed by the service (S4_KAFKA_REPLICATION=0 leaves them to it).
      Object.assign(env, { S4_INGEST: 'kafka', S4_KAFKA_BROKERS: kafka.bootstrapBrokers, S4_KAFKA_TLS: 'true', S4_KAFKA_AUTH: 'aws-iam', S4_KAFKA_REPLICATION: '0' });
    }
    return env;
  }

  private addMetricsCollector(task: ecs.FargateTaskDefinition, taskRole: iam.Role, role: TaskRole, logGroup: logs.LogGroup): void {
    const { settings } = this.props;
    task.addContainer('metrics', {
      image: ecs.ContainerImage.fromRegistry(settings.observability.collectorImage),
      essential: false,
      memoryReservationMiB: 64,
      environment: { AOT_CONFIG_CONTENT: collectorConfig(settings, role, this.metricsLogGroup.logGroupName) },
      logging: ecs.LogDrivers.awsLogs({ streamPrefix: `${role}-metrics`, logGroup, mode: ecs.AwsLogDriverMode.NON_BLOCKING }),
      readonlyRootFilesystem: true,
      user: '10001',
    });
    // The EMF exporter writes metric events into this one log group; CloudWatch extracts metrics.
    this.metricsLogGroup.grantWrite(taskRole);
  }
}

/** What a role does with Kafka when it is on: the API produces, ingest consumes, `all` both; the other workers never touch it. */
function kafkaUse(role: TaskRole): 'produce' | 'consume' | 'both' | null {
  switch (role) {
    case 'api':
      return 'produce';
    case 'ingest':
      return 'consume';
    case 'all':
      return 'both';
    default:
      return null;
  }
}

function kafkaStatementsOf(kafka: Kafka, role: TaskRole): iam.PolicyStatement[] {
  switch (kafkaUse(role)) {
    case 'produce':
      return kafka.producerStatements();
    case 'consume':
      return kafka.consumerStatements();
    case 'both': {
      // One statement per sid: the produce and consume sets share the connect/topic statements.
      const bySid = new Map<string, iam.PolicyStatement>();
      for (const st of [...kafka.producerStatements(), ...kafka.consumerStatements()]) bySid.set(st.sid ?? String(bySid.size), st);
      return [...bySid.values()];
    }
    case null:
      return [];
  }
}

/** Exit 0 when GET /healthz answers 2xx (no curl/wget in the image; Node 24 has fetch). */
export const HEALTHCHECK_SCRIPT =
  "fetch('http://127.0.0.1:'+(process.env.S4_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))";

/** ADOT collector: scrape S4's Prometheus /metrics, publish selected series as CloudWatch metrics (EMF). */
export function collectorConfig(settings: Settings, role: string, logGroupName: string): string {
  return JSON.stringify({
    receivers: {
      prometheus: {
        config: {
          scrape_configs: [
            {
              job_name: 's4',
              scrape_interval: '30s',
              static_configs: [{ targets: [`127.0.0.1:${PORT}`], labels: { Environment: settings.name, Role: role } }],
            },
          ],
        },
      },
    },
    exporters: {
      awsemf: {
        namespace: 'S4',
        log_group_name: logGroupName,
        log_stream_name: `${role}-{TaskId}`,
        dimension_rollup_option: 'NoDimensionRollup',
        metric_declarations: [
          { dimensions: [['Environment']], metric_name_selectors: [`^${settings.observability.flushLagMetric}$`] },
        ],
      },
    },
    service: { pipelines: { metrics: { receivers: ['prometheus'], exporters: ['awsemf'] } } },
  });
}
