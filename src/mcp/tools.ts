/**
 * @module MCP tools: one per capability, each a thin mapping onto the REST operation it mirrors.
 *
 * A tool call is turned into the operation's parameters and run through the same `execute` as REST,
 * so validation, tier rules, not-found answers and the response body are the REST ones by construction.
 * Inputs follow docs/compatibility.md#mcp-tools: native integers, booleans and arrays instead of query strings.
 * Failures are tool execution errors carrying the REST problem document (MCP 2025-11-25, SEP-1303), so
 * a model can read `errors[].field` and correct itself.
 */
import { checkIchraAffordabilityOperation } from '../operations/check-ichra-affordability.ts';
import { comparePlansOperation } from '../operations/compare-plans.ts';
import { estimateAptcOperation } from '../operations/estimate-aptc.ts';
import { estimateOutOfPocketOperation } from '../operations/estimate-out-of-pocket.ts';
import { getDentalPlanDetailsOperation } from '../operations/get-dental-plan-details.ts';
import { getPlanCrosswalkOperation } from '../operations/get-plan-crosswalk.ts';
import { listIssuersOperation } from '../operations/list-issuers.ts';
import { DEFAULT_VARIANT, PLAN_ID_PATTERN, YEAR_RANGE_TEXT } from '../operations/shared-schemas.ts';
import { listPlanYearsOperation } from '../operations/list-plan-years.ts';
import { getPlanDetailsOperation } from '../operations/get-plan-details.ts';
import { getPlanStatsOperation } from '../operations/get-plan-stats.ts';
import { lookupZipOperation } from '../operations/lookup-zip.ts';
import type { Operation } from '../operations/operation.ts';
import type { Alternatives } from '../operations/problems.ts';
import type { JsonSchema } from '../operations/query.ts';
import { searchDentalPlansOperation } from '../operations/search-dental-plans.ts';
import { PRO_FILTER_NAMES, searchToolWording } from '../operations/search-parameters.ts';
import { searchPlansOperation } from '../operations/search-plans.ts';
import { unknownNameMessage } from '../operations/unknown-name.ts';
import { toolInputSchema, type ToolParam } from './tool-input.ts';
import { toolOutputSchema } from './tool-output.ts';

/** The published plan ID shape (docs/compatibility.md#mcp-tools): a variant ID, or a 14-character ID meaning its -01 variant. */
const PLAN_ID = {
  type: 'string',
  pattern: PLAN_ID_PATTERN,
  description: `Plan variant ID (14-character ID + -NN); a bare 14-character ID means its -${DEFAULT_VARIANT} variant`,
} as const;
const PRO = 'Requires Pro or Enterprise.';

/**
 * How a model reads the parameters that several tools share, where the REST wording (written for the
 * OpenAPI reader) is not it. A tool's own `params` entry replaces these for its arguments.
 */
const SHARED_PARAMS: Readonly<Record<string, ToolParam>> = {
  age: { description: 'Age; 0–14 use the child rate, 64 and over the age-64 rate. Give age, or ages for a household' },
  ages: {
    description:
      'A household instead of age: the ages of the 1–10 members seeking coverage. Premiums become the household’s monthly total, with only the three oldest children under 21 charged (family tiers in NY and VT)',
  },
  year: { description: 'Plan year; defaults to the newest loaded year (see list_plan_years)' },
  county_fips: { description: 'County FIPS code choosing a location of a ZIP that spans several' },
  plan_id: PLAN_ID,
};

export interface ToolDefinition {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  readonly outputSchema: JsonSchema;
  readonly operation: Operation<never>;
  /** Tool argument name → REST parameter name where they differ. */
  readonly rename?: Readonly<Record<string, string>>;
  /** One line for people reading the transcript. */
  summarize(body: Record<string, unknown>): string;
}

