import { createPendingConsentStore, openStateDb, toAsyncPendingConsentStore } from "../../src/index.js";
import { describePendingConsentStore } from "./pending-store.case.js";

describePendingConsentStore("sqlite", () =>
  Promise.resolve(toAsyncPendingConsentStore(createPendingConsentStore(openStateDb(":memory:")))),
);
