/**
 * @module Examples of the OpenAPI document, taken from real responses of the build being served.
 *
 * Each operation's sample request is run against the registry when the document is built, so the
 * examples of the fixture build in tests and of the national build in production are both real, and
 * no body is ever written by hand (a hand-written one would silently go stale). The sample requests
 * are found in the data (a ZIP with plans, its first plans), not fixed, because the two builds share
 * no ZIP. Errors are real too: a request missing its required parameters (400), a free caller (402),
 * an id that does not exist (404); 401 and 429 are the bodies the front itself answers.
 */
import type { DataRegistry } from '../operations/data-registry.ts';
import { type BodyResult, executeToBody, type Operation, type OperationContext } from '../operations/operation.ts';
import { threadScratch } from '../operations/request-scratch.ts';
import { RATE_LIMITED, toProblemBody, UNAUTHORIZED, type ProblemSpec } from '../operations/problems.ts';
import { P } from '../operations/shared-schemas.ts';
import { BODY_NOT_ALLOWED } from './front-problems.ts';

export interface OpenApiExamples {
  /** Example body by status code ('200', '400'…), by operation id. */
  readonly responses: ReadonlyMap<string, Readonly<Record<string, unknown>>>;
  /**
   * The parameters of the request that answered each operation's 200 example, by operation id, then by
   * parameter name (path and query, as sent): the document's parameter examples, so that a suite
   * generated from the document sends a request the served build answers, and gets that example.
   */
  readonly parameters: ReadonlyMap<string, Readonly<Record<string, string>>>;
}

type Pairs = Array<[string, string]>;

interface Sample {
  readonly query: Pairs;
  readonly path: Readonly<Record<string, string>>;
}

/** What the sample requests are made of, found in the build. */
interface Facts {
  readonly year: number;
  readonly zip: string;
  readonly state: string;
  readonly planIds: readonly string[];
  readonly crosswalk: Sample | null;
  /** A dental plan offered at the ZIP, when the build has one there. */
  readonly dentalPlanId: string | null;
}

/** An id of the right shape that no build contains. */
const NO_SUCH_PLAN = '00000XX0000000';

export interface ExampleSources {
  readonly operations: ReadonlyArray<Operation<never>>;
  readonly ctx: OperationContext;
  readonly upgradeUrl: string;
  /** The REST front's serializer of an operation's 200 body: examples are the bytes it sends, parsed. */
  readonly serialize: (op: Operation<never>, body: Record<string, unknown>) => string | Buffer;
}

export function collectExamples(src: ExampleSources): OpenApiExamples {
  const byId = new Map(src.operations.map((op) => [op.id, op]));
  const run = (id: string, s: Sample, tier: 'free' | 'enterprise' = 'enterprise'): BodyResult | null => {
    const op = byId.get(id);
    if (op === undefined) return null;
    try {
      return executeToBody(op, src.ctx, tier, s.query, s.path, threadScratch());
    } catch {
      // An example is documentation: a build it cannot be made from must still be served.
      return null;
    }
  };
  const facts = findFacts(src.ctx.registry, run);
  const out = new Map<string, Record<string, unknown>>();
  const parameters = new Map<string, Record<string, string>>();
  if (facts === null) return { responses: out, parameters };
  const problem = (spec: ProblemSpec, instance: string): unknown => toProblemBody(spec, src.ctx.baseUrl, instance, src.upgradeUrl);
  for (const op of src.operations) {
    const sample = samples(op.id, facts);
    const examples: Record<string, unknown> = {};
    const instance = op.path.replace(/\{(\w+)\}/g, (_, name: string) => sample.ok?.path[name] ?? name);
    // Without data for its success (a crosswalk not loaded), an operation still refuses the same way.
    const base = sample.ok ?? { query: [], path: {} };
    if (sample.ok !== null) {
      const ok = run(op.id, sample.ok);
      if (ok?.ok === true) {
        examples['200'] = JSON.parse(Buffer.from(src.serialize(op, ok.body)).toString('utf8'));
        parameters.set(op.id, Object.fromEntries([...sample.ok.query, ...Object.entries(sample.ok.path)]));
      }
    }
    const free = run(op.id, sample.freeOk ?? base, 'free');
    if (free?.ok === false && free.problem.kind === 'paymentRequired') examples['402'] = problem(free.problem, instance);
    const bad = run(op.id, { query: [], path: base.path });
    examples['400'] = problem(bad?.ok === false && bad.problem.kind === 'validation' ? bad.problem : BODY_NOT_ALLOWED, instance);
    for (const m of sample.missing) {
      const missing = run(op.id, m);
      if (missing?.ok === false && missing.problem.kind === 'notFound') {
        examples['404'] = problem(
          missing.problem,
          op.path.replace(/\{(\w+)\}/g, (_, name: string) => m.path[name] ?? name),
        );
        break;
      }
    }
    examples['401'] = problem(UNAUTHORIZED, instance);
    examples['429'] = problem(RATE_LIMITED, instance);
    out.set(op.id, examples);
  }
  return { responses: out, parameters };
}

