/**
 * The NL GOV profile's full example event, which the Edukoppeling profile takes over (rule 3, EDU-3):
 * "Event with an attribute 'geheimnummer' having a null value and a 'data' attribute with a JSON
 * value" — the Guidelines for NL-GOV profile CloudEvents 1.0, §2.3 (../shared/seeds/000_…, and the
 * profile's earlier draft, 004_…). Text as printed there, so "unchanged" can be checked byte for byte.
 */
export const NL_GOV_EXAMPLE_EVENT = `{
  "specversion": "1.0",
  "type": "nl.overheid.zaken.zaakstatus-gewijzigd",
  "source": "urn:nld:oin:00000001823288444000:systeem:BRP-component",
  "subject": "123456789",
  "id": "f3dce042-cd6e-4977-844d-05be8dce7cea",
  "time": "2021-12-10T17:31:00Z",
  "nlbrpnationaliteit": "0083",
  "geheimnummer": null,
  "dataref": "https://gemeenteX/api/persoon/123456789",
  "sequence": "1234",
  "sequencetype": "integer",
  "datacontenttype": "application/json",
  "data": {
    "bsn": "1234567789",
    "naam": "Jan Jansen",
    "gecontroleerd": "ja"
  }
}`;
