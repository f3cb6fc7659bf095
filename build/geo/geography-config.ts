/**
 * @module The geography rules of data/geo/geography.json the readers take (states and counties rated by
 * 3-digit ZIP, county aliases and overrides, which jurisdictions exist): each value with why it is so.
 */

export interface GeographyConfig {
  readonly zip3_states: { readonly value: readonly string[] };
  readonly zip3_counties: { readonly value: Readonly<Record<string, string>> };
  readonly county_table_2014_states: { readonly value: readonly string[] };
  readonly county_aliases: { readonly value: Readonly<Record<string, { key: string; why: string }>> };
  readonly county_areas: { readonly value: Readonly<Record<string, { area: number; why: string }>> };
  readonly jurisdictions: { readonly value: readonly string[] };
  readonly state_exchange_states: { readonly value: readonly string[] };
}