interface OperationSamples {
  readonly ok: Sample | null;
  /** A request a free caller may not make, when `ok` is one it may. */
  readonly freeOk?: Sample;
  /** Requests for something that does not exist, tried in order until one is a 404. */
  readonly missing: readonly Sample[];
}

function samples(id: string, f: Facts): OperationSamples {
  const q = (...pairs: Pairs): Pairs => pairs;
  const [first = NO_SUCH_PLAN, second = NO_SUCH_PLAN] = f.planIds;
  const where = q(['zip', f.zip], ['age', '40']);
  switch (id) {
    case 'searchPlans':
      return {
        ok: { query: q(...where, ['per_page', '2']), path: {} },
        freeOk: { query: q(...where, ['sort_by', 'deductible']), path: {} },
        missing: [{ query: q(['zip', '00000'], ['age', '40']), path: {} }],
      };
    case 'getPlanStats':
      return {
        ok: { query: q(...where, ['metal_level', 'silver']), path: {} },
        freeOk: { query: q(...where, ['max_premium', '500']), path: {} },
        missing: [{ query: q(['zip', '00000'], ['age', '40']), path: {} }],
      };
    case 'comparePlans':
      // A household, so the example shows the member breakdown.
      return {
        ok: { query: q(['ids', `${first},${second}`], ['zip', f.zip], ['ages', '40,38,10']), path: {} },
        missing: [{ query: q(['ids', `${first},${NO_SUCH_PLAN}-01`], ...where), path: {} }],
      };
    case 'calculateAptc':
      return {
        ok: { query: q(['zip', f.zip], ['household_income', '40000'], ['household_size', '2'], ['ages', '40,38']), path: {} },
        missing: [{ query: q(['zip', '00000'], ['household_income', '40000'], ['household_size', '2'], ['ages', '40,38']), path: {} }],
      };
    case 'checkIchraAffordability':
      return {
        ok: { query: q(['zip', f.zip], ['age', '40'], ['household_income', '52000'], ['hra_monthly', '300']), path: {} },
        missing: [{ query: q(['zip', '00000'], ['age', '40'], ['household_income', '52000'], ['hra_monthly', '300']), path: {} }],
      };
    case 'getCrosswalk':
      return {
        ok: f.crosswalk,
        missing: [
          {
            query: (f.crosswalk?.query ?? q(['year', String(f.year - 1)], ['state', f.state]))
              .filter(([k]) => k !== 'plan_id')
              .concat([['plan_id', NO_SUCH_PLAN]]),
            path: {},
          },
        ],
      };
    case 'estimateOop':
      return {
        ok: { query: q(...where, ['scenario', 'medium']), path: { plan_id: first } },
        missing: [{ query: q(...where, ['scenario', 'medium']), path: { plan_id: `${NO_SUCH_PLAN}-01` } }],
      };
    case 'searchDentalPlans':
      return {
        ok: { query: q(...where, ['per_page', '2']), path: {} },
        missing: [{ query: q(['zip', '00000'], ['age', '40']), path: {} }],
      };
    case 'getDentalPlanById':
      return {
        ok: f.dentalPlanId === null ? null : { query: [], path: { plan_id: f.dentalPlanId } },
        missing: [{ query: [], path: { plan_id: `${NO_SUCH_PLAN}-01` } }],
      };
    case 'getPlanById':
      // Unpriced: the example is what its self link (the plan, without pricing parameters) answers.
      return { ok: { query: [], path: { plan_id: first } }, missing: [{ query: [], path: { plan_id: `${NO_SUCH_PLAN}-01` } }] };
    case 'lookupZip':
      return { ok: { query: [], path: { zip: f.zip } }, missing: [{ query: [], path: { zip: '00000' } }] };
    case 'listIssuers':
      return {
        ok: { query: q(['state', f.state]), path: {} },
        missing: ['DC', 'VT', 'RI', 'WY', 'AK', 'TX'].filter((st) => st !== f.state).map((st) => ({ query: q(['state', st]), path: {} })),
      };
    default:
      return { ok: { query: [], path: {} }, missing: [] };
  }
}

