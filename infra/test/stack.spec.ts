import { PLANNED_ROLES, ROLES } from '@s4/core';
import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { DEPLOYABLE_WORKER_ROLES, ENVIRONMENT_NAMES, type EnvironmentName } from '../lib/config.js';
import { arnText, asArray, nagViolations, resources, synth, type Synthed } from './helpers.js';

const cache = new Map<EnvironmentName, Synthed>();
const get = (env: EnvironmentName) => cache.get(env) ?? (cache.set(env, synth(env)), cache.get(env)!);

/** Task definitions by S4_ROLE, with their task role's policy statements. */
function tasks(s: Synthed) {
  const policies = resources(s.template, 'AWS::IAM::Policy');
  return Object.values(resources(s.template, 'AWS::ECS::TaskDefinition')).map((td) => {
    const main = (td.Properties!.ContainerDefinitions as any[]).find((c) => c.Name === 's4');
    const env = Object.fromEntries((main.Environment as { Name: string; Value: unknown }[]).map((e) => [e.Name, e.Value]));
    const roleId = td.Properties!.TaskRoleArn['Fn::GetAtt'][0] as string;
    const statements = Object.values(policies)
      .filter((p) => asArray(p.Properties!.Roles).some((r: any) => r.Ref === roleId))
      .flatMap((p) => p.Properties!.PolicyDocument.Statement as any[]);
    return { role: env.S4_ROLE as string, env, secrets: (main.Secrets as { Name: string }[]).map((x) => x.Name), container: main, statements };
  });
}

/** The resource patterns a role may call `action` on, as text. */
function allowed(statements: any[], action: string): string[] {
  return statements
    .filter((st) => st.Effect === 'Allow' && asArray<string>(st.Action).includes(action))
    .flatMap((st) => asArray(st.Resource).map(arnText));
}

