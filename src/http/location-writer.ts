/**
 * @module The location members every priced page carries (location.ts locationFields), written as
 * bytes: `"zip":…,"state":…,"county":…,"county_fips":…,"rating_area":"Rating Area N","multiple_areas":…`.
 * Search writes them at the top level, the APTC estimate inside `location`.
 */
import type { ResolvedLocation } from '../operations/location.ts';
import { ByteWriter, latin1Bytes } from '../encoding/byte-writer.ts';

const T = {
  zip: latin1Bytes('"zip":'),
  state: latin1Bytes(',"state":'),
  county: latin1Bytes(',"county":'),
  countyFips: latin1Bytes(',"county_fips":'),
  /** data-registry.ts ratingAreaLabel's text up to the number, opening quote included. */
  ratingArea: latin1Bytes(',"rating_area":"Rating Area '),
  multipleAreas: latin1Bytes(',"multiple_areas":'),
  true: latin1Bytes('true'),
  false: latin1Bytes('false'),
} as const;

/**
 * The members' bytes by resolved location: every request placed at one location shares one
 * ResolvedLocation (location.ts), so its members are written once and copied after. Lazily, for the
 * locations asked about (the national build has ~40,000; ~150 bytes each).
 */
const WRITTEN = new WeakMap<ResolvedLocation, Buffer>();
const SCRATCH = new ByteWriter(1024);

export function writeLocationMembers(w: ByteWriter, where: ResolvedLocation): void {
  let bytes = WRITTEN.get(where);
  if (bytes === undefined) {
    SCRATCH.reset();
    writeMembers(SCRATCH, where);
    WRITTEN.set(where, (bytes = Buffer.from(SCRATCH.view())));
  }
  w.bytes(bytes);
}

function writeMembers(w: ByteWriter, where: ResolvedLocation): void {
  const loc = where.loc;
  w.bytes(T.zip);
  w.jsonString(loc.zip);
  w.bytes(T.state);
  w.jsonString(loc.state);
  w.bytes(T.county);
  w.jsonString(loc.countyName);
  w.bytes(T.countyFips);
  w.jsonString(loc.countyFips);
  w.bytes(T.ratingArea);
  w.uint(loc.ratingArea);
  w.byte(34); // "
  w.bytes(T.multipleAreas);
  w.bytes(where.multipleAreas ? T.true : T.false);
}
