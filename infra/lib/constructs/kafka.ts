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
 * Optional Amazon MSK Serverless cluster for the pull ingest path. The ingest role (planned in
 * @s4/core, not built yet) will consume it; until then the cluster is deployed without a
 * consumer. MSK Serverless only speaks TLS with IAM authentication, so the task role of a task
 * that consumes it carries the Kafka data-plane permissions (`consumerStatements`).
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
    this.securityGroup.addIngressRule(peer, ec2.Port.tcp(IAM_PORT), 'S4 ingest to MSK (TLS + IAM)');
  }

  /** Consume-only data-plane access to this cluster's topics and consumer groups. */
  consumerStatements(): iam.PolicyStatement[] {
    const { region, account, partition } = Stack.of(this);
    const base = `arn:${partition}:kafka:${region}:${account}`;
    return [
      new iam.PolicyStatement({
        sid: 'KafkaConnect',
        actions: ['kafka-cluster:Connect', 'kafka-cluster:DescribeCluster'],
        resources: [this.cluster.attrArn],
      }),
      new iam.PolicyStatement({
        sid: 'KafkaConsume',
        actions: ['kafka-cluster:DescribeTopic', 'kafka-cluster:ReadData', 'kafka-cluster:DescribeGroup', 'kafka-cluster:AlterGroup'],
        resources: [`${base}:topic/${this.clusterName}/*`, `${base}:group/${this.clusterName}/*`],
      }),
    ];
  }
}
