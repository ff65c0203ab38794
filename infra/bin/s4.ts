#!/usr/bin/env node
/**
 * The S4 CDK app: one stack per environment, chosen with `-c env=dev|staging|prod`.
 * Settings live in lib/config.ts; cdk-nag's AwsSolutions pack checks the result at synth.
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { loadSettings } from '../lib/config.js';
import { S4Stack } from '../lib/stacks/s4-stack.js';

const app = new App();
const settings = loadSettings(app.node.tryGetContext('env') as string | undefined);

new S4Stack(app, settings.stackName, {
  settings,
  // Without an account (no credentials) the stack is environment-agnostic: synth still works.
  env: { account: settings.account ?? (process.env.CDK_DEFAULT_ACCOUNT || undefined), region: settings.region },
  description: `S4 time-series store (${settings.name})`,
  terminationProtection: settings.removalPolicy === 'retain',
});

Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
app.synth();
