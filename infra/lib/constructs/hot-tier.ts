import { Fn, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as elasticache from 'aws-cdk-lib/aws-elasticache';
import * as memorydb from 'aws-cdk-lib/aws-memorydb';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { Settings } from '../config.js';

export const REDIS_USER = 's4';
/**
 * What the S4 user may do: every key and command except the @dangerous category (FLUSHALL, KEYS,
 * CONFIG, DEBUG, ...), plus INFO, which Redis clients use for their ready check.
 */
export const ACCESS_STRING = 'on ~* &* +@all -@dangerous +info';

export interface HotTierProps {
  readonly settings: Settings;
  readonly vpc: ec2.IVpc;
}

/**
 * The Redis-compatible hot tier: Amazon MemoryDB (durable, multi-AZ with replicas) or ElastiCache
 * Serverless (Valkey/Redis; cheapest when idle, for dev). Always TLS, always an ACL user whose
 * generated password lives in Secrets Manager, reachable only from the S4 tasks' security group.
 */
export class HotTier extends Construct {
  readonly securityGroup: ec2.SecurityGroup;
  readonly secret: secretsmanager.Secret;
  /** `rediss://s4@host:port` (the password is injected separately as S4_REDIS_PASSWORD). */
  readonly url: string;
  readonly port: number = 6379;
  readonly memoryMetric: cloudwatch.IMetric;
  readonly memoryAlarmThreshold: number;
  readonly memoryMetricLabel: string;
  readonly name: string;

  constructor(scope: Construct, id: string, props: HotTierProps) {
    super(scope, id);
    const { settings, vpc } = props;
    const hot = settings.hotTier;
    const retain = settings.removalPolicy === 'retain';
    this.name = `s4-${settings.name}`;

    this.securityGroup = new ec2.SecurityGroup(this, 'SecurityGroup', {
      vpc,
      description: `S4 ${settings.name} hot tier`,
      allowAllOutbound: false,
    });

    this.secret = new secretsmanager.Secret(this, 'Password', {
      description: `S4 ${settings.name} hot-tier ACL user "${REDIS_USER}" (S4_REDIS_PASSWORD)`,
      generateSecretString: {
        secretStringTemplate: JSON.stringify({ username: REDIS_USER }),
        generateStringKey: 'password',
        // MemoryDB/ElastiCache: 16–128 printable characters, some punctuation not allowed.
        excludePunctuation: true,
        passwordLength: 40,
      },
      removalPolicy: retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    Validations.of(this.secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'Rotating the hot-tier ACL password needs the user updated in MemoryDB/ElastiCache and every task restarted in step; docs/deploy.md gives the manual rotation procedure. Only the S4 task execution role can read it.',
    });
    // A dynamic reference: CloudFormation resolves it at deploy time; it never appears in the template.
    const password = this.secret.secretValueFromJson('password').unsafeUnwrap();
    const subnetIds = vpc.selectSubnets({ subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS }).subnetIds;

    if (hot.engine === 'memorydb') {
      const user = new memorydb.CfnUser(this, 'User', {
        userName: REDIS_USER,
        accessString: ACCESS_STRING,
        authenticationMode: { Type: 'password', Passwords: [password] },
      });
      const acl = new memorydb.CfnACL(this, 'Acl', { aclName: this.name, userNames: [REDIS_USER] });
      acl.addResourceDependency(user);
      const subnets = new memorydb.CfnSubnetGroup(this, 'Subnets', { subnetGroupName: this.name, subnetIds });
      const cluster = new memorydb.CfnCluster(this, 'Cluster', {
        clusterName: this.name,
        description: `S4 ${settings.name} hot tier`,
        engine: 'valkey',
        engineVersion: hot.engineVersion,
        nodeType: hot.nodeType,
        numShards: hot.shards,
        numReplicasPerShard: hot.replicasPerShard,
        aclName: acl.aclName,
        tlsEnabled: true,
        subnetGroupName: subnets.subnetGroupName,
        securityGroupIds: [this.securityGroup.securityGroupId],
        port: this.port,
        snapshotRetentionLimit: hot.snapshotRetentionDays,
        autoMinorVersionUpgrade: true,
      });
      cluster.addResourceDependency(acl);
      cluster.addResourceDependency(subnets);
      cluster.applyRemovalPolicy(retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY);
      this.url = Fn.join('', ['rediss://', REDIS_USER, '@', cluster.attrClusterEndpointAddress, ':', String(this.port)]);
      this.memoryMetric = new cloudwatch.Metric({
        namespace: 'AWS/MemoryDB',
        metricName: 'DatabaseMemoryUsagePercentage',
        dimensionsMap: { ClusterName: this.name },
        statistic: 'Maximum',
      });
      this.memoryAlarmThreshold = hot.memoryAlarmPercent;
      this.memoryMetricLabel = 'MemoryDB memory used (%)';
    } else {
      // ElastiCache requires every user group to contain a user named "default": it is disabled.
      const defaultUser = new elasticache.CfnUser(this, 'DefaultUser', {
        userId: `${this.name}-default`,
        userName: 'default',
        engine: hot.flavour,
        accessString: 'off -@all',
        noPasswordRequired: true,
      });
      const user = new elasticache.CfnUser(this, 'User', {
        userId: `${this.name}-${REDIS_USER}`,
        userName: REDIS_USER,
        engine: hot.flavour,
        accessString: ACCESS_STRING,
        authenticationMode: { Type: 'password', Passwords: [password] },
      });
      const group = new elasticache.CfnUserGroup(this, 'UserGroup', {
        userGroupId: this.name,
        engine: hot.flavour,
        userIds: [defaultUser.userId, user.userId],
      });
      group.addResourceDependency(defaultUser);
      group.addResourceDependency(user);
      const cache = new elasticache.CfnServerlessCache(this, 'Cache', {
        serverlessCacheName: this.name,
        description: `S4 ${settings.name} hot tier`,
        engine: hot.flavour,
        majorEngineVersion: hot.majorEngineVersion,
        userGroupId: group.userGroupId,
        subnetIds,
        securityGroupIds: [this.securityGroup.securityGroupId],
        cacheUsageLimits: { dataStorage: { maximum: hot.maxDataGb, unit: 'GB' } },
        snapshotRetentionLimit: hot.snapshotRetentionDays,
      });
      cache.addResourceDependency(group);
      cache.applyRemovalPolicy(retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY);
      // Serverless caches always use TLS and listen on 6379.
      this.url = Fn.join('', ['rediss://', REDIS_USER, '@', cache.attrEndpointAddress, ':', cache.attrEndpointPort]);
      this.memoryMetric = new cloudwatch.Metric({
        namespace: 'AWS/ElastiCache',
        metricName: 'BytesUsedForCache',
        dimensionsMap: { clusterId: this.name },
        statistic: 'Maximum',
      });
      this.memoryAlarmThreshold = (hot.maxDataGb * 1024 ** 3 * hot.memoryAlarmPercent) / 100;
      this.memoryMetricLabel = 'ElastiCache bytes used';
    }
  }

  /** Let tasks in `peer` connect (TLS on the Redis port). */
  allowFrom(peer: ec2.ISecurityGroup): void {
    this.securityGroup.addIngressRule(peer, ec2.Port.tcp(this.port), 'S4 tasks to hot tier (TLS)');
  }
}