interface ToolSpec extends Omit<ToolDefinition, 'name' | 'inputSchema' | 'outputSchema' | 'operation'> {
  /** The tool's own keywords of an argument (tool argument name → keywords over the REST parameter's). */
  readonly params?: Readonly<Record<string, ToolParam>>;
}

/**
 * A tool over an operation: the name the operation declares, the input schema from its query, the
 * REST body as output (its schema spelled portably: tool-output.ts).
 */
function defineTool(operation: Operation<never>, { params, ...spec }: ToolSpec): ToolDefinition {
  const inputSchema = toolInputSchema(operation.query, spec.rename, { ...SHARED_PARAMS, ...params });
  return { name: operation.toolName, ...spec, inputSchema, outputSchema: toolOutputSchema(operation.responseSchema), operation };
}

type Body = Record<string, unknown>;
/** Dollars: grouped, always two decimals ($512.30, $6,147.60). */
const money = (v: unknown): string =>
  typeof v === 'number' ? `$${v.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}` : String(v);
const num = (v: unknown): string => (typeof v === 'number' ? v.toLocaleString('en-US', { maximumFractionDigits: 2 }) : String(v));
const modeledNote = (b: Body): string =>
  String(b.data_source ?? '').includes('modeled') ? ' Premiums are modeled from SLCSP benchmarks, not issuer rates.' : '';