describe.each(ENVIRONMENT_NAMES)('environment %s', (env) => {
  it('synthesises and passes cdk-nag AwsSolutions with every finding acknowledged', () => {
    const s = get(env);
    expect(nagViolations(s.stack)).toEqual([]);
  });

  it('data bucket: encrypted, public access blocked, TLS only', () => {
    const { template, settings } = get(env);
    const algorithm = settings.bucket.encryption === 'kms' ? 'aws:kms' : 'AES256';
    template.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: { ServerSideEncryptionConfiguration: [Match.objectLike({ ServerSideEncryptionByDefault: Match.objectLike({ SSEAlgorithm: algorithm }) })] },
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      LifecycleConfiguration: Match.anyValue(),
    });
    // Every bucket in the stack blocks public access and has a TLS-only policy.
    const buckets = resources(template, 'AWS::S3::Bucket');
    for (const b of Object.values(buckets)) expect(b.Properties!.PublicAccessBlockConfiguration.RestrictPublicBuckets).toBe(true);
    const policies = Object.values(resources(template, 'AWS::S3::BucketPolicy'));
    expect(policies).toHaveLength(Object.keys(buckets).length);
    for (const p of policies) {
      expect(p.Properties!.PolicyDocument.Statement).toContainEqual(
        expect.objectContaining({ Effect: 'Deny', Action: 's3:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      );
    }
  });

  it('lifecycle: raw, catalog and rollup prefixes expire per namespace; multipart uploads aborted', () => {
    const { template, settings } = get(env);
    const data = Object.values(resources(template, 'AWS::S3::Bucket')).find((b) =>
      (b.Properties!.LifecycleConfiguration?.Rules as any[] | undefined)?.some((r) => String(r.Prefix ?? '').includes('/seg/')),
    )!;
    const rules = data.Properties!.LifecycleConfiguration.Rules as any[];
    const p = settings.bucket.prefix;
    for (const ns of settings.namespaces!) {
      const byPrefix = (prefix: string) => rules.find((r) => r.Prefix === prefix);
      expect(byPrefix(`${p}v1/${ns.name}/seg/`)?.ExpirationInDays).toBe(ns.rawRetentionDays);
      expect(byPrefix(`${p}v1/${ns.name}/cat/`)?.ExpirationInDays).toBe(ns.rawRetentionDays);
      expect(byPrefix(`${p}v1/${ns.name}/rollup/`)?.ExpirationInDays).toBe(ns.rollupRetentionDays);
      const tier = settings.bucket.intelligentTieringAfterDays;
      if (tier !== undefined && tier < ns.rawRetentionDays) {
        expect(byPrefix(`${p}v1/${ns.name}/seg/`)?.Transitions).toEqual([{ StorageClass: 'INTELLIGENT_TIERING', TransitionInDays: tier }]);
      }
    }
    expect(rules).toContainEqual(expect.objectContaining({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: 'Enabled' }));
    // The manifest is never expired.
    expect(rules.every((r) => r.Prefix !== undefined || r.ExpirationInDays === undefined)).toBe(true);
  });

  it('no IAM policy grants s3:* or any S3 action on "*"', () => {
    const { template } = get(env);
    for (const [id, p] of Object.entries(resources(template, 'AWS::IAM::Policy'))) {
      for (const st of p.Properties!.PolicyDocument.Statement as any[]) {
        const actions = asArray<string>(st.Action);
        expect(actions, id).not.toContain('*');
        expect(actions, id).not.toContain('s3:*');
        if (actions.some((a) => a.startsWith('s3:'))) {
          for (const r of asArray(st.Resource)) expect(arnText(r), id).not.toBe('*');
        }
      }
    }
  });

  it('each task role touches only its own prefixes', () => {
    const s = get(env);
    const p = s.settings.bucket.prefix;
    const ns = s.settings.namespaceNames;
    const objects = (kinds: string[]) => kinds.flatMap((k) => ns.map((n) => `${p}v1/${n}/${k}/*`)).sort();
    const suffixes = (arns: string[]) => arns.map((a) => a.replace(/^<[^>]+>\//, '')).sort();
    for (const t of tasks(s)) {
      const put = suffixes(allowed(t.statements, 's3:PutObject')).filter((x) => !x.endsWith('manifest.json'));
      const del = suffixes(allowed(t.statements, 's3:DeleteObject'));
      const get_ = suffixes(allowed(t.statements, 's3:GetObject'));
      switch (t.role) {
        case 'api':
          expect(put).toEqual([]);
          expect(del).toEqual([]);
          expect(get_).toEqual([...objects(['seg', 'cat', 'rollup']), `${p}v1/manifest.json`].sort());
          break;
        case 'segment':
          expect(put).toEqual(objects(['seg', 'cat']));
          expect(del).toEqual(objects(['seg', 'cat']));
          expect(get_).toEqual([...objects(['seg', 'cat']), `${p}v1/manifest.json`].sort());
          break;
        case 'aggregate':
          expect(put).toEqual(objects(['rollup']));
          expect(del).toEqual([]);
          expect(get_).toEqual([...objects(['seg', 'cat', 'rollup']), `${p}v1/manifest.json`].sort());
          break;
        case 'compact': // planned in @s4/core; deployed once the app has it
          expect(put).toEqual(objects(['seg', 'cat']));
          expect(del).toEqual(objects(['seg', 'cat']));
          expect(get_).toEqual([...objects(['seg', 'cat']), `${p}v1/manifest.json`].sort());
          break;
        case 'all':
          expect(put).toEqual(objects(['seg', 'cat', 'rollup']));
          expect(del).toEqual(objects(['seg', 'cat']));
          break;
        default:
          throw new Error(`unexpected role ${t.role}`);
      }
      // The manifest can only be created, never overwritten.
      for (const st of t.statements.filter((x) => allowed([x], 's3:PutObject').some((a) => a.endsWith('manifest.json')))) {
        expect(st.Condition).toEqual({ Null: { 's3:if-none-match': 'false' } });
      }
    }
  });

  it('hot tier: TLS, ACL user with a generated password, only reachable from the tasks', () => {
    const { template, settings } = get(env);
    if (settings.hotTier.engine === 'memorydb') {
      template.hasResourceProperties('AWS::MemoryDB::Cluster', {
        TLSEnabled: true,
        ACLName: Match.anyValue(),
        NumReplicasPerShard: settings.hotTier.replicasPerShard,
      });
      template.hasResourceProperties('AWS::MemoryDB::User', {
        UserName: 's4',
        AuthenticationMode: { Type: 'password', Passwords: [Match.objectLike({ 'Fn::Join': Match.anyValue() })] },
      });
      if (env === 'prod') expect(settings.hotTier.replicasPerShard).toBeGreaterThanOrEqual(1);
    } else {
      template.hasResourceProperties('AWS::ElastiCache::ServerlessCache', { UserGroupId: Match.anyValue(), SecurityGroupIds: Match.anyValue() });
      template.hasResourceProperties('AWS::ElastiCache::User', { UserName: 'default', AccessString: 'off -@all' });
    }
    const ingress = resources(template, 'AWS::EC2::SecurityGroupIngress');
    const toHot = Object.values(ingress).filter((i) => i.Properties!.FromPort === 6379);
    expect(toHot.length).toBeGreaterThan(0);
    for (const i of toHot) expect(i.Properties!.SourceSecurityGroupId).toBeDefined();
  });

  it('ALB: health check on /readyz, private unless configured, autoscaling on CPU and requests', () => {
    const { template, settings } = get(env);
    template.hasResourceProperties('AWS::ElasticLoadBalancingV2::TargetGroup', { HealthCheckPath: '/readyz', TargetType: 'ip' });
    template.hasResourceProperties('AWS::ElasticLoadBalancingV2::LoadBalancer', {
      Scheme: settings.api.internetFacing ? 'internet-facing' : 'internal',
    });
    template.hasResourceProperties('AWS::ApplicationAutoScaling::ScalingPolicy', {
      TargetTrackingScalingPolicyConfiguration: Match.objectLike({ PredefinedMetricSpecification: { PredefinedMetricType: 'ECSServiceAverageCPUUtilization' } }),
    });
    template.hasResourceProperties('AWS::ApplicationAutoScaling::ScalingPolicy', {
      TargetTrackingScalingPolicyConfiguration: Match.objectLike({
        PredefinedMetricSpecification: Match.objectLike({ PredefinedMetricType: 'ALBRequestCountPerTarget' }),
      }),
    });
  });

  it('secrets are injected as ECS secrets, never as plain environment variables', () => {
    const s = get(env);
    for (const t of tasks(s)) {
      expect(t.secrets).toContain('S4_REDIS_PASSWORD');
      if (t.role === 'api' || t.role === 'all') expect(t.secrets).toContain('S4_API_KEYS');
      else expect(t.secrets).not.toContain('S4_API_KEYS');
      for (const name of Object.keys(t.env)) expect(name).not.toMatch(/PASSWORD|API_KEYS|SECRET/);
      expect(t.container.ReadonlyRootFilesystem).toBe(true);
      expect(t.container.User).toBe('1000:1000');
    }
  });

  it('the environment each task gets is valid for libs/config', async () => {
    const s = get(env);
    const configModule = new URL('../../libs/config/src/index.ts', import.meta.url).pathname;
    const { loadConfig, ROLES: appRoles } = (await import(configModule)) as {
      loadConfig: (env: Record<string, string>) => { role: string; hot: { kind: string }; objects: { kind: string } };
      ROLES: readonly string[];
    };
    // libs/config validates S4_ROLE against the roles of @s4/core; planned roles are never deployed.
    expect(appRoles).toEqual(ROLES);
    const planned: readonly string[] = PLANNED_ROLES.filter((r) => !appRoles.includes(r));
    // Intrinsics (bucket name, endpoints) replaced by plausible values; secrets by placeholders
    // (the generated API key secret is 48 characters).
    const concrete: Record<string, string> = { S4_REDIS_URL: 'rediss://s4@hot.example:6379', S4_S3_BUCKET: 's4-data-bucket', AWS_REGION: s.settings.region };
    for (const t of tasks(s)) {
      const vars: Record<string, string> = {};
      for (const [k, v] of Object.entries(t.env)) vars[k] = typeof v === 'string' ? v : concrete[k]!;
      expect(planned).not.toContain(t.role);
      expect(appRoles).toContain(t.role);
      for (const k of t.secrets) vars[k] ??= 'x'.repeat(48);
      const config = loadConfig(vars);
      expect(config.role).toBe(t.role);
      expect(config.hot.kind).toBe('redis');
      expect(config.objects.kind).toBe('s3');
    }
  });

  it('alarms: API 5xx rate, flush lag, hot-tier memory, no healthy API task; a dashboard', () => {
    const { template } = get(env);
    const names = Object.values(resources(template, 'AWS::CloudWatch::Alarm')).map((a) => a.Properties!.AlarmName as string);
    for (const suffix of ['api5xx-rate', 'flush-lag', 'hot-tier-memory', 'api-no-healthy-task']) {
      expect(names.some((n) => n.endsWith(suffix)), suffix).toBe(true);
    }
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    template.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: Match.anyValue() });
  });

  it('log groups have a retention', () => {
    const { template } = get(env);
    for (const lg of Object.values(resources(template, 'AWS::Logs::LogGroup'))) expect(lg.Properties!.RetentionInDays).toBeGreaterThan(0);
  });
});

describe('worker roles', () => {
  it('default to every deployable worker role but ingest (no Kafka) in a split deployment', () => {
    const roles = tasks(get('staging')).map((t) => t.role).sort();
    expect(roles).toEqual(expect.arrayContaining(['aggregate', 'api', 'segment']));
    expect(roles).toEqual(['api', ...DEPLOYABLE_WORKER_ROLES.filter((r) => r !== 'ingest')].sort());
  });

  it('dev runs everything in one `all` task', () => {
    expect(tasks(get('dev')).map((t) => t.role)).toEqual(['all']);
  });

  it('with Kafka: the MSK Serverless cluster (IAM auth), an ingest service, the API producing to it', () => {
    const s = synth('staging', (x) => ({ ...x, kafka: { enabled: true } }));
    expect(nagViolations(s.stack)).toEqual([]);
    s.template.resourceCountIs('AWS::MSK::ServerlessCluster', 1);
    s.template.hasResourceProperties('AWS::MSK::ServerlessCluster', { ClientAuthentication: { Sasl: { Iam: { Enabled: true } } } });
    const all = tasks(s);
    expect(all.map((t) => t.role).sort()).toEqual(['api', ...DEPLOYABLE_WORKER_ROLES].sort());
    expect(all.map((t) => t.role)).toContain('ingest');
    const actions = (t: (typeof all)[number]) => new Set(t.statements.flatMap((st) => asArray(st.Action as string | string[])));
    for (const t of all) {
      const uses = t.role === 'api' || t.role === 'ingest';
      // Only the API and ingest tasks reach Kafka: brokers, TLS + IAM, the service's own replication.
      expect(t.env.S4_KAFKA_BROKERS !== undefined, t.role).toBe(uses);
      if (uses) expect(t.env).toMatchObject({ S4_INGEST: 'kafka', S4_KAFKA_TLS: 'true', S4_KAFKA_AUTH: 'aws-iam', S4_KAFKA_REPLICATION: '0' });
      else expect([...actions(t)].some((a) => a.startsWith('kafka')), t.role).toBe(false);
    }
    const api = actions(all.find((t) => t.role === 'api')!);
    const ingest = actions(all.find((t) => t.role === 'ingest')!);
    // The API produces (idempotently) and reads the group's offsets for the lag; it never consumes.
    for (const a of ['kafka-cluster:Connect', 'kafka-cluster:CreateTopic', 'kafka-cluster:WriteData', 'kafka-cluster:WriteDataIdempotently', 'kafka-cluster:DescribeGroup']) expect(api.has(a), a).toBe(true);
    for (const a of ['kafka-cluster:ReadData', 'kafka-cluster:AlterGroup']) expect(api.has(a), a).toBe(false);
    // Ingest consumes and commits offsets; it never produces.
    for (const a of ['kafka-cluster:Connect', 'kafka-cluster:CreateTopic', 'kafka-cluster:ReadData', 'kafka-cluster:AlterGroup']) expect(ingest.has(a), a).toBe(true);
    for (const a of ['kafka-cluster:WriteData', 'kafka-cluster:WriteDataIdempotently']) expect(ingest.has(a), a).toBe(false);
    // The cluster admits the tasks on the IAM port.
    s.template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', { FromPort: 9098, ToPort: 9098, IpProtocol: 'tcp' });
  });

  it('without Kafka no task gets brokers or Kafka rights', () => {
    for (const t of tasks(get('staging'))) {
      expect(t.env.S4_KAFKA_BROKERS).toBeUndefined();
      expect(t.env.S4_INGEST).toBeUndefined();
      expect(t.statements.some((st) => JSON.stringify(st.Action).includes('kafka'))).toBe(false);
    }
  });

  it('every role the app implements besides all/api is deployable as a worker service', () => {
    const workers = ROLES.filter((r) => r !== 'all' && r !== 'api');
    const s = synth('staging', (x) => ({ ...x, kafka: { enabled: true }, workers: { ...x.workers, roles: [...workers] } }));
    expect(nagViolations(s.stack)).toEqual([]);
    expect(tasks(s).map((t) => t.role).sort()).toEqual(['api', ...workers].sort());
  });

  it('planned roles are refused at synth, even with Kafka on', () => {
    for (const role of PLANNED_ROLES.filter((r) => !(ROLES as readonly string[]).includes(r))) {
      expect(() => synth('staging', (x) => ({ ...x, kafka: { enabled: true }, workers: { ...x.workers, roles: [role] } }))).toThrow(
        `the ${role} role is planned, not built yet: the app refuses S4_ROLE=${role}`,
      );
    }
  });

  it('an explicit list from the settings file wins', () => {
    const s = synth('staging', (x) => ({ ...x, workers: { ...x.workers, roles: ['segment'] } }));
    expect(tasks(s).map((t) => t.role).sort()).toEqual(['api', 'segment']);
  });
});
