/**
 * @module Summaries of V8 CPU profiles (`node --cpu-prof`) of our server: where the time of the request
 * path goes, by function, with TypeScript positions.
 *
 * Profile positions are those of the TypeScript sources themselves: our hook strips the types in
 * place (bin/typescript-hooks.js), so lines need no mapping.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
  readonly columnNumber: number;
}
interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: number[];
}
interface CpuProfile {
  readonly nodes: ProfileNode[];
  readonly samples: number[];
  readonly timeDeltas: number[];
}

export interface FunctionCost {
  /** `name (file:line)` with the TypeScript line of the function. */
  readonly fn: string;
  /** Share of the request-path time, 0–1. */
  readonly self: number;
  readonly total: number;
  /** Microseconds per request. */
  readonly self_us: number;
  readonly total_us: number;
}

export interface ProfileSummary {
  /** Milliseconds of samples inside request handlers (stacks through src/http/server.ts) plus GC. */
  readonly request_ms: number;
  readonly idle_ms: number;
  readonly other_ms: number;
  readonly us_per_request: number;
  readonly top_self: FunctionCost[];
  readonly top_total: FunctionCost[];
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** `name (file:line)` of a profile frame, the path relative to the repository. */
function frameName(f: CallFrame): string {
  const file = f.url.startsWith('file://') ? relative(ROOT, fileURLToPath(f.url)) : f.url;
  const name = f.functionName === '' ? '(anonymous)' : f.functionName;
  return file === '' ? name : `${name} (${file.replace(/^node_modules\//, '')}:${f.lineNumber + 1})`;
}

/**
 * Splits the samples of the profile's main thread into request handling (any stack through the REST
 * front, plus the garbage collector while serving), idle and the rest (start-up, timers), and ranks
 * functions by their share of request handling.
 */
export function summarizeProfile(file: string, requests: number, top = 25): ProfileSummary {
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const label = new Map(p.nodes.map((n) => [n.id, frameName(n.callFrame)]));
  const stackOf = new Map<number, number[]>();
  const stack = (id: number): number[] => {
    let s = stackOf.get(id);
    if (s === undefined) {
      s = [];
      for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) s.push(cur);
      stackOf.set(id, s);
    }
    return s;
  };
  const isRequest = (id: number): boolean => stack(id).some((x) => byId.get(x)!.callFrame.url.endsWith('/src/http/server.ts'));
  let requestUs = 0;
  let idleUs = 0;
  let otherUs = 0;
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  for (let i = 0; i < p.samples.length; i++) {
    const id = p.samples[i]!;
    const dt = p.timeDeltas[i] ?? 0;
    const fn = byId.get(id)!.callFrame.functionName;
    if (fn === '(idle)') {
      idleUs += dt;
      continue;
    }
    if (fn !== '(garbage collector)' && !isRequest(id)) {
      otherUs += dt;
      continue;
    }
    requestUs += dt;
    self.set(label.get(id)!, (self.get(label.get(id)!) ?? 0) + dt);
    const seen = new Set<string>();
    for (const x of stack(id)) {
      const l = label.get(x)!;
      if (seen.has(l)) continue;
      seen.add(l);
      total.set(l, (total.get(l) ?? 0) + dt);
    }
  }
  const rank = (m: Map<string, number>): FunctionCost[] =>
    [...m]
      .filter(([fn]) => fn !== '(root)')
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([fn]) => ({
        fn,
        self: (self.get(fn) ?? 0) / requestUs,
        total: (total.get(fn) ?? 0) / requestUs,
        self_us: (self.get(fn) ?? 0) / requests,
        total_us: (total.get(fn) ?? 0) / requests,
      }));
  return {
    request_ms: requestUs / 1000,
    idle_ms: idleUs / 1000,
    other_ms: otherUs / 1000,
    us_per_request: requestUs / requests,
    top_self: rank(self),
    top_total: rank(total),
  };
}

export function formatSummary(s: ProfileSummary): string {
  const row = (c: FunctionCost, key: 'self' | 'total'): string =>
    `${(100 * c[key]).toFixed(1).padStart(5)} %  ${c[`${key}_us`].toFixed(2).padStart(7)} µs/req  ${c.fn}`;
  return [
    `request handling ${s.request_ms.toFixed(0)} ms (${s.us_per_request.toFixed(1)} µs per request), idle ${s.idle_ms.toFixed(0)} ms, other ${s.other_ms.toFixed(0)} ms`,
    'self time (where the CPU was):',
    ...s.top_self.map((c) => row(c, 'self')),
    'inclusive time (what it was doing for):',
    ...s.top_total.map((c) => row(c, 'total')),
  ].join('\n');
}
