/**
 * @module Plans and service areas of every source of a plan year, checked against each other and merged.
 *
 * A state must come from exactly one source: two sources pricing the same state would give two
 * answers to one question, so a clash stops the build and names both files. A source whose Service
 * Areas file has no rows at all (Vermont's SBE file has only a header) has its plans offered statewide,
 * with a warning: the file says nothing, and for a one-rating-area state whose exchange is statewide
 * that is the reading that serves its residents (README, "State-based exchanges").
 */
import type { DentalPlanRecord } from '../src/engine/dental-record.ts';
import type { PlanVariantRecord } from '../src/engine/plan-record.ts';
import { openBundleFile, type PlanBundle } from './plan-sources.ts';
import type { ProgressSink } from './progress.ts';
import { loadPlanAttributes } from './puf/plan-attributes.ts';
import { loadServiceAreas, serviceAreaKey, type ServiceArea } from './puf/service-area.ts';
import { DIAGNOSTIC_CODES, type DiagnosticSink, FatalBuildError } from './read/diagnostics.ts';

/** Where one state's plan data came from. */
export interface StateSource {
  readonly bundle: PlanBundle;
  /** Newest ImportDate of the state's plans. */
  newestImport: string | null;
}

export interface PlanSourcesData {
  readonly variants: Map<string, PlanVariantRecord>;
  readonly serviceAreas: Map<string, ServiceArea>;
  /** State → its source. */
  readonly states: Map<string, StateSource>;
  /** Newest ImportDate over every Plans file. */
  readonly newestImport: string | null;
  /** States whose plans were taken as statewide because their Service Areas file has no rows. */
  readonly statewideByDecision: string[];
  /** Individual stand-alone dental plan variants, kept apart from `variants`. */
  readonly dental: Map<string, DentalPlanRecord>;
  readonly dentalServiceAreas: Map<string, ServiceArea>;
  /** State → the source of its dental plans (its Rates file prices them, when it has one). */
  readonly dentalStates: Map<string, PlanBundle>;
}

export async function loadPlanSources(
  bundles: readonly PlanBundle[],
  year: number,
  sink: DiagnosticSink,
  progress: ProgressSink,
): Promise<PlanSourcesData> {
  const out: PlanSourcesData = {
    variants: new Map(),
    serviceAreas: new Map(),
    states: new Map(),
    newestImport: null,
    statewideByDecision: [],
    dental: new Map(),
    dentalServiceAreas: new Map(),
    dentalStates: new Map(),
  };
  let newest: string | null = null;
  for (const bundle of bundles) {
    const pa = await loadPlanAttributes(await openBundleFile(bundle.planAttributes, 'plan_attributes'), year, sink, progress);
    claimStates(out.states, bundle, pa.variants.values());
    for (const [id, v] of pa.variants) out.variants.set(id, v);
    if (pa.newestImport !== null && (newest === null || pa.newestImport > newest)) newest = pa.newestImport;
    for (const [id, d] of pa.dental) {
      out.dental.set(id, d);
      if (!out.dentalStates.has(d.state)) out.dentalStates.set(d.state, bundle);
    }
    const saTable = await openBundleFile(bundle.serviceArea, 'service_area');
    const dentalAreas = new Map<string, ServiceArea>();
    const areas = await loadServiceAreas(saTable, year, sink, progress, dentalAreas);
    if ((sink.files.get(saTable.file)?.rowsRead ?? 0) === 0 && pa.variants.size > 0) {
      statewide(areas, pa.variants.values(), saTable.file, sink, out.statewideByDecision);
      // The same reading for the state's dental plans: the decision (and its one warning) is the state's.
      statewide(dentalAreas, pa.dental.values(), saTable.file, null, []);
    }
    for (const [k, sa] of areas) out.serviceAreas.set(k, sa);
    for (const [k, sa] of dentalAreas) out.dentalServiceAreas.set(k, sa);
  }
  return { ...out, newestImport: newest };
}

/** Records the states of a bundle's plans; a state another bundle already gave is a clash. */
function claimStates(states: Map<string, StateSource>, bundle: PlanBundle, variants: Iterable<PlanVariantRecord>): void {
  for (const v of variants) {
    const held = states.get(v.state);
    if (held === undefined) {
      states.set(v.state, { bundle, newestImport: v.import_date });
      continue;
    }
    if (held.bundle !== bundle) {
      throw new FatalBuildError(
        DIAGNOSTIC_CODES.sourceClash,
        `${bundle.planAttributes.input.file}: plans of ${v.state}, which ${held.bundle.planAttributes.input.file} already provides; a state must come from exactly one source (remove it from one of ${held.bundle.planAttributes.input.path} and ${bundle.planAttributes.input.path})`,
      );
    }
    if (v.import_date !== null && (held.newestImport === null || v.import_date > held.newestImport)) held.newestImport = v.import_date;
  }
}

/** Every service area the plans name, whole-state: the decision for a Service Areas file without rows. */
function statewide(
  areas: Map<string, ServiceArea>,
  variants: Iterable<Pick<PlanVariantRecord, 'issuer_id' | 'service_area_id' | 'state'>>,
  file: string,
  sink: DiagnosticSink | null,
  decided: string[],
): void {
  const states = new Set<string>();
  for (const v of variants) {
    const key = serviceAreaKey(v.issuer_id, v.service_area_id);
    if (!areas.has(key)) {
      areas.set(key, {
        issuerId: v.issuer_id,
        serviceAreaId: v.service_area_id,
        state: v.state,
        coverEntireState: true,
        counties: new Map(),
      });
    }
    states.add(v.state);
  }
  if (sink === null) return;
  for (const state of [...states].sort()) {
    decided.push(state);
    sink.warn({
      file,
      line: 1,
      column: 0,
      value: state,
      code: DIAGNOSTIC_CODES.geography,
      reason: 'the Service Areas file has a header and no rows: every plan of the state is taken as offered statewide',
    });
  }
}
