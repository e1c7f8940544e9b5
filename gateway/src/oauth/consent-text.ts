// The consent page's words, one catalog per language, chosen by the browser's Accept-Language. Placeholders in braces
// ({client}) are filled by the page, which escapes every value; a catalog holds no markup. A new language is a new
// entry here with every key of English.

export interface ConsentText {
  lang: string;
  title: string;
  /** {client}, {user} */
  asks: string;
  /** {client} */
  clientId: string;
  /** {destination} */
  sendsTo: string;
  sendsToApp: string;
  onResources: string;
  wholeGateway: string;
  permissions: string;
  scopes: Record<string, string>;
  /** {host} */
  plainHttpWarning: string;
  /** {client}, {known}, {destination} */
  looksLikeWarning: string;
  allow: string;
  deny: string;
}

const EN: ConsentText = {
  lang: "en",
  title: "Authorize {client}",
  asks: "The application {client} asks to act as {user}.",
  clientId: "Client id: {client}",
  sendsTo: "If you allow, your authorization is sent to {destination}",
  sendsToApp:
    "If you allow, your authorization is sent to the application on this device that opens {destination} links",
  onResources: "It may use:",
  wholeGateway: "every MCP server of this gateway you are allowed to use",
  permissions: "With these permissions:",
  scopes: {
    mcp: "use MCP servers of this gateway as you (each server's access rules still apply)",
    openid: "learn your user id",
  },
  plainHttpWarning:
    "Warning: {host} receives your authorization over plain http, which anyone on the network between can read.",
  looksLikeWarning:
    "Warning: this application calls itself {client}, which looks like {known}, but it sends your authorization to {destination}, where {known} does not receive it. Unless you are sure, choose Deny.",
  allow: "Allow",
  deny: "Deny",
};

const DE: ConsentText = {
  lang: "de",
  title: "{client} autorisieren",
  asks: "Die Anwendung {client} möchte in Ihrem Namen als {user} handeln.",
  clientId: "Client-ID: {client}",
  sendsTo: "Wenn Sie zustimmen, geht Ihre Autorisierung an {destination}",
  sendsToApp:
    "Wenn Sie zustimmen, geht Ihre Autorisierung an die Anwendung auf diesem Gerät, die {destination}-Links öffnet",
  onResources: "Sie darf verwenden:",
  wholeGateway: "alle MCP-Server dieses Gateways, die Sie verwenden dürfen",
  permissions: "Mit diesen Berechtigungen:",
  scopes: {
    mcp: "MCP-Server dieses Gateways in Ihrem Namen verwenden (die Zugriffsregeln jedes Servers gelten weiter)",
    openid: "Ihre Benutzerkennung erfahren",
  },
  plainHttpWarning:
    "Achtung: {host} erhält Ihre Autorisierung über unverschlüsseltes http, das jeder im Netz dazwischen mitlesen kann.",
  looksLikeWarning:
    "Achtung: Diese Anwendung nennt sich {client}, was wie {known} aussieht, schickt Ihre Autorisierung aber an {destination}, wo {known} sie nicht empfängt. Wenn Sie nicht sicher sind, wählen Sie Ablehnen.",
  allow: "Zulassen",
  deny: "Ablehnen",
};

const CATALOGS: Readonly<Record<string, ConsentText>> = { en: EN, de: DE };

/** The catalog for the first language of Accept-Language (by q) that has one; English otherwise. */
export function consentTextFor(acceptLanguage: string | undefined): ConsentText {
  const ranked = (acceptLanguage ?? "")
    .split(",")
    .slice(0, 20)
    .map((part, index) => {
      const [tag = "", ...params] = part.trim().split(";");
      const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
      return { language: tag.toLowerCase().split("-")[0] ?? "", q: q === undefined ? 1 : Number(q), index };
    })
    .filter((entry) => entry.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const { language } of ranked) {
    const catalog = CATALOGS[language];
    if (catalog !== undefined) return catalog;
  }
  return EN;
}