/** A ZIP with plans (the documented example first), its first plans, and a crosswalked plan if any. */
function findFacts(registry: DataRegistry, run: (id: string, s: Sample) => BodyResult | null): Facts | null {
  const yd = registry.get(registry.currentYear);
  if (yd === undefined) return null;
  const search = (zip: string): { plans: Array<{ id: string }>; state: string } | null => {
    const r = run('searchPlans', {
      query: [
        ['zip', zip],
        ['age', '40'],
        ['per_page', '2'],
      ],
      path: {},
    });
    if (r?.ok !== true) return null;
    const body = r.body as { _embedded: { plans: Array<{ id: string }> }; state: string };
    return body._embedded.plans.length > 0 ? { plans: body._embedded.plans, state: body.state } : null;
  };
  const candidates = function* (): Generator<string> {
    yield P.zip.example;
    const sample = yd.ds.sampleZip();
    if (sample !== null) yield sample;
    for (let z = 0; z < 100_000; z++) {
      const zip = String(z).padStart(5, '0');
      const locations = yd.ds.resolveZip(zip);
      if (locations?.some((l) => yd.statesWithPlans.has(l.state))) yield zip;
    }
  };
  for (const zip of candidates()) {
    const found = search(zip);
    if (found === null) continue;
    return {
      year: registry.currentYear,
      zip,
      state: found.state,
      planIds: found.plans.map((p) => p.id),
      crosswalk: findCrosswalk(registry, run),
      dentalPlanId: findDentalPlan(candidates(), run),
    };
  }
  return null;
}

/** The first dental plan a dental search lists at the first ZIP with one (the documented ZIP first). */
function findDentalPlan(zips: Iterable<string>, run: (id: string, s: Sample) => BodyResult | null): string | null {
  for (const zip of zips) {
    const r = run('searchDentalPlans', {
      query: [
        ['zip', zip],
        ['age', '40'],
      ],
      path: {},
    });
    if (r?.ok !== true) continue;
    const first = (r.body as { _embedded: { dental_plans: Array<{ id: string }> } })._embedded.dental_plans[0];
    if (first !== undefined) return first.id;
  }
  return null;
}

/** The first plan of a loaded crosswalk's source year that the crosswalk operation answers. */
function findCrosswalk(registry: DataRegistry, run: (id: string, s: Sample) => BodyResult | null): Sample | null {
  for (const y of registry.years) {
    const cw = registry.get(y)!.ds.manifest.crosswalk;
    if (cw === null) continue;
    const source = registry.get(cw.source_year) ?? registry.get(y)!;
    const ids = source.ds.planIds();
    for (let i = 0; i < ids.length && i < 500; i++) {
      const planId = ids[i]!.slice(0, 14);
      const state = planId.slice(5, 7);
      const s: Sample = {
        query: [
          ['plan_id', planId],
          ['year', String(cw.source_year)],
          ['state', state],
        ],
        path: {},
      };
      if (run('getCrosswalk', s)?.ok === true) return s;
    }
  }
  return null;
}
