/** The ZGW adapter's kanalen and abonnementen in memory (issue 34), for unit tests without emulators. */
import {
  KanaalNameTakenError,
  type AbonnementRecord,
  type KanaalRecord,
  type ZgwStore,
} from '../../../functions/core/zgw/ports.js';

export class MemoryZgwStore implements ZgwStore {
  readonly kanalen = new Map<string, KanaalRecord>();
  readonly abonnementen = new Map<string, AbonnementRecord>();

  listKanalen() {
    return Promise.resolve([...this.kanalen.values()]);
  }
  readKanaal(uuid: string) {
    return Promise.resolve(this.kanalen.get(uuid));
  }
  kanaalNamed(naam: string) {
    return Promise.resolve([...this.kanalen.values()].find((kanaal) => kanaal.naam === naam));
  }
  createKanaal(kanaal: KanaalRecord) {
    if ([...this.kanalen.values()].some((other) => other.naam === kanaal.naam))
      return Promise.reject(new KanaalNameTakenError(kanaal.naam));
    this.kanalen.set(kanaal.uuid, kanaal);
    return Promise.resolve();
  }
  replaceKanaal(kanaal: KanaalRecord) {
    this.kanalen.set(kanaal.uuid, kanaal);
    return Promise.resolve();
  }
  listAbonnementen() {
    return Promise.resolve([...this.abonnementen.values()]);
  }
  readAbonnement(uuid: string) {
    return Promise.resolve(this.abonnementen.get(uuid));
  }
  putAbonnement(abonnement: AbonnementRecord) {
    this.abonnementen.set(abonnement.uuid, abonnement);
    return Promise.resolve();
  }
  deleteAbonnement(uuid: string) {
    return Promise.resolve(this.abonnementen.delete(uuid));
  }
}
