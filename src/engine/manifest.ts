/**
 * @module `manifest.json` of a build: what went in, what came out, and how trustworthy the premiums are.
 * The API copies `data_source` and `data_freshness` into every response that carries plan data.
 */

export interface ManifestInput {
  readonly name: string;
  readonly title: string;
  readonly path: string;
  readonly origin: 'command-line' | 'mirror' | 'cache' | 'download';
  readonly url: string | null;
  readonly sha256: string;
  readonly bytes: number;
  readonly checksum_verified: boolean | null;
  readonly rows_read: number | null;
  readonly rows_rejected: number | null;
  readonly rows_ignored: number | null;
}

/** One output file of a build as the compiler wrote it. */
export interface BuildFile {
  readonly name: string;
  readonly bytes: number;
  readonly sha256: string;
}

export interface StateCounts {
  /** Individual medical standard component ids. */
  plans: number;
  variants: number;
  issuers: number;
  zips: number;
  counties: number;
  rating_areas: number;
  /** Plan × rating area pairs with premiums. */
  priced_pairs: number;
}

/**
 * Where a state's premiums came from: its own provenance, or in builds compiled before provenance was
 * per state, the build's (true of every state then).
 */
export function statePremiums(m: BuildManifest, state: string): 'rate_puf' | 'modeled' {
  return m.provenance?.[state]?.premiums ?? m.premiums.source;
}

export type PremiumProvenance =
  | {
      readonly source: 'modeled';
      readonly description: string;
      readonly benchmark_input: string;
      readonly metal_factors: Readonly<Record<string, number>>;
      readonly variation: number;
      readonly rules_year: number;
    }
  | { readonly source: 'rate_puf'; readonly source_names: readonly string[] };

/** Where one state's plan data and premiums came from (a year may mix real and modeled states). */
export interface StateProvenance {
  /** The source of the state's plans: `federal` (Exchange PUFs) or a state-exchange bundle such as `sbe-CT`. */
  readonly source: string;
  /** The input names and files of the source, as listed under `inputs`. */
  readonly plans_input: string;
  readonly plans_file: string;
  readonly service_area_file: string;
  /** Null: no Rates file, premiums modeled. */
  readonly rates_file: string | null;
  readonly premiums: 'rate_puf' | 'modeled';
  /** What responses about the state say in `data_source` and `data_freshness`. */
  readonly data_source: string;
  readonly data_freshness: string;
}

export interface BuildManifest {
  readonly format_version: number;
  readonly compiler_version: string;
  readonly build_hash: string;
  readonly year: number;
  readonly built_at: string;
  /** `puf_data`, or `puf_data+modeled_premiums` when premiums were modeled. */
  readonly data_source: string;
  readonly data_freshness: string;
  readonly premiums: PremiumProvenance;
  readonly rules_year: number;
  readonly inputs: readonly ManifestInput[];
  readonly counts: {
    readonly plan_variants: number;
    readonly plans: number;
    readonly offered_plans: number;
    readonly issuers: number;
    readonly states_with_plans: number;
    readonly zips: number;
    readonly locations: number;
    readonly counties: number;
    readonly rating_areas: number;
    readonly premium_pairs: number;
    readonly rate_rows: number;
    readonly plan_lists: number;
    readonly plan_list_entries: number;
  };
  readonly states: Readonly<Record<string, StateCounts>>;
  readonly crosswalk: {
    readonly source_year: number;
    readonly target_year: number;
    readonly rows: number;
    readonly plans: number;
    readonly states: readonly string[];
  } | null;
  readonly warnings: {
    readonly count: number;
    readonly rows_rejected: number;
    readonly kept: readonly string[];
    readonly truncated: ReadonlyArray<{ file: string; code: string; column: string; dropped: number }>;
  };
  readonly stages: ReadonlyArray<{ stage: string; rows: number; seconds: number; rowsPerSecond: number }>;
  /** Per state with plan data; absent in builds compiled before provenance was per state (read the build's labels). */
  readonly provenance?: Readonly<Record<string, StateProvenance>>;
  /**
   * The SLCSP benchmark table the build took (its input under `inputs`) and the newest effective date of
   * its values; absent in older builds.
   */
  readonly benchmarks?: { readonly input: string; readonly in_force: string };
  /** Service areas the files do not describe; absent in older builds. */
  readonly service_areas?: {
    /** States whose Service Areas file has no rows, whose plans are taken as statewide. */
    readonly statewide_by_decision: readonly string[];
    /** Plans whose service area no row describes: offered nowhere (each also a warning). */
    readonly plans_without_service_area: number;
  };
  /** Sizes of the output files by name (kept beside `outputs` for readers of format 1 manifests). */
  readonly files: Readonly<Record<string, number>>;
  /**
   * Every output file with its size and SHA-256, checked when a build is opened and by `hpd verify`
   * (src/engine/build-integrity.ts). Absent in builds of format 1, written before checksums existed.
   */
  readonly outputs?: readonly BuildFile[];
}
