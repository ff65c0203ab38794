import { Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as msk from 'aws-cdk-lib/aws-msk';
import * as cr from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import type { Settings } from '../config.js';
import { acknowledge } from '../nag.js';

export interface KafkaProps {
  readonly settings: Settings;
  readonly vpc: ec2.IVpc;
}

/** MSK Serverless port for SASL/IAM clients. */
const IAM_PORT = 9098;

/**
 * Optional Amazon MSK Serverless cluster for the pull ingest path (S4_INGEST=kafka): the API
 * produces each write to the topic `s4.<namespace>` (partition = shard) and the ingest role
 * consumes it into the hot tier. MSK Serverless only speaks TLS with IAM authentication, so the
 * task roles carry the Kafka data-plane permissions: `producerStatements` for the API,
 * `consumerStatements` for ingest (`all` gets both). S4 creates the topic itself when missing
 * (MSK has auto-creation off), with the settings MSK Serverless accepts (retention, message size).
 */
export class Kafka extends Construct {
  readonly cluster: msk.CfnServerlessCluster;
  readonly securityGroup: ec2.SecurityGroup;
  /** `host:9098,...` (S4_KAFKA_BROKERS). */
  readonly bootstrapBrokers: string;
  readonly clusterName: string;

  constructor(scope: Construct, id: string, props: KafkaProps) {
    super(scope, id);
    const { settings, vpc } = props;
    this.clusterName = `s4-${settings.name}`;
    this.securityGroup = new ec2.SecurityGroup(this, 'SecurityGroup', {
      vpc,
      description: `S4 ${settings.name} MSK Serverless`,
      allowAllOutbound: false,
    });
    this.cluster = new msk.CfnServerlessCluster(this, 'Cluster', {
      clusterName: this.clusterName,
      clientAuthentication: { sasl: { iam: { enabled: true } } },
      vpcConfigs: [
        {
          subnetIds: vpc.selectSubnets({ subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS }).subnetIds,
          securityGroups: [this.securityGroup.securityGroupId],
        },
      ],
    });

    // CloudFormation does not return the bootstrap brokers of a serverless cluster: ask the API.
    const brokers = new cr.AwsCustomResource(this, 'BootstrapBrokers', {
      onUpdate: {
        service: 'Kafka',
        action: 'getBootstrapBrokers',
        parameters: { ClusterArn: this.cluster.attrArn },
        physicalResourceId: cr.PhysicalResourceId.of(`${this.clusterName}-bootstrap`),
        outputPaths: ['BootstrapBrokerStringSaslIam'],
      },
      policy: cr.AwsCustomResourcePolicy.fromSdkCalls({ resources: [this.cluster.attrArn] }),
      installLatestAwsSdk: false,
    });
    this.bootstrapBrokers = brokers.getResponseField('BootstrapBrokerStringSaslIam');
    // The custom resource's Lambda is a stack-level singleton, so the finding is acknowledged there.
    acknowledge(
      Stack.of(this),
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      'CDK-provided AwsCustomResource Lambda (reads the MSK bootstrap brokers once per deploy); the managed policy only allows writing its own logs.',
    );
  }

  allowFrom(peer: ec2.ISecurityGroup): void {
    this.securityGroup.addIngressRule(peer, ec2.Port.tcp(IAM_PORT), 'S4 API and ingest to MSK (TLS + IAM)');
  }

  private arns(): { topics: string; groups: string } {
    const { region, account, partition } = Stack.of(this);
    const base = `arn:${partition}:kafka:${region}:${account}`;
    return { topics: `${base}:topic/${this.clusterName}/*`, groups: `${base}:group/${this.clusterName}/*` };
  }

  /** Connecting, and creating the namespace topics when missing (any S4 process that uses Kafka does). */
  private connectStatements(): iam.PolicyStatement[] {
    return [
      new iam.PolicyStatement({
        sid: 'KafkaConnect',
        actions: ['kafka-cluster:Connect', 'kafka-cluster:DescribeCluster'],
        resources: [this.cluster.attrArn],
      }),
      new iam.PolicyStatement({
        sid: 'KafkaTopics',
        actions: ['kafka-cluster:DescribeTopic', 'kafka-cluster:CreateTopic'],
        resources: [this.arns().topics],
      }),
    ];
  }

  /**
   * The API: idempotent produce to the namespace topics, and reading the ingest group's committed
   * offsets for the lag (GET /v1/admin/shards, query warnings).
   */
  producerStatements(): iam.PolicyStatement[] {
    const { topics, groups } = this.arns();
    return [
      ...this.connectStatements(),
      new iam.PolicyStatement({ sid: 'KafkaIdempotentProduce', actions: ['kafka-cluster:WriteDataIdempotently'], resources: [this.cluster.attrArn] }),
      new iam.PolicyStatement({ sid: 'KafkaProduce', actions: ['kafka-cluster:WriteData'], resources: [topics] }),
      new iam.PolicyStatement({ sid: 'KafkaLag', actions: ['kafka-cluster:DescribeGroup'], resources: [groups] }),
    ];
  }

  /** The ingest role: consume the namespace topics in the ingest group, commit its offsets. */
  consumerStatements(): iam.PolicyStatement[] {
    const { topics, groups } = this.arns();
    return [
      ...this.connectStatements(),
      new iam.PolicyStatement({
        sid: 'KafkaConsume',
        actions: ['kafka-cluster:ReadData', 'kafka-cluster:DescribeGroup', 'kafka-cluster:AlterGroup'],
        resources: [topics, groups],
      }),
    ];
  }
}
