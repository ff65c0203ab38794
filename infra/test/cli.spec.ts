import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ENVIRONMENT_NAMES, loadSettings } from '../lib/config.js';

const run = promisify(execFile);
const infraDir = new URL('..', import.meta.url).pathname;

// The real CLI, as a user runs it: `cdk synth -c env=<name>` (cdk-nag runs as a validation plugin
// and fails the synth on any unacknowledged finding). No AWS account or credentials are used.
describe('cdk synth (CLI)', () => {
  it.each(ENVIRONMENT_NAMES)('-c env=%s', async (env) => {
    const out = mkdtempSync(join(tmpdir(), 's4-cdk-cli-'));
    try {
      const { stackName } = loadSettings(env);
      await run('npx', ['cdk', 'synth', '-c', `env=${env}`, '--quiet', '--output', out], {
        cwd: infraDir,
        env: { ...process.env, CDK_DEFAULT_ACCOUNT: '', AWS_ACCESS_KEY_ID: '', AWS_PROFILE: '', CDK_DISABLE_VERSION_CHECK: '1', CI: 'true', AWS_EC2_METADATA_DISABLED: 'true' },
        timeout: 120_000,
      });
      const template = JSON.parse(readFileSync(join(out, `${stackName}.template.json`), 'utf8')) as { Resources: object };
      expect(Object.keys(template.Resources).length).toBeGreaterThan(50);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it('fails with a clear message without -c env', async () => {
    await expect(run('npx', ['cdk', 'synth', '--quiet', '--output', mkdtempSync(join(tmpdir(), 's4-cdk-cli-'))], { cwd: infraDir, env: { ...process.env, CDK_DISABLE_VERSION_CHECK: '1', CI: 'true' } })).rejects.toThrow(/-c env=<dev\|staging\|prod>/);
  });
});