export const TOOLS: readonly ToolDefinition[] = [
  defineTool(searchPlansOperation, {
    title: 'Search health plans',
    description: `ACA marketplace plans offered at a ZIP code, priced for one applicant age or for a household (ages: each plan's household total, sorted, filtered and paged by it), with filters, sorting and pages. Catastrophic plans appear only when every member is under 30 unless metal_level is catastrophic. A household (ages), the filters ${PRO_FILTER_NAMES.join(', ')}, a sort_by other than premium, and income with household_size (premium after the estimated tax credit; cost-sharing-reduction variants of silver plans) ${PRO.toLowerCase().replace('.', '')}.`,
    params: {
      ...searchToolWording(searchPlansOperation.query.order),
      // The published schema has the cursor without the REST length limit.
      cursor: { ...searchToolWording(['cursor']).cursor, maxLength: undefined },
    },
    summarize(b) {
      const plans = ((b._embedded as { plans?: Body[] } | undefined)?.plans ?? []) as Body[];
      const first = plans[0];
      const total = b.total === null ? `${plans.length} plans on this page` : `${num(b.total)} plans`;
      const cheapest =
        first === undefined ? '' : ` First: ${String(first.name)} (${String(first.metal_level)}) at ${money(first.premium)}/month.`;
      const household = Array.isArray(b.members) ? ` for a household of ${b.members.length}` : '';
      return `${total}${household} at ZIP ${String(b.zip)} (${String(b.county)}, ${String(b.state)}, ${String(b.rating_area)}), plan year ${String(b.plan_year)}.${cheapest}${b.next_cursor !== undefined ? ' More pages: pass next_cursor.' : ''}${modeledNote(b)}`;
    },
  }),
  defineTool(getPlanStatsOperation, {
    title: 'Facets and ranges of a search',
    description: `For a search's ZIP, age (or household ages) and filters: how many plans match per metal level, plan type, issuer and HSA eligibility, and the lowest and highest premium and deductible; each facet adds up to total. A household (ages), the filters ${PRO_FILTER_NAMES.join(', ')}, and income with household_size ${PRO.toLowerCase().replace('.', '')}.`,
    params: searchToolWording(getPlanStatsOperation.query.order),
    summarize: (b) => {
      const f = b.facets as Record<string, Array<{ value: unknown; count: number }>>;
      const r = b.ranges as Record<string, { min: number | null; max: number | null }>;
      const metals = f.metal_level!.map((x) => `${String(x.value)} ${x.count}`).join(', ');
      const premium = r.premium!.min === null ? '' : ` Premiums ${money(r.premium!.min)}–${money(r.premium!.max)}/month.`;
      return `${num(b.total)} plans at ZIP ${String(b.zip)} (${String(b.county)}, ${String(b.state)}), plan year ${String(b.plan_year)}${metals === '' ? '' : `: ${metals}`}.${premium}${modeledNote(b)}`;
    },
  }),
  defineTool(getPlanDetailsOperation, {
    title: 'Plan details',
    description: `Full record of a plan: deductibles and out-of-pocket maximums by network tier, SBC coverage examples, links. With zip and age (or a household's ages), also its premium there with each member's share; with income and household_size too, the premium after the estimated tax credit. ${PRO}`,
    params: {
      zip: { description: 'ZIP code to price the plan at (with age or ages)' },
      age: { description: 'Age to price the plan for (with zip); 0–14 use the child rate, 64 and over the age-64 rate' },
      income: { description: 'Annual household income, dollars (with zip and age or ages)' },
      household_size: { description: 'People in the tax household (with income)' },
    },
    summarize: (b) =>
      `${String(b.name)} (${String(b.id)}), ${String(b.metal_level)} ${String(b.plan_type)} by ${String(b.issuer)} in ${String(b.state)}, plan year ${String(b.plan_year)}.`,
  }),
  defineTool(comparePlansOperation, {
    title: 'Compare plans',
    description: `Two to four plans side by side at one ZIP and age, or for a household (ages: each plan's household total and each member's share), naming the lowest premium, deductible and out-of-pocket maximum. With income and household_size, the premium after the estimated tax credit. ${PRO}`,
    params: {
      income: { description: 'Annual household income, dollars' },
      household_size: { description: 'People in the tax household (with income)' },
      plan_ids: { uniqueItems: true, items: PLAN_ID, description: 'Two to four distinct plan variant IDs, compared in this order' },
    },
    rename: { plan_ids: 'ids' },
    summarize: (b) => {
      const s = b.comparison_summary as Body;
      return `Compared ${(b._embedded as { plans: unknown[] }).plans.length} plans at ZIP ${String(b.zip)}: lowest premium ${String(s.lowest_premium)}, lowest deductible ${String(s.lowest_deductible)}, lowest out-of-pocket maximum ${String(s.lowest_moop)}.${modeledNote(b)}`;
    },
  }),
  defineTool(estimateOutOfPocketOperation, {
    title: 'Estimate yearly cost',
    description: `A year of premiums (one age, or a household's total with ages) plus one member's share of care for one scenario: having_baby and having_diabetes use the plan's SBC coverage examples; low, medium and high are a documented heuristic capped at the plan's out-of-pocket maximum. ${PRO}`,
    params: { scenario: { description: 'Care used in the year: low, medium or high use (heuristic), or an SBC coverage example' } },
    summarize: (b) => {
      const br = b.breakdown as Body;
      return `${String(b.plan_name)}, scenario ${String(b.scenario)}: about ${money(b.estimated_annual_cost)} a year (${money(br.annual_premium)} premiums + ${money(br.estimated_out_of_pocket)} out of pocket)${b.sbc_data_available === true ? ', from the plan’s SBC example' : ', modeled'}.${modeledNote(b)}`;
    },
  }),
  defineTool(estimateAptcOperation, {
    title: 'Estimate the premium tax credit',
    description: `Monthly advance premium tax credit for a household: FPL of the plan year (Alaska and Hawaii have their own), applicable percentage, second-lowest-cost silver benchmark with only the three oldest children under 21 rated; also the cost-sharing-reduction level the income qualifies for and the household's lowest-cost silver and bronze plans. ${PRO}`,
    params: {
      household_income: { description: 'Annual household income, dollars' },
      household_size: { description: 'People in the tax household, for the poverty-level percentage' },
      ages: { description: 'Ages of the members seeking coverage' },
    },
    summarize: (b) => {
      const h = b.household as Body;
      const line =
        b.benchmark_source === null
          ? `${String(b.benchmark_plan_description)} (${num(h.fpl_percentage)} % FPL).`
          : b.eligible === true
            ? `Estimated credit ${money(b.aptc_amount)}/month: benchmark ${money(b.benchmark_premium)}/month${typeof b.benchmark_ehb_premium === 'number' ? ` (${money(b.benchmark_ehb_premium)} of it for essential health benefits, which the credit counts)` : ''} minus the expected contribution ${money(h.expected_monthly_contribution)}/month (${num(h.fpl_percentage)} % FPL, band ${String(h.fpl_band)}, applicable ${num(h.applicable_percentage)} %).`
            : `Not eligible for the premium tax credit at ${num(h.fpl_percentage)} % FPL.`;
      const csr =
        typeof b.csr_level === 'number'
          ? ` Qualifies for the ${b.csr_level} % cost-sharing silver variant (${String(b.csr_band)} FPL).`
          : '';
      const years = (b.plan_data_years as number[] | undefined) ?? [];
      const elsewhere =
        b.benchmark_source === 'benchmark_only' && years.length > 0 ? ` Plan data for this state is loaded for ${years.join(', ')}.` : '';
      return `${line}${csr}${b.benchmark_source === 'benchmark_only' ? ` ${String(b.benchmark_plan_description)}; the credit is an approximation (${String(b.data_freshness)}).${elsewhere}` : modeledNote(b)}`;
    },
  }),
  defineTool(checkIchraAffordabilityOperation, {
    title: 'Test an ICHRA offer for affordability',
    description: `Whether an individual-coverage HRA is affordable for an employee: the self-only lowest-cost silver plan at the employee's age and ZIP (residence or primary worksite), less the monthly HRA, against the plan year's required contribution percentage of household income. Gives the plan, the threshold and the smallest affordable HRA. ${PRO}`,
    params: {
      age: { description: 'The employee’s age' },
      household_income: { description: 'Annual household income of the employee, dollars' },
      hra_monthly: { description: 'Monthly self-only HRA amount offered, dollars' },
    },
    summarize: (b) =>
      `${b.affordable === true ? 'Affordable' : 'Not affordable'}: ${String(b.lcsp_plan_name)} costs ${money(b.lcsp_premium)}/month at age ${String(b.age)}; after the ${money(b.hra_monthly)} HRA the employee pays ${money(b.employee_cost)}, against a threshold of ${money(b.affordability_threshold)} (${num(b.required_contribution_percentage)} % of income ÷ 12). Smallest affordable HRA: ${money(b.min_affordable_hra)}/month.${modeledNote(b)}`,
  }),
  defineTool(getPlanCrosswalkOperation, {
    title: 'Plan crosswalk',
    description: `Where a plan's enrollees are re-enrolled the following year (CMS Plan ID Crosswalk). Source years and states are those with crosswalk data loaded. ${PRO}`,
    params: {
      plan_id: { description: '14-character plan ID without variant' },
      // The source year is required, so no default to state; the range is the REST one.
      year: {
        description: `Source plan year (${YEAR_RANGE_TEXT}), mapped to year + 1: 2025 gives the 2025 → 2026 crosswalk. Years whose crosswalk data is not loaded are answered with an error`,
      },
      state: { description: 'Two-letter state of the plan (a HealthCare.gov state)' },
    },
    summarize: (b) => {
      const src = b.source_plan as Body;
      const tgt = b.target_plan as Body | null;
      return tgt === null
        ? `${String(src.plan_id)} is discontinued with no replacement (${String(b.crosswalk_reason)}).`
        : `${String(src.plan_id)} (${String(src.year)}) maps to ${String(tgt.plan_id)} (${String(tgt.year)}): ${String(b.crosswalk_reason)}.`;
    },
  }),
  defineTool(searchDentalPlansOperation, {
    title: 'Search dental plans',
    description:
      'Stand-alone dental plans (individual market) offered at a ZIP code, apart from medical plans, with the monthly premium for one age where dental rates are loaded (the 2024 CT, RI and VT files). Elsewhere premium is null and premium_note says why: dental premiums are never modeled.',
    params: {
      age: { description: 'Age of the person to cover; 0–14 use the child rate, 64 and over the age-64 rate' },
      page: { description: 'Page number, from 1' },
      per_page: { description: 'Plans per page, 1–100 (default 25)' },
    },
    summarize: (b) => {
      const plans = ((b._embedded as { dental_plans?: Body[] } | undefined)?.dental_plans ?? []) as Body[];
      const first = plans[0];
      const lead =
        first === undefined
          ? ''
          : ` First: ${String(first.name)} (${String(first.metal_level)})${first.premium === null ? '' : ` at ${money(first.premium)}/month`}.`;
      return `${num(b.total)} dental plans at ZIP ${String(b.zip)} (${String(b.county)}, ${String(b.state)}), plan year ${String(b.plan_year)}.${lead}${b.premium_note === null ? '' : ` ${String(b.premium_note)}.`}`;
    },
  }),
  defineTool(getDentalPlanDetailsOperation, {
    title: 'Dental plan details',
    description:
      'Record of a stand-alone dental plan: issuer, level (high or low), who may enrol, on or off exchange, pediatric dental share, in-network deductible and out-of-pocket maximum, documents, and whether the state’s dental rates are loaded.',
    params: {
      plan_id: {
        ...PLAN_ID,
        description: `Dental plan variant ID (14-character ID + -NN); a bare 14-character ID means its -${DEFAULT_VARIANT} variant, else -00`,
      },
    },
    summarize: (b) =>
      `${String(b.name)} (${String(b.id)}), ${String(b.metal_level)} ${String(b.plan_type)} dental plan by ${String(b.issuer)} in ${String(b.state)}, plan year ${String(b.plan_year)}${b.premiums_loaded === true ? '' : '; no dental rates loaded'}.`,
  }),
  defineTool(lookupZipOperation, {
    title: 'Look up a ZIP code',
    description: 'State, county and rating area of a ZIP code; every location when it spans several, primary first.',
    summarize: (b) => {
      const locs = b.locations as Body[];
      return `ZIP ${String(b.zip)}: ${locs.map((l) => `${String(l.county_name)}, ${String(l.state)} (${String(l.rating_area_id)})`).join('; ')}.${b.plans_available === false ? ` ${String(b.note)}` : ''}`;
    },
  }),
  defineTool(listIssuersOperation, {
    title: 'List issuers of a state',
    description: 'Insurance companies with plans in a state and year, with their plan counts.',
    params: { state: { description: 'Two-letter state code, e.g. TX' } },
    summarize: (b) => `${num(b.total)} issuers in ${String(b.state)} for ${String(b.year)}.`,
  }),
  defineTool(listPlanYearsOperation, {
    title: 'List plan years',
    description: 'Plan years with data, the states each covers and whether their premiums are real or modeled, and the default year.',
    summarize: (b) => {
      const years = (b.years as { year: number; states: string[]; real_premium_states: string[] }[]).map(
        (y) =>
          `${y.year} (${y.states.length} state${y.states.length === 1 ? '' : 's'}, premiums ${y.real_premium_states.length === y.states.length ? 'real' : y.real_premium_states.length === 0 ? 'modeled' : `real in ${y.real_premium_states.join(', ')}, modeled elsewhere`})`,
      );
      return `Plan years ${years.join('; ')}; default ${String(b.current_year)}.`;
    },
  }),
];

