import type { EntityType } from "../../config/pii-entities.ts";
import type { Recognizer } from "../recognizer.ts";
import { creditCardRecognizer } from "./credit-card.ts";
import { cryptoRecognizer } from "./crypto.ts";
import { dateTimeRecognizer } from "./date-time.ts";
import { emailAddressRecognizer } from "./email-address.ts";
import { ibanCodeRecognizer } from "./iban-code.ts";
import { ipAddressRecognizer } from "./ip-address.ts";
import { medicalLicenseRecognizer } from "./medical-license.ts";
import { phoneNumberRecognizer } from "./phone-number.ts";
import { ukNhsRecognizer } from "./uk-nhs.ts";
import { urlRecognizer } from "./url.ts";
import { usBankNumberRecognizer } from "./us-bank-number.ts";
import { usDriverLicenseRecognizer } from "./us-driver-license.ts";
import { usItinRecognizer } from "./us-itin.ts";
import { usPassportRecognizer } from "./us-passport.ts";
import { usSsnRecognizer } from "./us-ssn.ts";

/** Every built-in recognizer by the entity it finds; the type makes the list complete. */
export const RECOGNIZERS: Readonly<Record<EntityType, Recognizer>> = {
  EMAIL_ADDRESS: emailAddressRecognizer,
  CREDIT_CARD: creditCardRecognizer,
  US_SSN: usSsnRecognizer,
  PHONE_NUMBER: phoneNumberRecognizer,
  IP_ADDRESS: ipAddressRecognizer,
  URL: urlRecognizer,
  IBAN_CODE: ibanCodeRecognizer,
  US_BANK_NUMBER: usBankNumberRecognizer,
  US_PASSPORT: usPassportRecognizer,
  US_DRIVER_LICENSE: usDriverLicenseRecognizer,
  US_ITIN: usItinRecognizer,
  CRYPTO: cryptoRecognizer,
  DATE_TIME: dateTimeRecognizer,
  MEDICAL_LICENSE: medicalLicenseRecognizer,
  UK_NHS: ukNhsRecognizer,
};
