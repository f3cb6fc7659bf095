/**
 * @module The issuer of a plan as answers show it: its name, or null with the reason when the source
 * file leaves the name blank. CMS's state-based-exchange Plans files of CT, RI and VT (PY2024) carry the
 * HIOS issuer ID on every row but an empty `ISSUER NAME` and empty document URLs: an empty string would
 * read as a name, and a name from elsewhere would need a source to cite, which the loaded files lack.
 */
import type { DentalPlanRecord } from '../engine/dental-record.ts';
import type { PlanVariantRecord } from '../engine/plan-record.ts';

export const ISSUER_NOTE = {
  type: ['string', 'null'],
  description:
    'Why issuer is null: the plan’s source file leaves the issuer name blank (CMS state-based-exchange Plans files, e.g. CT, RI and VT PY2024); it names the HIOS issuer ID the file does give. Null when issuer is given',
} as const;

/** `issuer` and `issuer_note` of a plan, medical or dental. */
export function issuerFields(rec: {
  readonly issuer: string;
  readonly issuer_id: string;
  readonly links: PlanVariantRecord['links'] | DentalPlanRecord['links'];
}): {
  issuer: string | null;
  issuer_note: string | null;
} {
  if (rec.issuer.trim() !== '') return { issuer: rec.issuer, issuer_note: null };
  const l = rec.links;
  const noDocuments = l.benefits_summary === null && l.brochure === null && (!('formulary' in l) || l.formulary === null);
  return {
    issuer: null,
    issuer_note: `The source Plans file does not publish the issuer name (HIOS issuer ID ${rec.issuer_id})${noDocuments ? ', nor the plan’s document URLs' : ''}`,
  };
}
