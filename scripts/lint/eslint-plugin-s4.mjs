// Layout rules ESLint has no built-in for: no import cycle between the folders of a package, and
// no relative import that leaves its package. Loaded by eslint.config.mjs as the `s4` plugin.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

const repo = resolve(import.meta.dirname, '..', '..');

/** `<repo>/libs/<name>/` or `<repo>/apps/<name>/` holding `file`, or null. */
function packageRootOf(file) {
  const rel = relative(repo, file).split(sep);
  return (rel[0] === 'libs' || rel[0] === 'apps') && rel.length > 2 ? join(repo, rel[0], rel[1]) + sep : null;
}

/**
 * A node of the layout graph: a first-level folder of src (`query/`), or a file directly in src
 * (`concurrency.ts`), so that the package index importing every folder is no cycle by itself.
 */
function nodeOf(src, file) {
  const rel = relative(src, file).split(sep);
  return rel.length > 1 ? `${rel[0]}/` : rel[0].replace(/\.js$/, '.ts');
}

const isSpec = (f) => /\.spec\.ts$/.test(f) || f.endsWith('.d.ts');

function sourceFiles(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...sourceFiles(p));
    else if (e.name.endsWith('.ts') && !isSpec(p)) out.push(p);
  }
  return out;
}

function relativeImports(text) {
  return ts
    .preProcessFile(text, true, true)
    .importedFiles.map((f) => f.fileName)
    .filter((s) => s.startsWith('./') || s.startsWith('../'));
}

/** Per package src: node → node → the first file (and specifier) making that edge; nodes on a cycle. */
const graphs = new Map();

function graphOf(src) {
  let g = graphs.get(src);
  if (g) return g;
  const edges = new Map();
  for (const file of sourceFiles(src)) {
    const from = nodeOf(src, file);
    for (const spec of relativeImports(readFileSync(file, 'utf8'))) {
      const target = resolve(dirname(file), spec);
      if (!target.startsWith(src)) continue;
      const to = nodeOf(src, target);
      if (to === from) continue;
      if (!edges.has(from)) edges.set(from, new Map());
      if (!edges.get(from).has(to)) edges.get(from).set(to, `${relative(src, file)} imports ${spec}`);
    }
  }
  g = { edges, component: components(edges) };
  graphs.set(src, g);
  return g;
}

/** Tarjan's strongly connected components: node → component id, for components of two or more nodes. */
function components(edges) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const on = new Set();
  const comp = new Map();
  let next = 0;
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    on.add(v);
    for (const w of edges.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      const members = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        members.push(w);
      } while (w !== v);
      if (members.length > 1) for (const m of members) comp.set(m, v);
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return comp;
}

/** The shortest way back from `from` to `to` inside the graph, each hop with the import that makes it. */
function pathBack(edges, from, to) {
  const prev = new Map([[from, null]]);
  const queue = [from];
  while (queue.length > 0) {
    const v = queue.shift();
    if (v === to) break;
    for (const w of edges.get(v)?.keys() ?? [])
      if (!prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
  }
  const hops = [];
  for (let v = to; prev.get(v) !== null && prev.has(v); v = prev.get(v)) hops.unshift(`${prev.get(v)} → ${v} (${edges.get(prev.get(v)).get(v)})`);
  return hops.join(', ');
}

function importSources(node) {
  if ((node.type === 'ImportDeclaration' || node.type === 'ExportNamedDeclaration' || node.type === 'ExportAllDeclaration') && node.source) return node.source;
  if (node.type === 'ImportExpression' && node.source.type === 'Literal') return node.source;
  return null;
}

const folderCycles = {
  meta: {
    type: 'problem',
    docs: { description: 'No import cycle between the folders of a package (a folder is a layer: its imports point one way)' },
    messages: {
      cycle: 'import cycle between folders of {{pkg}}: {{from}} → {{to}} here, and back through {{back}}. Move what both need to a folder both import.',
    },
    schema: [],
  },
  create(context) {
    const file = resolve(context.filename);
    const root = packageRootOf(file);
    if (!root || isSpec(file)) return {};
    const src = join(root, 'src') + sep;
    if (!file.startsWith(src)) return {};
    const { edges, component } = graphOf(src);
    const from = nodeOf(src, file);
    const check = (node) => {
      const source = importSources(node);
      if (!source || typeof source.value !== 'string' || !/^\.\.?\//.test(source.value)) return;
      const target = resolve(dirname(file), source.value);
      if (!target.startsWith(src)) return;
      const to = nodeOf(src, target);
      if (to === from || !component.has(from) || component.get(from) !== component.get(to)) return;
      context.report({ node: source, messageId: 'cycle', data: { pkg: relative(repo, root), from, to, back: pathBack(edges, to, from) } });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
  },
};

const noCrossPackageRelative = {
  meta: {
    type: 'problem',
    docs: { description: "A relative import stays inside its package; other packages are imported by name (their index is their API)" },
    messages: { leaves: '{{spec}} leaves {{pkg}}: import the other package by its name (@s4/...), never by path' },
    schema: [],
  },
  create(context) {
    const file = resolve(context.filename);
    const root = packageRootOf(file);
    if (!root) return {};
    const check = (node) => {
      const source = importSources(node);
      if (!source || typeof source.value !== 'string' || !/^\.\.?\//.test(source.value)) return;
      if (!resolve(dirname(file), source.value).startsWith(root)) context.report({ node: source, messageId: 'leaves', data: { spec: source.value, pkg: relative(repo, root) } });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
  },
};

export default { meta: { name: 'eslint-plugin-s4' }, rules: { 'folder-cycles': folderCycles, 'no-cross-package-relative': noCrossPackageRelative } };
