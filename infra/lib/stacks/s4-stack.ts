import { CfnOutput, RemovalPolicy, Stack, Tags, type StackProps } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import type { Settings } from '../config.js';
import { AccessLogBucket, DataBucket } from '../constructs/data-bucket.js';
import { HotTier } from '../constructs/hot-tier.js';
import { Kafka } from '../constructs/kafka.js';
import { Observability } from '../constructs/observability.js';
import { Services } from '../constructs/services.js';
import { acknowledge } from '../nag.js';

export interface S4StackProps extends StackProps {
  readonly settings: Settings;
}

/**
 * One S4 environment: VPC, data bucket, hot tier, optional MSK Serverless, ECS services, secrets,
 * alarms and a dashboard.
 */
export class S4Stack extends Stack {
  readonly vpc: ec2.Vpc;
  readonly data: DataBucket;
  readonly hotTier: HotTier;
  readonly services: Services;
  readonly observability: Observability;
  readonly apiKeys: secretsmanager.Secret;
  readonly kafka?: Kafka;

  constructor(scope: Construct, id: string, props: S4StackProps) {
    super(scope, id, props);
    const { settings } = props;
    Tags.of(this).add('project', 's4');
    Tags.of(this).add('environment', settings.name);
    for (const [k, v] of Object.entries(settings.tags)) Tags.of(this).add(k, v);

    // ---- network: private subnets for everything but (an internet-facing) ALB and the NAT gateways
    const flowLogs = new logs.LogGroup(this, 'FlowLogs', {
      retention: settings.observability.logRetentionDays,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.vpc = new ec2.Vpc(this, 'Vpc', {
      ipAddresses: ec2.IpAddresses.cidr(settings.network.cidr),
      maxAzs: settings.network.maxAzs,
      natGateways: settings.network.natGateways,
      subnetConfiguration: [
        { name: 'public', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 24 },
        { name: 'private', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 20 },
      ],
      // S3 traffic (the bulk of S4's traffic) bypasses the NAT gateways: free, and no NAT data charge.
      gatewayEndpoints: { S3: { service: ec2.GatewayVpcEndpointAwsService.S3 } },
      flowLogs: {
        all: {
          destination: ec2.FlowLogDestination.toCloudWatchLogs(flowLogs),
          trafficType: ec2.FlowLogTrafficType[settings.network.flowLogTraffic],
        },
      },
      restrictDefaultSecurityGroup: false,
    });

    // ---- storage
    const accessLogs = settings.bucket.accessLogs ? new AccessLogBucket(this, 'AccessLogs', { settings }).bucket : undefined;
    this.data = new DataBucket(this, 'Data', { settings, accessLogBucket: accessLogs });

    // ---- secrets
    this.apiKeys = new secretsmanager.Secret(this, 'ApiKeys', {
      description: `S4 ${settings.name} API keys (S4_API_KEYS, comma-separated). Add keys by editing the value and restarting the API service.`,
      generateSecretString: { excludePunctuation: true, passwordLength: 48 },
      removalPolicy: settings.removalPolicy === 'retain' ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    acknowledge(
      this.apiKeys,
      'AwsSolutions-SMG4',
      'API keys are handed to clients; rotating them is a coordinated client change (add the new key, move clients, remove the old one), described in docs/deploy.md, not a timer.',
    );

    // ---- hot tier, Kafka, compute, observability
    this.hotTier = new HotTier(this, 'HotTier', { settings, vpc: this.vpc });
    if (settings.kafka.enabled) this.kafka = new Kafka(this, 'Kafka', { settings, vpc: this.vpc });
    this.services = new Services(this, 'Services', {
      settings,
      vpc: this.vpc,
      bucket: this.data.bucket,
      bucketKey: this.data.key,
      hotTier: this.hotTier,
      apiKeys: this.apiKeys,
      kafka: this.kafka,
      accessLogBucket: accessLogs,
    });
    this.observability = new Observability(this, 'Observability', { settings, services: this.services, hotTier: this.hotTier });

    new CfnOutput(this, 'ApiUrl', {
      value: `${settings.api.certificateArn ? 'https' : 'http'}://${this.services.loadBalancer.loadBalancerDnsName}`,
      description: 'S4 API endpoint (internal unless api.internetFacing)',
    });
    new CfnOutput(this, 'BucketName', { value: this.data.bucket.bucketName });
    new CfnOutput(this, 'ApiKeysSecretArn', { value: this.apiKeys.secretArn });
    new CfnOutput(this, 'DashboardName', { value: `S4-${settings.name}` });
  }
}
