/**
 * Every request body with a schema of its own (core/http/json-body.ts), by the operation (or the
 * component schema) the API description shows it under. test/unit/api-description/request-bodies.test.ts
 * checks each against the served document, so a limit the code enforces cannot be missing there.
 */
import { UPLOAD_BODY } from '../claim-check/uploads.js';
import { REDRIVE_BODY } from '../delivery/redrive.js';
import { FILTER_TEST_BODY } from '../filter-test/filter-test-request.js';
import {
  BINDING_BODY,
  CONTACT_POINT,
  CONTRACT_PATCH_BODY,
  PUBLISH_BODY,
  VERSION_PATCH_BODY,
} from '../contracts/contract-bodies.js';
import type { RequestBody } from '../http/json-body.js';
import { CLIENT_INPUT_BODY } from '../partners/partner-input.js';
import { RECEIVE_BODY, SETTLE_BODIES } from '../pull/pull-requests.js';
import { REPLAY_BODY } from '../replay/replay-requests.js';
import { ERASURE_BODY } from '../erasure/erasure-request.js';
import { ATTRIBUTE_MATCH_BODY, FILTER } from '../subscriptions/filter-schema.js';
import { SINK_CREDENTIAL } from '../subscriptions/sink-credential-input.js';
import { SUBSCRIPTION_BODY } from '../subscriptions/subscription-body.js';

/** The `application/json` request body of each operation, by operationId. */
export const operationBodies: Readonly<Record<string, RequestBody>> = {
  receiveEvents: RECEIVE_BODY,
  acknowledgeEvents: SETTLE_BODIES.acknowledge,
  releaseEvents: SETTLE_BODIES.release,
  renewEventLocks: SETTLE_BODIES['renew-lock'],
  rejectEvents: SETTLE_BODIES.reject,
  redriveDeadLetters: REDRIVE_BODY,
  startReplay: REPLAY_BODY,
  testFilters: FILTER_TEST_BODY,
  createUpload: UPLOAD_BODY,
  putClient: CLIENT_INPUT_BODY,
  startErasure: ERASURE_BODY,
  createSubscription: SUBSCRIPTION_BODY,
  publishContractVersion: PUBLISH_BODY,
  changeContract: CONTRACT_PATCH_BODY,
  changeContractVersion: VERSION_PATCH_BODY,
  bindContract: BINDING_BODY,
};

/** Bodies, or members of bodies, the document names as a component schema. */
export const componentBodies: Readonly<Record<string, RequestBody>> = {
  UploadRequest: UPLOAD_BODY,
  SinkCredential: SINK_CREDENTIAL,
  ClientInput: CLIENT_INPUT_BODY,
  SubscriptionRequest: SUBSCRIPTION_BODY,
  Filter: FILTER,
  AttributeMatch: ATTRIBUTE_MATCH_BODY,
  ContactPoint: CONTACT_POINT,
  ContractVersionInput: PUBLISH_BODY,
  ContractPatch: CONTRACT_PATCH_BODY,
  ContractVersionPatch: VERSION_PATCH_BODY,
  ContractBindingInput: BINDING_BODY,
};
