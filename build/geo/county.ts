/** @module A county (or county equivalent) of the Census county list, as the geography reads it. */

export interface County {
  readonly fips: string;
  readonly state: string;
  readonly name: string;
}
