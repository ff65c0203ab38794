import { Stack, Validations } from 'aws-cdk-lib';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type { IConstruct } from 'constructs';

/**
 * cdk-nag v3 matches acknowledgements by exact finding id, e.g.
 * `AwsSolutions-IAM5[Resource::<DataBucket1234.Arn>/v1/default/seg/*]`. This renders a token the
 * way cdk-nag does (Ref → `<Id>`, GetAtt → `<Id.Attr>`, Join → concatenation), so that each
 * wildcard we grant on purpose is acknowledged by name — and any new wildcard is still reported.
 */
export function flatten(scope: IConstruct, value: unknown): string {
  const visit = (node: unknown): string => {
    if (node === undefined) return '';
    if (typeof node === 'string') return node.replace(/\$\{/g, '<').replace(/\}/g, '>');
    const o = node as Record<string, unknown>;
    if (o['Fn::Join']) {
      const [sep, items] = o['Fn::Join'] as [string, unknown[]];
      return items.map(visit).join(sep);
    }
    if (o['Fn::Sub']) return visit(o['Fn::Sub']);
    if (o['Fn::GetAtt']) {
      const [res, attr] = o['Fn::GetAtt'] as [unknown, unknown];
      return `<${visit(res)}.${visit(attr)}>`;
    }
    if (o['Fn::ImportValue']) return visit(o['Fn::ImportValue']);
    if (o.Ref) return `<${visit(o.Ref)}>`;
    return JSON.stringify(node);
  };
  return visit(Stack.of(scope).resolve(value));
}

/** Acknowledge AwsSolutions-IAM5 for every wildcard action/resource of these statements. */
export function acknowledgeWildcards(scope: IConstruct, statements: readonly iam.PolicyStatement[], reason: string): void {
  const ids = new Set<string>();
  for (const s of statements) {
    const json = s.toStatementJson() as { Action?: string | string[]; Resource?: unknown };
    for (const a of ([] as string[]).concat(json.Action ?? [])) if (a.includes('*')) ids.add(`AwsSolutions-IAM5[Action::${a}]`);
    for (const r of ([] as unknown[]).concat(json.Resource ?? [])) {
      const flat = flatten(scope, r);
      if (flat.includes('*')) ids.add(`AwsSolutions-IAM5[Resource::${flat}]`);
    }
  }
  for (const id of ids) Validations.of(scope).acknowledge({ id, reason });
}

/** Acknowledge one rule (or one finding) with a written reason. */
export function acknowledge(scope: IConstruct, id: string, reason: string): void {
  Validations.of(scope).acknowledge({ id, reason });
}
