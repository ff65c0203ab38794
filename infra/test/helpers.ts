import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { ENVIRONMENTS, parseSettings, type EnvironmentName, type Settings, type SettingsInput } from '../lib/config.js';
import { S4Stack } from '../lib/stacks/s4-stack.js';

export interface Synthed {
  settings: Settings;
  stack: S4Stack;
  template: Template;
}

/** Synthesise one environment (optionally with changed settings) without an AWS account. */
export function synth(env: EnvironmentName, change: (s: SettingsInput) => SettingsInput = (s) => s): Synthed {
  const settings = parseSettings(env, change(structuredClone(ENVIRONMENTS[env])));
  const app = new App({ outdir: mkdtempSync(join(tmpdir(), 's4-cdk-')) });
  const stack = new S4Stack(app, settings.stackName, { settings, env: { region: settings.region } });
  return { settings, stack, template: Template.fromStack(stack) };
}

/** cdk-nag AwsSolutions findings that are not acknowledged. */
export function nagViolations(stack: Stack): { rule: string; severity: string; paths: string[] }[] {
  const report = new AwsSolutionsChecks(undefined, { verbose: true }).validateScope(stack);
  return report.violations.map((v) => ({
    rule: v.ruleName,
    severity: v.severity ?? '',
    paths: v.violatingResources.map((r) => r.constructPath ?? ''),
  }));
}

type Resources = Record<string, { Type: string; Properties?: Record<string, any> }>;

export function resources(t: Template, type: string): Resources {
  return t.findResources(type) as Resources;
}

/** Flatten a policy statement field that may be a string, an array or an intrinsic. */
export const asArray = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** The rendered (Fn::Join) ARN as text, tokens shown as <LogicalId.Attr>. */
export function arnText(v: unknown): string {
  if (typeof v === 'string') return v;
  const o = v as Record<string, any>;
  if (o['Fn::Join']) return (o['Fn::Join'][1] as unknown[]).map(arnText).join(o['Fn::Join'][0]);
  if (o['Fn::GetAtt']) return `<${o['Fn::GetAtt'][0]}.${o['Fn::GetAtt'][1]}>`;
  if (o.Ref) return `<${o.Ref}>`;
  return JSON.stringify(v);
}