export const TOOL_BY_NAME: ReadonlyMap<string, ToolDefinition> = new Map(TOOLS.map((t) => [t.name, t]));

export type ToolArgsResult =
  | { ok: true; query: Array<[string, string]>; pathParams: Record<string, string>; restPath: string }
  | { ok: false; errors: Array<{ field: string; message: string }> };

/**
 * Turns tool arguments into the operation's parameters: arrays become comma-separated lists, numbers
 * and booleans their text, so the REST validation applies unchanged. Values of other shapes are
 * refused here with the field named.
 */
export function toolArgsToRequest(tool: ToolDefinition, args: Record<string, unknown>): ToolArgsResult {
  const errors: Array<{ field: string; message: string }> = [];
  const query: Array<[string, string]> = [];
  const pathParams: Record<string, string> = {};
  const known = new Set(Object.keys((tool.inputSchema.properties ?? {}) as object));
  for (const [name, value] of Object.entries(args)) {
    if (!known.has(name)) {
      errors.push({ field: name, message: unknownNameMessage(name, [...known], 'this tool takes no arguments') });
      continue;
    }
    const param = tool.rename?.[name] ?? name;
    let text: string;
    if (Array.isArray(value) && value.length === 0) {
      // Sent as REST text, an empty list is an absent one ("Missing required parameter"): say what it is.
      const min = (((tool.inputSchema.properties ?? {}) as Record<string, JsonSchema>)[name]?.minItems as number | undefined) ?? 1;
      errors.push({ field: name, message: `Array must contain at least ${min} element(s)` });
      continue;
    } else if (Array.isArray(value)) {
      if (!value.every((v) => typeof v === 'string' || typeof v === 'number')) {
        errors.push({ field: name, message: 'Expected an array of strings or numbers' });
        continue;
      }
      const bad = value.findIndex((v) => typeof v === 'number' && !Number.isFinite(v));
      if (bad >= 0) {
        errors.push({ field: `${name}.${bad}`, message: 'Number must be finite' });
        continue;
      }
      text = value.map((v) => (typeof v === 'number' ? numberText(v) : v)).join(',');
    } else if (typeof value === 'number') {
      // JSON has no Infinity, but 1e400 parses to it: refuse it here, where its origin is known.
      if (!Number.isFinite(value)) {
        errors.push({ field: name, message: 'Number must be finite' });
        continue;
      }
      text = numberText(value);
    } else if (typeof value === 'string' || typeof value === 'boolean') {
      text = String(value);
    } else if (value === null || value === undefined) {
      continue;
    } else {
      errors.push({
        field: name,
        message: `Expected ${String(((tool.inputSchema.properties ?? {}) as Record<string, JsonSchema>)[name]?.type ?? 'a value')}, received object`,
      });
      continue;
    }
    if (tool.operation.pathParams.includes(param)) pathParams[param] = text;
    else query.push([param, text]);
  }
  if (errors.length > 0) return { ok: false, errors };
  // A missing path argument keeps its template name, so the problem's instance stays a readable path.
  const restPath = tool.operation.path.replace(/\{(\w+)\}/g, (whole, p: string) =>
    pathParams[p] === undefined ? whole : encodeURIComponent(pathParams[p]),
  );
  return { ok: true, query, pathParams, restPath };
}

/**
 * A finite number as plain decimal text. String() writes 1e21 and 1e-7 in exponent form, which the
 * REST number shapes refuse as "received string"; plain digits get the range message they deserve.
 */
function numberText(v: number): string {
  const s = String(v);
  if (!s.includes('e')) return s;
  if (Number.isInteger(v)) return BigInt(v).toString();
  return v.toFixed(100).replace(/0+$/, '');
}

/** REST field names back to the tool's argument names, for error documents. */
export function toolField(tool: ToolDefinition, field: string): string {
  const [head, ...rest] = field.split('.');
  const back = Object.entries(tool.rename ?? {}).find(([, rest2]) => rest2 === head)?.[0];
  return back === undefined ? field : [back, ...rest].join('.');
}

/** The operation's alternative pairs (`age` or `ages`) in the tool's argument names. */
export function toolAlternatives(tool: ToolDefinition): Alternatives {
  return (tool.operation.query.spec.alternatives ?? []).map(([a, b]) => [toolField(tool, a), toolField(tool, b)] as const);
}
