import type { FieldValue, Sample, Tags } from '@s4/sdk';
import { InputError } from './errors.js';

/**
 * RFC 4180 records from lines: fields separated by commas, quoted with `"` when they hold a
 * comma, quote or line break, `""` for a quote inside quotes. A quoted field may span lines.
 */
export async function* csvRecords(input: AsyncIterable<string>): AsyncGenerator<{ record: string[]; line: number }> {
  let line = 0;
  let pending: { fields: string[]; field: string; startLine: number } | undefined;
  for await (const text of input) {
    line++;
    if (pending === undefined && !text.includes('"')) {
      if (text !== '') yield { record: text.split(','), line };
      continue;
    }
    const state = pending ?? { fields: [], field: '', startLine: line };
    let inQuotes = pending !== undefined;
    if (pending !== undefined) state.field += '\n';
    let i = 0;
    while (i < text.length) {
      const c = text[i];
      if (inQuotes) {
        if (c === '"') {
          if (text[i + 1] === '"') {
            state.field += '"';
            i += 2;
            continue;
          }
          inQuotes = false;
        } else state.field += c;
        i++;
      } else if (c === ',') {
        state.fields.push(state.field);
        state.field = '';
        i++;
      } else if (c === '"' && state.field === '') {
        inQuotes = true;
        i++;
      } else {
        state.field += c;
        i++;
      }
    }
    if (inQuotes) {
      pending = state;
      continue;
    }
    state.fields.push(state.field);
    pending = undefined;
    yield { record: state.fields, line: state.startLine };
  }
  if (pending !== undefined) throw new InputError(pending.startLine, 'a quoted CSV field is never closed');
}

/** Quotes a CSV cell when it needs it (RFC 4180). */
export function csvCell(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The server's CSV layout: `metric,tags,ts,<field...>`, tags as `k1=v1;k2=v2`. */
export function csvSamples(header: string[], headerLine: number): (record: string[], line: number) => Sample {
  if (header[0] !== 'metric' || header[1] !== 'tags' || header[2] !== 'ts') {
    throw new InputError(headerLine, `CSV header must start with metric,tags,ts (the layout s4 export writes), got ${header.slice(0, 3).join(',')}`);
  }
  const names = header.slice(3);
  return (record, line) => {
    if (record.length !== header.length) throw new InputError(line, `expected ${header.length} CSV cells, got ${record.length}`);
    const fields: Record<string, FieldValue> = {};
    for (let i = 0; i < names.length; i++) {
      const value = cellValue(record[i + 3] as string);
      if (value !== undefined) fields[names[i] as string] = value;
    }
    return { metric: record[0] as string, tags: parseTagCell(record[1] as string, line), ts: parseTs(record[2] as string, line), fields };
  };
}

function parseTagCell(cell: string, line: number): Tags {
  const tags: Tags = {};
  if (cell === '') return tags;
  for (const pair of cell.split(';')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new InputError(line, `tags cell must look like k1=v1;k2=v2, got ${JSON.stringify(cell)}`);
    tags[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return tags;
}

function parseTs(cell: string, line: number): number {
  if (/^-?\d+$/.test(cell)) return Number(cell);
  const date = /\d{4}-\d{2}-\d{2}/.test(cell) ? Date.parse(cell) : Number.NaN;
  if (Number.isNaN(date)) throw new InputError(line, `ts must be integer milliseconds or an ISO date, got ${JSON.stringify(cell)}`);
  return date;
}

const NUMBER = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * A cell back to a field value, inverting the export: empty = absent, true/false = boolean,
 * a number = number, `{...}` or `[...]` holding valid JSON = nested value, anything else = string.
 * (A string that looks like a number comes back as a number: CSV carries no types. Use NDJSON
 * or MessagePack when that matters.)
 */
export function cellValue(cell: string): FieldValue | undefined {
  if (cell === '') return undefined;
  if (cell === 'true') return true;
  if (cell === 'false') return false;
  if (NUMBER.test(cell)) return Number(cell);
  const c = cell[0];
  if (c === '{' || c === '[') {
    try {
      return JSON.parse(cell) as FieldValue;
    } catch {
      return cell;
    }
  }
  return cell;
}
